// Exercises const entries with optional, range and ternary keys and
// priorities, a validity key, default actions with data, hit/miss in an
// expression and direct action data bound in the actions list.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}

header opt_t {
    bit<8> x;
}

struct headers_t {
    h_t   h;
    opt_t opt;
}

struct meta_t {
    bool hit;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.c) {
            0xf0 &&& 0xf0: get_opt;
            default: accept;
        }
    }
    state get_opt {
        pkt.extract(hdr.opt);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_d(bit<8> v) { hdr.h.d = v; }
    action add_to(inout bit<8> target, bit<8> v) { target = target + v; }

    table classify {
        key = {
            hdr.h.a: optional;
            hdr.h.b: range;
        }
        actions = { set_d; NoAction; }
        const entries = {
            (1, 0 .. 9): set_d(1);
            (_, 5 .. 5): set_d(2);
            (2, _): set_d(3);
        }
        default_action = set_d(0xdd);
    }

    table by_validity {
        key = { hdr.opt.isValid(): exact; }
        actions = { add_to(hdr.h.c); }
        const entries = {
            true: add_to(hdr.h.c, 1);
            false: add_to(hdr.h.c, 2);
        }
        default_action = add_to(hdr.h.c, 0);
    }

    table never {
        key = { hdr.h.a: exact; }
        actions = { NoAction; }
    }

    apply {
        sm.egress_spec = 1;
        classify.apply();
        by_validity.apply();
        meta.hit = never.apply().hit;
        if (!meta.hit) {
            hdr.h.a = hdr.h.a + 0x10;
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }

control Dp(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.opt);
    }
}

V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
