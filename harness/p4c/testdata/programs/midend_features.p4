// Exercises the midend lowering: saturating arithmetic, signed wrap-around,
// concatenation, slice assignment, an inlined function with early return,
// an inlined sub-control with copy-in/copy-out, switch on action_run,
// exit inside a table action and return from the apply block.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<8>  c;
    bit<8>  d;
    int<8>  s;
    bit<16> w;
    bit<8>  e;
}

struct headers_t { h_t h; }
struct meta_t { bit<8> m; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

bit<8> max8(in bit<8> x, in bit<8> y) {
    if (x > y) {
        return x;
    }
    return y;
}

control Inc(inout bit<8> v) {
    apply { v = v + 1; }
}

control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Inc() inc;
    action set_e(bit<8> e) { hdr.h.e = e; }
    action stop() {
        hdr.h.e = 0xee;
        exit;
        hdr.h.e = 0;
    }
    table t {
        key = { hdr.h.a: exact; }
        actions = { set_e; stop; NoAction; }
        const entries = {
            1 : set_e(0x11);
            2 : stop();
        }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        hdr.h.c = hdr.h.a |+| hdr.h.b;
        hdr.h.d = hdr.h.a |-| hdr.h.b;
        hdr.h.s = hdr.h.s - 8s100;
        hdr.h.w = hdr.h.a ++ hdr.h.b;
        hdr.h.w[3:0] = 4w0xf;
        meta.m = max8(hdr.h.a, hdr.h.b);
        inc.apply(meta.m);
        switch (t.apply().action_run) {
            set_e: { hdr.h.e = hdr.h.e + meta.m; }
            default: { }
        }
        if (hdr.h.a == 3) {
            return;
        }
        hdr.h.b = meta.m;
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
