// Compiles only with -D V1MODEL_VERSION=20200408 (register<T, I>) and
// -I testdata/inc (headers.p4).
#include <core.p4>
#include <v1model.p4>
#include "headers.p4"

parser P(packet_in pkt, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control Vc(inout H h, inout M m) { apply {} }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    register<bit<8>, bit<32>>(16) r;
    apply { r.read(m.v, m.idx); }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control Ck(inout H h, inout M m) { apply {} }
control D(packet_out pkt, in H h) { apply { pkt.emit(h); } }
V1Switch(P(), Vc(), I(), E(), Ck(), D()) main;
