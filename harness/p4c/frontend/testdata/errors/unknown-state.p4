// expect: 7:20: error: parse_ipv6: no such parser state
#include "skeleton.p4"

parser P2(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition parse_ipv6;
    }
}

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }

V1Switch(P2(), Vc(), ingress(), E(), Ck(), D()) main;
