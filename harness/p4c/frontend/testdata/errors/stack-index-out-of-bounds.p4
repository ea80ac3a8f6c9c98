// expect: 14:20: error: index 4 is out of bounds of hdr.labels (size 4)
#include "skeleton.p4"

header label_t {
    bit<32> label;
}

struct stacked_t {
    label_t[4] labels;
}

control C(inout stacked_t hdr) {
    apply {
        hdr.labels[4].label = 0;
    }
}

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }

SWITCH_MAIN
