// counted: every packet is counted by its ingress port (an indexed
// counter) and by the entry of table t it hits (a direct counter), then
// sent out of port 1.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pk, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    counter(8, CounterType.packets_and_bytes) by_port;
    direct_counter(CounterType.packets_and_bytes) hits;
    action send() { sm.egress_spec = 1; }
    table t {
        key = { h.h.a: exact; }
        actions = { send; NoAction; }
        default_action = NoAction();
        counters = hits;
    }
    apply {
        by_port.count((bit<32>) sm.ingress_port);
        t.apply();
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pk, in headers h) { apply { pk.emit(h.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
