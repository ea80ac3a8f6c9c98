// udp_nat: source NAT for UDP. A table maps a private (address, port) to a
// public one; the switch rewrites the source and recomputes both the IPv4
// header checksum and the UDP checksum, which covers a pseudo-header, the
// UDP header and the payload (update_checksum_with_payload). Arriving
// packets whose UDP checksum is wrong are dropped.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

header udp_t {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<16> len;
    bit<16> checksum;
}

struct metadata_t { }

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
}

parser NatParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            17: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        packet.extract(hdr.udp);
        transition accept;
    }
}

control NatVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum_with_payload(hdr.udp.isValid(),
            { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, 8w0, hdr.ipv4.protocol, hdr.udp.len,
              hdr.udp.srcPort, hdr.udp.dstPort, hdr.udp.len },
            hdr.udp.checksum, HashAlgorithm.csum16);
    }
}

control NatIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }

    action snat(bit<32> addr, bit<16> port) {
        hdr.ipv4.srcAddr = addr;
        hdr.udp.srcPort = port;
        standard_metadata.egress_spec = 1;
    }

    table nat {
        key = {
            hdr.ipv4.srcAddr: exact;
            hdr.udp.srcPort:  exact;
        }
        actions = { snat; drop; }
        default_action = drop();
    }

    apply {
        if (hdr.udp.isValid() && standard_metadata.checksum_error == 0) {
            nat.apply();
        } else {
            drop();
        }
    }
}

control NatEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply { }
}

control NatComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
        update_checksum_with_payload(hdr.udp.isValid(),
            { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, 8w0, hdr.ipv4.protocol, hdr.udp.len,
              hdr.udp.srcPort, hdr.udp.dstPort, hdr.udp.len },
            hdr.udp.checksum, HashAlgorithm.csum16);
    }
}

control NatDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
    }
}

V1Switch(NatParser(), NatVerifyChecksum(), NatIngress(), NatEgress(),
         NatComputeChecksum(), NatDeparser()) main;
