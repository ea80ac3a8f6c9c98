// expect: 8:9: error: cannot assign to CPU_PORT: CPU_PORT is a constant
#include "skeleton.p4"

const bit<9> CPU_PORT = 255;

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        CPU_PORT = 1;
    }
}

SWITCH_MAIN
