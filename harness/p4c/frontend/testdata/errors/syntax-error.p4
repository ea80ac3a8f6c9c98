// expect: 7:5: error: syntax error, unexpected "}", expecting ";"
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.ipv4.ttl = 64
    }
}

SWITCH_MAIN
