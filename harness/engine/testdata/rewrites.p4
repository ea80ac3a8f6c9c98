// rewrites: fields written after the parser extracted them, in the parser
// (an assignment), by a register read, by an assignment to a stack element
// and by a table's action, while other headers pass untouched; the
// deparser must write each rewritten header from its fields and every
// other one as it came.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> d; }
header v_t { bit<8> v; }
header p_t { bit<32> w0; bit<32> w1; }

struct headers { h_t h; v_t[2] st; p_t pass; }
struct metadata { bit<8> seen; }

parser P(packet_in pk, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.h);
        pk.extract(h.st.next);
        pk.extract(h.st.next);
        h.st[0].v = h.st[0].v + 1;
        pk.extract(h.pass);
        transition accept;
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    register<bit<32>>(1) r;
    action set_c(bit<16> c) { h.h.c = c; }
    table t {
        key = { h.h.a: exact; }
        actions = { set_c; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        m.seen = h.pass.w0[7:0];
        r.read(h.h.d, 0);
        h.st[1].v = h.h.a;
        t.apply();
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pk, in headers h) {
    apply { pk.emit(h.h); pk.emit(h.st); pk.emit(h.pass); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
