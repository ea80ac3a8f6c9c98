// expect: 8:9: error: nhop_port: declaration not found
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        // A typo: the variable is declared nowhere.
        sm.egress_spec =
        nhop_port;
    }
}

SWITCH_MAIN
