// extract(hs[i]) with i a parser local counted at run time (p4c unrolls
// such parsers): each element parsed is the next one, and an index past
// the stack ends parsing.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<7> v; bit<1> bos; }
struct headers_t { h_t[3] hs; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    bit<8> i;
    state start {
        i = 0;
        transition next;
    }
    state next {
        pkt.extract(hdr.hs[i]);
        i = i + 1;
        transition select(hdr.hs[i - 1].bos) {
            1: accept;
            default: next;
        }
    }
}

control Ig(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.hs[1].isValid()) {
            sm.egress_spec = 2;
        }
        if (hdr.hs[2].isValid()) {
            sm.egress_spec = 3;
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t m) { apply { } }
control Cc(inout headers_t hdr, inout meta_t m) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.hs); } }
V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
