// multicast: L2 forwarding with flooding through multicast groups. Known
// destinations go to one port; the broadcast address is replicated by the
// packet replication engine to every port of the group. Egress writes each
// copy's replication id (egress_rid) into the source MAC and drops the copy
// that would go back out of the port the packet came in on.
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

parser McParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control McVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control McIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    action flood(bit<16> group) {
        standard_metadata.mcast_grp = group;
    }

    action drop() {
        mark_to_drop(standard_metadata);
    }

    table l2 {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; flood; drop; }
        default_action = drop();
    }

    apply {
        l2.apply();
    }
}

control McEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.mcast_grp != 0) {
            if (standard_metadata.egress_port == standard_metadata.ingress_port) {
                mark_to_drop(standard_metadata);
            } else {
                hdr.ethernet.srcAddr = (bit<48>)standard_metadata.egress_rid;
            }
        }
    }
}

control McComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control McDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(McParser(), McVerifyChecksum(), McIngress(), McEgress(),
         McComputeChecksum(), McDeparser()) main;
