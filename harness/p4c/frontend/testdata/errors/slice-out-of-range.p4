// expect: 6:41: error: slice [8:1] is out of range for bit<8> (bits 7..0, high bound first)
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.ipv4.ttl[7:0] = hdr.ipv4.ttl[8:1];
    }
}

SWITCH_MAIN
