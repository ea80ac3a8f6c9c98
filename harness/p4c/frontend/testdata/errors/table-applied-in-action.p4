// expect: 10:9: error: t.apply(): tables can only be applied in a control's apply block
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    table t {
        key = { hdr.ethernet.dstAddr : exact; }
        actions = { NoAction; }
    }
    action again() {
        t.apply();
    }
    apply { again(); }
}

SWITCH_MAIN
