// expect: 13:13: error: switch: duplicate label set_port
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_port(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = { hdr.ethernet.dstAddr : exact; }
        actions = { set_port; NoAction; }
    }
    apply {
        switch (t.apply().action_run) {
            set_port: { meta.nhop = 1; }
            set_port: { meta.nhop = 2; }
        }
    }
}

SWITCH_MAIN
