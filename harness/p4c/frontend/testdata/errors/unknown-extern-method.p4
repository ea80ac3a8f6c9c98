// expect: 7:14: error: increment: extern counter has no method increment
#include "skeleton.p4"

control ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    counter(32w64, CounterType.packets) hits;
    apply {
        hits.increment((bit<32>)sm.ingress_port);
    }
}

SWITCH_MAIN
