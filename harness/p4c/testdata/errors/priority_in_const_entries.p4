// error: table t: a table with const entries cannot have entry priorities
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control NoVerify(inout headers h, inout metadata m) { apply { } }
control MyIngress(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action set_b(bit<8> v) { h.h.b = v; }
    table t {
        key = { h.h.a : ternary; }
        actions = { set_b; }
        const entries = {
            priority = 10: 0x01 &&& 0x0F : set_b(1);
            priority = 20: 0x11 &&& 0xFF : set_b(2);
        }
    }
    apply { sm.egress_spec = 1; t.apply(); }
}
control MyEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }
control MyDeparser(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), NoVerify(), MyIngress(), MyEgress(), NoCompute(), MyDeparser()) main;
