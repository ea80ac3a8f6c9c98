// expect: 8:5: error: drop: duplicate declaration (previous declaration at testdata/errors/duplicate-declaration.p4:5:5)
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action drop() {
        mark_to_drop(sm);
    }
    action drop() {
        mark_to_drop(sm);
    }
    apply { drop(); }
}

SWITCH_MAIN
