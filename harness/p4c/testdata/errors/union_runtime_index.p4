// error: unsupported: a header union stack index that is not a compile-time constant
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> a; }
header b_t { bit<16> b; }
header_union U { a_t a; b_t b; }
struct headers { a_t i; U[2] u; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.i); transition accept; }
}
control NoVerify(inout headers h, inout metadata m) { apply { } }
control MyIngress(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply { h.u[h.i.a].a.setValid(); }
}
control MyEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }
control MyDeparser(packet_out pkt, in headers h) { apply { pkt.emit(h.u); } }
V1Switch(P(), NoVerify(), MyIngress(), MyEgress(), NoCompute(), MyDeparser()) main;
