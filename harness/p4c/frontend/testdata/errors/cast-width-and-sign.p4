// expect: 7:13: error: cannot cast bit<8> to int<16> in one step: change the width and the signedness in separate casts
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        int<16> x;
        x = (int<16>)hdr.ipv4.ttl;
    }
}

SWITCH_MAIN
