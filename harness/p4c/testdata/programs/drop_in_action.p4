// mark_to_drop on an action's inout copy of standard_metadata: the
// copy-out must keep the drop (p4c's own output loses it).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action drop_it(inout standard_metadata_t s) {
        mark_to_drop(s);
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.a == 0) {
            drop_it(sm);
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
