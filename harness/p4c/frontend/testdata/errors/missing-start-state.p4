// expect: 4:1: error: parser P2 has no start state
#include "skeleton.p4"

parser P2(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state begin {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }

V1Switch(P2(), Vc(), ingress(), E(), Ck(), D()) main;
