// One table applied in both branches of an if: bmv2 has a single node per
// table, so the continuation is chosen by the site the packet came from.
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

control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_c(bit<8> v) { hdr.h.c = v; }
    action other() { }
    table lookup {
        key = { hdr.h.b: exact; }
        actions = { set_c; other; }
        const entries = {
            1: set_c(0x11);
            2: other();
        }
        default_action = set_c(0xdd);
    }
    apply {
        if (hdr.h.a == 0) {
            sm.egress_spec = 1;
            switch (lookup.apply().action_run) {
                set_c: { hdr.h.a = 0xa0; }
                other: { hdr.h.a = 0xa1; }
            }
        } else {
            sm.egress_spec = 2;
            switch (lookup.apply().action_run) {
                other: { hdr.h.a = 0xb1; }
                default: { hdr.h.a = 0xb0; }
            }
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
