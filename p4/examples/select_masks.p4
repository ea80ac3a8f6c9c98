// select_masks: parser transitions that match with masks and on tuples with
// don't-care members. The parser classifies each frame; ingress sends it to
// the port numbered after its category:
//   1 IPv4 unicast, 2 IPv4 multicast (224.0.0.0/4), 3 IPv4 from 10.0.0.0/8
//   to UDP, 4 an experimental EtherType 0x88xx, 5 anything else.
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

struct metadata_t {
    bit<9> category;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

parser SelParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        meta.category = 5;
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800 &&& 0xffff: parse_ipv4;
            0x8800 &&& 0xff00: experimental;
            default: accept;
        }
    }
    state experimental {
        meta.category = 4;
        transition accept;
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        meta.category = 1;
        transition select(hdr.ipv4.dstAddr, hdr.ipv4.srcAddr, hdr.ipv4.protocol) {
            (0xe0000000 &&& 0xf0000000, _, _): ipv4_multicast;
            (_, 0x0a000000 &&& 0xff000000, 17): ipv4_udp_from_ten;
            default: accept;
        }
    }
    state ipv4_multicast {
        meta.category = 2;
        transition accept;
    }
    state ipv4_udp_from_ten {
        meta.category = 3;
        transition accept;
    }
}

control SelVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control SelIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = meta.category;
    }
}

control SelEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply { }
}

control SelComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control SelDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(SelParser(), SelVerifyChecksum(), SelIngress(), SelEgress(),
         SelComputeChecksum(), SelDeparser()) main;
