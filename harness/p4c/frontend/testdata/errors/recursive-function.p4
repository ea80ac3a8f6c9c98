// expect: 4:1: error: recursion is not allowed in P4: countdown -> countdown
#include "skeleton.p4"

bit<8> countdown(in bit<8> n) {
    if (n == 0) {
        return 0;
    }
    return countdown(n - 1);
}

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { hdr.ipv4.ttl = countdown(hdr.ipv4.ttl); }
}

SWITCH_MAIN
