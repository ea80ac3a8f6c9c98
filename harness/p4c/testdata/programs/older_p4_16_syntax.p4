// Forms p4c's test programs still use: `table t()` with an empty parameter
// list, named arguments in default_action and const entries, and the old
// v1model signature VerifyChecksum(in H hdr, ...).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control OldVerify(in headers h, inout metadata m) { apply { } }
control MyIngress(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action set_b(bit<8> v, bit<8> w) { h.h.b = v - w; }
    table t() {
        key = { h.h.a : exact; }
        actions = { set_b; }
        default_action = set_b(w = 2, v = 9);
        const entries = { 1 : set_b(w = 3, v = 4); }
    }
    apply { sm.egress_spec = 1; t.apply(); }
}
control MyEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }
control MyDeparser(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), OldVerify(), MyIngress(), MyEgress(), NoCompute(), MyDeparser()) main;
