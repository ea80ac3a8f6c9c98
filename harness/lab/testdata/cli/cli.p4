// cli: the runtime CLI tests' program: a table of each kind of key, an
// indexed counter, meter and register.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> k;
    bit<32> v;
}
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pk, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    counter(8, CounterType.packets_and_bytes) hits;
    meter(4, MeterType.packets) rate;
    register<bit<32>>(4) last;

    action send(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table by_key {
        key = { h.h.k: exact; }
        actions = { send; drop; }
        default_action = drop();
    }
    table by_mask {
        key = { h.h.v: ternary; }
        actions = { send; drop; }
        default_action = drop();
    }
    apply {
        hits.count(0);
        bit<2> colour;
        rate.execute_meter(0, colour);
        last.write(0, h.h.v);
        by_key.apply();
        by_mask.apply();
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pk, in headers h) { apply { pk.emit(h.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
