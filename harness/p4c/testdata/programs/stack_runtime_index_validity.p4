// A stack element chosen at run time made invalid, and copied from
// (p4c: remove_header and assign_header of a dereference_header_stack).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; h_t[2] s; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.s[0]);
        pkt.extract(hdr.s[1]);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.h.b == 1) {
            hdr.s[hdr.h.a].setInvalid();
        } else if (hdr.h.b == 2) {
            hdr.h = hdr.s[hdr.h.a];
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t m) { apply { } }
control Cc(inout headers_t hdr, inout meta_t m) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.s); } }
V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
