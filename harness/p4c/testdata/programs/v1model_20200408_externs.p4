// With V1MODEL_VERSION >= 20200408 v1model declares register<T, I>,
// counter<I> and meter<I>: the element type is the first type argument.
#define V1MODEL_VERSION 20200408
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> x; bit<8> y; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control NoVerify(inout headers h, inout metadata m) { apply { } }
control MyIngress(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    register<bit<8>, bit<2>>(4) r;
    counter<bit<2>>(4, CounterType.packets) c;
    apply {
        sm.egress_spec = 1;
        r.read(h.h.y, h.h.x[1:0]);
        r.write(h.h.x[1:0], h.h.x);
        c.count(h.h.x[1:0]);
    }
}
control MyEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }
control MyDeparser(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), NoVerify(), MyIngress(), MyEgress(), NoCompute(), MyDeparser()) main;
