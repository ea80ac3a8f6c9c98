// registers: stateful memory. A "probe" header (EtherType 0x88b5) asks the
// switch to write, read or increment a cell of the register array "store";
// the switch answers on the port the probe came from. Every packet, probe or
// not, also increments its ingress port's cell of "port_packets".
#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_PROBE = 0x88b5;

const bit<8> OP_WRITE     = 1;
const bit<8> OP_READ      = 2;
const bit<8> OP_INCREMENT = 3;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header probe_t {
    bit<8>  op;
    bit<8>  index;
    bit<32> value;
}

struct metadata_t { }

struct headers_t {
    ethernet_t ethernet;
    probe_t    probe;
}

parser RegParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_PROBE: parse_probe;
            default: accept;
        }
    }
    state parse_probe {
        packet.extract(hdr.probe);
        transition accept;
    }
}

control RegVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control RegIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    register<bit<32>>(16) store;
    register<bit<32>>(8) port_packets;

    apply {
        bit<32> seen;
        port_packets.read(seen, (bit<32>)standard_metadata.ingress_port);
        port_packets.write((bit<32>)standard_metadata.ingress_port, seen + 1);

        if (!hdr.probe.isValid()) {
            mark_to_drop(standard_metadata);
            return;
        }
        if (hdr.probe.op == OP_WRITE) {
            store.write((bit<32>)hdr.probe.index, hdr.probe.value);
        } else if (hdr.probe.op == OP_READ) {
            store.read(hdr.probe.value, (bit<32>)hdr.probe.index);
        } else if (hdr.probe.op == OP_INCREMENT) {
            bit<32> current;
            store.read(current, (bit<32>)hdr.probe.index);
            current = current + 1;
            store.write((bit<32>)hdr.probe.index, current);
            hdr.probe.value = current;
        }
        standard_metadata.egress_spec = standard_metadata.ingress_port;
    }
}

control RegEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply { }
}

control RegComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control RegDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.probe);
    }
}

V1Switch(RegParser(), RegVerifyChecksum(), RegIngress(), RegEgress(),
         RegComputeChecksum(), RegDeparser()) main;
