// lazy: headers the parser extracts lazily (read only in the controls or
// after them), each read in another way: a table's key (a), an action's
// operand (b), a hash's input (c), an egress condition (d), a digest's
// learn list (e.w); f is never read and must leave as it came.
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> k; bit<8> x; }
header b_t { bit<16> q; }
header c_t { bit<32> v; }
header d_t { bit<8> z; }
header e_t { bit<32> w; }
header f_t { bit<32> u; bit<32> u2; }

struct headers { a_t a; b_t b; c_t c; d_t d; e_t e; f_t f; }
struct learn_t { bit<32> w; }
struct metadata { bit<8> unused; }

parser P(packet_in pk, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.a);
        pk.extract(h.b);
        pk.extract(h.c);
        pk.extract(h.d);
        pk.extract(h.e);
        pk.extract(h.f);
        transition accept;
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action from_b() { h.a.x = h.b.q[7:0]; }
    action hash_c() { hash(h.a.x, HashAlgorithm.identity, 8w0, { h.c.v }, 9w256); }
    table t {
        key = { h.a.k: exact; }
        actions = { from_b; hash_c; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
        if (h.a.k == 3) {
            digest<learn_t>(1, { h.e.w });
        }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        if (h.d.z == 7) {
            h.a.x = h.a.x + 1;
        }
    }
}
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pk, in headers h) {
    apply { pk.emit(h.a); pk.emit(h.b); pk.emit(h.c); pk.emit(h.d); pk.emit(h.e); pk.emit(h.f); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
