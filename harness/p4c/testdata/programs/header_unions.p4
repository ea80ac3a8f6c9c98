// Header unions: extract into a member, setValid on one member invalidates
// the other, union assignment (assign_union), an uninitialized union local
// starts invalid, isValid() of the whole union, a union as an inout
// action parameter, and emit of a union (its valid member).
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> tag; }
header a_t { bit<8> a; }
header b_t { bit<16> b; }
header_union U { a_t a; b_t b; }
struct headers { tag_t t; U u; U v; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.t);
        transition select(h.t.tag) {
            1: parse_a;
            2: parse_b;
            5: parse_b;
            default: accept;
        }
    }
    state parse_a { pkt.extract(h.u.a); transition accept; }
    state parse_b { pkt.extract(h.u.b); transition accept; }
}

control NoVerify(inout headers h, inout metadata m) { apply { } }

control MyIngress(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action make_a(inout U x, bit<8> v) {
        x.a.setValid();
        x.a.a = v;
    }
    apply {
        sm.egress_spec = 1;
        if (h.t.tag == 1) {
            h.u.b.setValid();
            h.u.b.b = 0xBBBB;
        } else if (h.t.tag == 2) {
            h.v = h.u;
            h.u.a.setValid();
            h.u.a.a = 0xAA;
        } else if (h.t.tag == 3) {
            U l;
            l.a.setValid();
            l.a.a = 0x33;
            h.u = l;
        } else if (h.t.tag == 5) {
            make_a(h.u, 0x55);
        }
        if (h.u.isValid()) {
            h.t.tag = 0x10;
        } else {
            h.t.tag = 0x20;
        }
    }
}

control MyEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }

control MyDeparser(packet_out pkt, in headers h) {
    apply {
        pkt.emit(h.t);
        pkt.emit(h.u);
        pkt.emit(h.v);
    }
}

V1Switch(P(), NoVerify(), MyIngress(), MyEgress(), NoCompute(), MyDeparser()) main;
