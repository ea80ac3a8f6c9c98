// expect: 8:13: error: select: the keyset has 2 elements but 1 are matched
#include "skeleton.p4"

parser P2(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            (0x0800, 4): accept;
            default: reject;
        }
    }
}

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }

V1Switch(P2(), Vc(), ingress(), E(), Ck(), D()) main;
