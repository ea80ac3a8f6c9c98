// split_increment: every packet adds one to cell 0 of "total", reading it in
// one table's action and writing it back in another's. bmv2 locks a register
// for one action at a time, so the increment is atomic only when packets go
// through ingress one at a time, as in simple_switch's single ingress thread
// (engine.Config.Serial). GRID's aggregator updates its units the same way.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata_t { bit<32> seen; }
struct headers_t { ethernet_t ethernet; }

parser P(packet_in packet, out headers_t hdr, inout metadata_t meta,
         inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }

control Ing(inout headers_t hdr, inout metadata_t meta,
            inout standard_metadata_t standard_metadata) {
    register<bit<32>>(1) total;

    action load() { total.read(meta.seen, 0); }
    action store() { total.write(0, meta.seen + 1); }
    table read_total { actions = { load; } default_action = load(); }
    table write_total { actions = { store; } default_action = store(); }

    apply {
        read_total.apply();
        write_total.apply();
        mark_to_drop(standard_metadata);
    }
}

control Eg(inout headers_t hdr, inout metadata_t meta,
           inout standard_metadata_t standard_metadata) { apply { } }

control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }

control D(packet_out packet, in headers_t hdr) {
    apply { packet.emit(hdr.ethernet); }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
