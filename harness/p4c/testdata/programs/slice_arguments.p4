// A bit slice passed to an inout or out parameter is copied in (inout)
// and written back into its field, leaving the other bits alone.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control NoVerify(inout headers h, inout metadata m) { apply { } }

void put_five(out bit<4> v) { v = 5; }

control MyIngress(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action increment(inout bit<4> v) { v = v + 1; }
    apply {
        sm.egress_spec = 1;
        increment(h.h.a[3:0]);
        increment(h.h.a[7:4]);
        put_five(h.h.b[7:4]);
    }
}
control MyEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }
control MyDeparser(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), NoVerify(), MyIngress(), MyEgress(), NoCompute(), MyDeparser()) main;
