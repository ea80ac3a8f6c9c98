// `...` in a struct or header initializer gives the fields not named
// their default values: 0, false, and the same for nested structs.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct inner_t { bit<8> x; bool f; }
struct s_t { bit<8> p; bit<8> q; inner_t sub; }
struct headers { h_t h; h_t o; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control NoVerify(inout headers h, inout metadata m) { apply { } }
control MyIngress(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        s_t s = { q = h.h.a, p = 9, sub = { ... } };
        s = { p = s.p + 1, ... };
        h.h.a = s.p;
        h.h.b = s.q;
        h.h.c = s.sub.f ? 8w0xFF : s.sub.x;
        h.o = { b = 7, ... };
    }
}
control MyEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }
control MyDeparser(packet_out pkt, in headers h) { apply { pkt.emit(h.h); pkt.emit(h.o); } }
V1Switch(P(), NoVerify(), MyIngress(), MyEgress(), NoCompute(), MyDeparser()) main;
