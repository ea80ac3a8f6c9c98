// expect: 6:13: error: if: the condition must be bool, not bit<8>
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.ipv4.ttl) {
            mark_to_drop(sm);
        }
    }
}

SWITCH_MAIN
