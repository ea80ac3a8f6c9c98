// error: two-argument extract needs a header with a varbit field, not header h_t
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h, 8); transition accept; }
}
control NoVerify(inout headers h, inout metadata m) { apply { } }
control MyIngress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control MyEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }
control MyDeparser(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), NoVerify(), MyIngress(), MyEgress(), NoCompute(), MyDeparser()) main;
