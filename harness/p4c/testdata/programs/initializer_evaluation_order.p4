// Initializer elements are evaluated left to right: an element read
// before a call must not see that call's side effects.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct pair_t { bit<8> x; bit<8> y; }
struct headers { h_t h; }
struct metadata { }

bit<8> bump(inout bit<8> v) {
    v = v + 1;
    return v + 0x10;
}

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control NoVerify(inout headers h, inout metadata m) { apply { } }
control MyIngress(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        tuple<bit<8>, bit<8>> t = { h.h.a, bump(h.h.a) };
        pair_t p = { x = h.h.b, y = bump(h.h.b) };
        h.h = { t[0], t[1], p.x, p.y };
    }
}
control MyEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }
control MyDeparser(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), NoVerify(), MyIngress(), MyEgress(), NoCompute(), MyDeparser()) main;
