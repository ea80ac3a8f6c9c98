// expect: 8:32: error: longest: unknown match kind (known: exact, ternary, lpm, range, optional, selector)
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_port(bit<9> port) { sm.egress_spec = port; }
    table routes {
        key = {
            hdr.ipv4.dstAddr : longest;
        }
        actions = { set_port; NoAction; }
    }
    apply { routes.apply(); }
}

SWITCH_MAIN
