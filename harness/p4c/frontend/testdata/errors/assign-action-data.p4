// expect: 6:9: error: cannot assign to port: port is a directionless parameter (read-only)
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action forward(bit<9> port) {
        port = port + 1;
        sm.egress_spec = port;
    }
    table t {
        key = { hdr.ethernet.dstAddr : exact; }
        actions = { forward; }
    }
    apply { t.apply(); }
}

SWITCH_MAIN
