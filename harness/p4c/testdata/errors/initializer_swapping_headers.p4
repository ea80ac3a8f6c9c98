// error: unsupported: an initializer that reads headers or varbits this assignment overwrites
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
struct pair_t { h_t x; h_t y; }
struct headers { pair_t p; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.p.x); pkt.extract(h.p.y); transition accept; }
}
control NoVerify(inout headers h, inout metadata m) { apply { } }
control MyIngress(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply { h.p = { x = h.p.y, y = h.p.x }; }
}
control MyEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }
control MyDeparser(packet_out pkt, in headers h) { apply { pkt.emit(h.p); } }
V1Switch(P(), NoVerify(), MyIngress(), MyEgress(), NoCompute(), MyDeparser()) main;
