// expect: 6:42: error: +: cannot combine bit<8> and bit<16>; widths and signedness must match (add a cast)
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.ipv4.totalLen = hdr.ipv4.ttl + hdr.ipv4.totalLen;
    }
}

SWITCH_MAIN
