// The program of package p4rt's tests: LPM forwarding with a direct
// counter, a ternary ACL with priorities that can multicast or punt to the
// controller, an indexed counter, meter and register per ingress port, and
// packet_in/packet_out headers for the CPU port 255. The ACL's set_port
// drops packets its direct meter marks red.
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 255;

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> pad;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> reason;
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<8>  versionIhl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<16> flagsFrag;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

struct metadata_t {
    bit<2> color;
    bit<2> acl_color;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    ipv4_t       ipv4;
}

parser TestParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
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
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control TestVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control TestIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    counter(8, CounterType.packets_and_bytes) port_packets;
    meter(8, MeterType.packets) port_meter;
    register<bit<32>>(8) last_length;
    direct_counter(CounterType.packets_and_bytes) route_hits;
    direct_meter<bit<2>>(MeterType.packets) acl_meter;

    action drop() {
        mark_to_drop(standard_metadata);
    }
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
        acl_meter.read(meta.acl_color);
        if (meta.acl_color == 2) {
            mark_to_drop(standard_metadata);
        }
    }
    action flood(bit<16> group) {
        standard_metadata.mcast_grp = group;
    }
    action punt(bit<7> reason) {
        standard_metadata.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = standard_metadata.ingress_port;
        hdr.packet_in.reason = reason;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { forward; drop; }
        default_action = drop();
        counters = route_hits;
        size = 1024;
    }

    table acl {
        key = {
            hdr.ethernet.dstAddr: ternary;
            hdr.ethernet.etherType: ternary;
        }
        actions = { set_port; flood; punt; drop; NoAction; }
        default_action = NoAction();
        meters = acl_meter;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            return;
        }
        port_packets.count((bit<32>)standard_metadata.ingress_port);
        last_length.write((bit<32>)standard_metadata.ingress_port, standard_metadata.packet_length);
        port_meter.execute_meter((bit<32>)standard_metadata.ingress_port, meta.color);
        if (meta.color == 2) {
            mark_to_drop(standard_metadata);
            return;
        }
        if (hdr.ipv4.isValid()) {
            ipv4_lpm.apply();
        }
        acl.apply();
    }
}

control TestEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply { }
}

control TestComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control TestDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(TestParser(), TestVerifyChecksum(), TestIngress(), TestEgress(),
         TestComputeChecksum(), TestDeparser()) main;
