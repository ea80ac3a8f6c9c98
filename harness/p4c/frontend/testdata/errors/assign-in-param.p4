// expect: 6:9: error: cannot assign to port: port is an 'in' parameter (read-only)
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action forward(in bit<9> port) {
        port = 1;
        sm.egress_spec = port;
    }
    apply {
        forward(2);
    }
}

SWITCH_MAIN
