// expect: 10:26: error: table t: the default action drop is not in the actions list
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_port(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table t {
        key = { hdr.ethernet.dstAddr : exact; }
        actions = { set_port; }
        default_action = drop();
    }
    apply { t.apply(); }
}

SWITCH_MAIN
