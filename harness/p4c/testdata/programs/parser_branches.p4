// Parser features: an if-statement splitting a state, lookahead into a
// variable, a two-key select with a mask, and a sub-parser with an out
// header parameter; a deparser emit guarded by the header's validity.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}

header x_t {
    bit<16> w;
}

struct headers_t {
    h_t h;
    x_t x;
    h_t inner;
}

struct meta_t {
    bit<8> peek;
}

parser Inner(packet_in pkt, out h_t hh) {
    state start {
        pkt.extract(hh);
        transition accept;
    }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Inner() inner;
    state start {
        meta.peek = pkt.lookahead<bit<8>>();
        pkt.extract(hdr.h);
        if (hdr.h.a == 1) {
            pkt.extract(hdr.x);
        } else {
            hdr.h.b = hdr.h.b + 1;
        }
        transition select(hdr.h.a, hdr.h.b) {
            (2, 0x10 &&& 0xf0): with_inner;
            default: accept;
        }
    }
    state with_inner {
        inner.apply(pkt, hdr.inner);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.inner.isValid()) {
            hdr.inner.b = meta.peek;
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }

control Dp(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        if (hdr.x.isValid()) {
            pkt.emit(hdr.x);
        }
        pkt.emit(hdr.inner);
    }
}

V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
