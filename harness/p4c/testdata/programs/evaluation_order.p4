// Left-to-right evaluation with side effects: the left operand of `+` is
// read before the call on its right changes it, every time the function
// holding that expression is inlined.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

bit<8> bump(inout bit<8> v) {
    v = v + 1;
    return 1;
}

bit<8> sum_then_bump(inout bit<8> v) {
    return v + bump(v);
}

control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 3;
        hdr.h.b = sum_then_bump(hdr.h.a);
        hdr.h.c = sum_then_bump(hdr.h.a);
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
