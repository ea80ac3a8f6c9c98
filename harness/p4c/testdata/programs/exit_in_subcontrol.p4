// An exit in a table action inside an inlined control still copies out the
// control's parameters: b ends 0x55, and nothing after the exit runs.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control Sub(inout bit<8> v) {
    action set_and_exit() { v = 0x55; exit; }
    table t { actions = { set_and_exit; } default_action = set_and_exit(); }
    apply { t.apply(); v = 0x66; }
}
control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Sub() s;
    apply { sm.egress_spec = 1; s.apply(hdr.h.b); hdr.h.a = 0x77; }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
