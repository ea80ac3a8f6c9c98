// expect: 6:18: error: tll: header ipv4_t has no field tll
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.ipv4.tll = hdr.ipv4.ttl - 1;
    }
}

SWITCH_MAIN
