// expect: 6:24: error: hdr.ipv4.totalLen has type bit<16> but bit<8> is expected for hdr.ipv4.ttl; widths and signedness must match (add a cast)
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.ipv4.ttl = hdr.ipv4.totalLen;
    }
}

SWITCH_MAIN
