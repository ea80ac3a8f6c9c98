// expect: 8:13: error: keyset values must be compile-time constants
#include "skeleton.p4"

parser P2(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            meta.nhop[15:0]: accept;
            default: reject;
        }
    }
}

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }

V1Switch(P2(), Vc(), ingress(), E(), Ck(), D()) main;
