// cpu_port: a PacketOut leaves on the port its packet_out header names;
// every frame received on a data-plane port goes to the controller as a
// PacketIn whose packet_in header says where it came from. The CPU port is
// 64.
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 64;

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
}
struct metadata_t { }

parser P(packet_in packet, out headers_t hdr, inout metadata_t meta,
         inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control NoVerify(inout headers_t hdr, inout metadata_t meta) { apply { } }
control NoUpdate(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ToAndFromCPU(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else {
            sm.egress_spec = CPU_PORT;
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = sm.ingress_port;
            hdr.packet_in._pad = 0;
        }
    }
}

control NoEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }

control Emit(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(P(), NoVerify(), ToAndFromCPU(), NoEgress(), NoUpdate(), Emit()) main;
