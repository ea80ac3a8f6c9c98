// expect: 6:25: error: CloneType.I2I: enum CloneType has no member I2I
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        clone(CloneType.I2I, 32w5);
    }
}

SWITCH_MAIN
