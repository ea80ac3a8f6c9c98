// expect: 8:26: error: dstAdr: header ethernet_t has no field dstAdr
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_port(bit<9> port) { sm.egress_spec = port; }
    table mac {
        key = {
            hdr.ethernet.dstAdr : exact;
        }
        actions = { set_port; NoAction; }
        default_action = NoAction();
    }
    apply { mac.apply(); }
}

SWITCH_MAIN
