// expect: 8:21: error: register.read: the argument for out parameter result must be writable, but 32w5 is not a variable
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(16) counts;
    apply {
        // The result of read() must go to a variable.
        counts.read(32w5, 0);
    }
}

SWITCH_MAIN
