// expect: 8:9: error: register.read: expected 2 arguments, got 1
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(16) counts;
    apply {
        bit<32> n;
        counts.read(n);
        counts.write(0, n + 1);
    }
}

SWITCH_MAIN
