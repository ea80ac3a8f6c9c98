// Initializers that read what the assignment overwrites (a swap) are
// read completely before any field is written.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
struct S { bit<8> x; bit<8> y; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) { state start { pk.extract(hdr.h); transition accept; } }
control V(inout H hdr, inout M m) { apply { } }
control MyIngress(inout H hdr, inout M m, inout standard_metadata_t sm) {
  apply {
    sm.egress_spec = 0;
    S s = { x = hdr.h.a, y = hdr.h.b };
    s = { x = s.y, y = s.x };
    tuple<bit<8>, bit<8>> t = { s.x, s.y };
    t = { t[1], t[0] };
    hdr.h = { t[0], t[1] };
    hdr.h = { hdr.h.b, hdr.h.a };
  }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), MyIngress(), E(), C(), D()) main;
