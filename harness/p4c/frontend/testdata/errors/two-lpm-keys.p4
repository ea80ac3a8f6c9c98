// expect: 9:32: error: table routes: only one key may be matched with lpm (the first is hdr.ipv4.dstAddr)
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_port(bit<9> port) { sm.egress_spec = port; }
    table routes {
        key = {
            hdr.ipv4.dstAddr : lpm;
            hdr.ipv4.srcAddr : lpm;
        }
        actions = { set_port; NoAction; }
    }
    apply { routes.apply(); }
}

SWITCH_MAIN
