// Three independent mistakes; the checker reports each of them once.
#include "errors/skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_port(bit<9> port) {
        sm.egress_spec = prt;
    }
    apply {
        hdr.ipv4.ttl = hdr.ipv4.totalLen;
        set_port(1, 2);
    }
}

SWITCH_MAIN
