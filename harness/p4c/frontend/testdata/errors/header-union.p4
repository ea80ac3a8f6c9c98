// expect: 4:1: unsupported: header_union ip_u (header unions are outside the compiler's subset)
#include "skeleton.p4"

header_union ip_u {
    ipv4_t v4;
}

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }

SWITCH_MAIN
