// acl_ternary: an access-control list matched with ternary keys and
// priorities. The highest-priority matching entry decides whether a packet
// is forwarded (to the port the entry names) or dropped; a packet that no
// entry matches is dropped by the default action.
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

struct metadata_t { }

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    ports_t    l4;
}

parser AclParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
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
        // TCP (6) and UDP (17) both start with source and destination ports.
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

control AclVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control AclIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action deny() {
        mark_to_drop(standard_metadata);
    }

    action permit(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    table acl {
        key = {
            hdr.ipv4.srcAddr:  ternary;
            hdr.ipv4.dstAddr:  ternary;
            hdr.ipv4.protocol: ternary;
            hdr.l4.dstPort:    ternary;
        }
        actions = { permit; deny; }
        size = 256;
        default_action = deny();
    }

    apply {
        if (hdr.ipv4.isValid()) {
            acl.apply();
        } else {
            deny();
        }
    }
}

control AclEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply { }
}

control AclComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control AclDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.l4);
    }
}

V1Switch(AclParser(), AclVerifyChecksum(), AclIngress(), AclEgress(),
         AclComputeChecksum(), AclDeparser()) main;
