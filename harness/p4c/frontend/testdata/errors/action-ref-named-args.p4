// expect: 10:34: error: action set_ttl has no parameter tll
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_ttl(bit<8> ttl) { hdr.ipv4.ttl = ttl; }
    table t {
        key = { hdr.ipv4.dstAddr : exact; }
        actions = { set_ttl; }
        // A misspelt parameter name in a named argument.
        default_action = set_ttl(tll = 64);
    }
    apply { t.apply(); }
}

SWITCH_MAIN
