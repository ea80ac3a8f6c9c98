// counters: an indexed counter counts the packets and bytes arriving on each
// port; a direct counter attached to the forwarding table counts the packets
// and bytes each entry matched.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata_t { }

struct headers_t {
    ethernet_t ethernet;
}

parser CntParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control CntVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control CntIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    counter(8, CounterType.packets_and_bytes) port_in;
    direct_counter(CounterType.packets_and_bytes) mac_hits;

    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
        mac_hits.count();
    }

    action drop() {
        mark_to_drop(standard_metadata);
        mac_hits.count();
    }

    table mac_fwd {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; drop; }
        default_action = drop();
        counters = mac_hits;
    }

    apply {
        port_in.count((bit<32>)standard_metadata.ingress_port);
        mac_fwd.apply();
    }
}

control CntEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply { }
}

control CntComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control CntDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(CntParser(), CntVerifyChecksum(), CntIngress(), CntEgress(),
         CntComputeChecksum(), CntDeparser()) main;
