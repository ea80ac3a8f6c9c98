// expect: 7:44: error: lpm refers to the table lpm declared at testdata/errors/match-kind-hidden-by-table.p4:7:5, which hides the match kind lpm; rename it
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    // The table's own name hides the match kind inside the control.
    action drop() { mark_to_drop(sm); }
    table lpm { key = { hdr.ipv4.dstAddr : lpm; } actions = { drop; } }
    apply { lpm.apply(); }
}

SWITCH_MAIN
