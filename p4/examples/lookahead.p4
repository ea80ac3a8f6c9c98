// lookahead: the parser peeks at the version byte that starts a tunnel
// header (EtherType 0x88b8) before choosing which of two layouts to
// extract. Version 1 names the output port in 8 bits; version 2 in 16 bits
// and carries a flags byte, which the switch sets to 0xff to show it was
// parsed as version 2. Other versions are dropped.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tunnel_v1_t {
    bit<8> version;
    bit<8> port;
}

header tunnel_v2_t {
    bit<8>  version;
    bit<16> port;
    bit<8>  flags;
}

struct metadata_t { }

struct headers_t {
    ethernet_t  ethernet;
    tunnel_v1_t v1;
    tunnel_v2_t v2;
}

parser LaParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b8: parse_tunnel;
            default: accept;
        }
    }
    state parse_tunnel {
        transition select(packet.lookahead<bit<8>>()) {
            1: parse_v1;
            2: parse_v2;
            default: accept;
        }
    }
    state parse_v1 {
        packet.extract(hdr.v1);
        transition accept;
    }
    state parse_v2 {
        packet.extract(hdr.v2);
        transition accept;
    }
}

control LaVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control LaIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.v1.isValid()) {
            standard_metadata.egress_spec = (bit<9>)hdr.v1.port;
        } else if (hdr.v2.isValid()) {
            standard_metadata.egress_spec = (bit<9>)hdr.v2.port;
            hdr.v2.flags = 0xff;
        } else {
            mark_to_drop(standard_metadata);
        }
    }
}

control LaEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control LaComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control LaDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.v1);
        packet.emit(hdr.v2);
    }
}

V1Switch(LaParser(), LaVerifyChecksum(), LaIngress(), LaEgress(),
         LaComputeChecksum(), LaDeparser()) main;
