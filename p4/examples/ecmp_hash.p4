// ecmp_hash: LPM routing onto equal-cost multipath groups. A route names a
// group (its first member and its size); a CRC-16 hash of the flow's
// 5-tuple picks the member, so every packet of a flow takes the same path.
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

header ports_t {
    bit<16> srcPort;
    bit<16> dstPort;
}

struct metadata_t {
    bit<16> ecmp_member;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    ports_t    l4;
}

parser EcmpParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
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
            6: parse_l4;
            17: parse_l4;
            default: accept;
        }
    }
    state parse_l4 {
        packet.extract(hdr.l4);
        transition accept;
    }
}

control EcmpVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control EcmpIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }

    // member = first + (crc16(5-tuple) % size)
    action set_ecmp_group(bit<16> first, bit<16> size) {
        hash(meta.ecmp_member, HashAlgorithm.crc16, first,
             { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4.protocol,
               hdr.l4.srcPort, hdr.l4.dstPort },
             size);
    }

    action set_nhop(bit<48> dmac, bit<9> port) {
        hdr.ethernet.dstAddr = dmac;
        standard_metadata.egress_spec = port;
    }

    table ipv4_route {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { set_ecmp_group; drop; }
        default_action = drop();
    }

    table ecmp_member {
        key = { meta.ecmp_member: exact; }
        actions = { set_nhop; drop; }
        default_action = drop();
    }

    apply {
        if (hdr.l4.isValid()) {
            if (ipv4_route.apply().hit) {
                ecmp_member.apply();
            }
        } else {
            drop();
        }
    }
}

control EcmpEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply { }
}

control EcmpComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control EcmpDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.l4);
    }
}

V1Switch(EcmpParser(), EcmpVerifyChecksum(), EcmpIngress(), EcmpEgress(),
         EcmpComputeChecksum(), EcmpDeparser()) main;
