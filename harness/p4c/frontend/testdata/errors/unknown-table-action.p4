// expect: 8:21: error: forward: declaration not found
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_port(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = { hdr.ethernet.dstAddr : exact; }
        actions = { forward; set_port; }
    }
    apply { t.apply(); }
}

SWITCH_MAIN
