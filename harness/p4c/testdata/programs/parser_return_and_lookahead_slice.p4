// A function ending in return called from a parser (a bmv2 parser has no
// jumps), and a slice of lookahead in a select (bmv2 reads a lookahead
// only as a whole operand: the slice is a narrower lookahead).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { bit<8> c; }

bit<8> incr(in bit<8> x) {
    return x + 1;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        transition select(pkt.lookahead<bit<16>>()[7:0]) {
            0x01: one;
            default: accept;
        }
    }
    state one {
        pkt.extract(hdr.h);
        hdr.h.a = incr(hdr.h.a);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.h.isValid()) {
            sm.egress_spec = 2;
        }
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
