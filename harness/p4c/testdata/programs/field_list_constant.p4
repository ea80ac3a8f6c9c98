// @field_list naming a constant (as p4lang/tutorials' flowcache does):
// the clone keeps meta.x, the field the named list holds.
#include <core.p4>
#include <v1model.p4>
const bit<8> FL_CLONE = 1;
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { @field_list(FL_CLONE) bit<8> x; bit<8> y; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { meta.x = hdr.h.a; sm.egress_spec = 1; clone_preserving_field_list(CloneType.I2E, 5, FL_CLONE); }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { if (sm.instance_type == 1) { hdr.h.b = meta.x; } }
}
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
