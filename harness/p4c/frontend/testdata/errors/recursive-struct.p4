// expect: 5:30: error: node.next: recursive type: struct node contains itself
#include "skeleton.p4"

// A struct cannot contain itself (p4c: recursive type); this used to overflow the stack.
struct node { bit<8> v; node next; }

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { node n; n.v = 1; }
}

SWITCH_MAIN
