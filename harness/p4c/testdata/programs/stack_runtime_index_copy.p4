// Whole-header writes to a stack element chosen at run time: one guarded
// copy per element; an index out of range writes nothing.
#include <core.p4>
#include <v1model.p4>

header idx_t { bit<8> i; bit<8> j; }
header e_t { bit<8> v; }
struct headers { idx_t x; e_t[3] s; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.x);
        pkt.extract(h.s.next);
        pkt.extract(h.s.next);
        pkt.extract(h.s.next);
        transition accept;
    }
}
control NoVerify(inout headers h, inout metadata m) { apply { } }
control MyIngress(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.x.j = h.x.j + 1;
        h.s[h.x.i] = { 0xEE };
        // The index is read before the copy changes it.
        h.s[h.s[0].v] = h.s[2];
    }
}
control MyEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }
control MyDeparser(packet_out pkt, in headers h) { apply { pkt.emit(h.x); pkt.emit(h.s); } }
V1Switch(P(), NoVerify(), MyIngress(), MyEgress(), NoCompute(), MyDeparser()) main;
