// expect: 7:9: error: set_port: expected 1 arguments, got 2
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_port(bit<9> port) { sm.egress_spec = port; }
    apply {
        set_port(1, 2);
    }
}

SWITCH_MAIN
