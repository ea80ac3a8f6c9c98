// clone_i2e: port mirroring with an ingress-to-egress clone. Every packet is
// forwarded to port 2; packets from ports listed in "mirror_ports" are also
// cloned to a mirror session, whose port the control plane sets. Egress
// marks the clone (instance_type 1) by rewriting its destination MAC to
// 00:00:00:00:c1:0e so the copy can be told apart from the original.
#include <core.p4>
#include <v1model.p4>

const bit<32> INSTANCE_INGRESS_CLONE = 1;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata_t { }

struct headers_t {
    ethernet_t ethernet;
}

parser CloneParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control CloneVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control CloneIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    action mirror(bit<32> session) {
        clone(CloneType.I2E, session);
    }

    table mirror_ports {
        key = { standard_metadata.ingress_port: exact; }
        actions = { mirror; NoAction; }
        default_action = NoAction();
    }

    apply {
        standard_metadata.egress_spec = 2;
        mirror_ports.apply();
    }
}

control CloneEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == INSTANCE_INGRESS_CLONE) {
            hdr.ethernet.dstAddr = 0x00000000c10e;
        }
    }
}

control CloneComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control CloneDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(CloneParser(), CloneVerifyChecksum(), CloneIngress(), CloneEgress(),
         CloneComputeChecksum(), CloneDeparser()) main;
