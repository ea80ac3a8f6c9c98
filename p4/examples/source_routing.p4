// source_routing: header stacks. The sender lists the output port of every
// hop in a stack of source-route headers (EtherType 0x1234), the last one
// flagged with bos ("bottom of stack"). Each switch sends the packet out of
// the port named by the first entry and pops it; when it pops the last one
// it restores the EtherType to IPv4 for the payload.
#include <core.p4>
#include <v1model.p4>

#define MAX_HOPS 4

const bit<16> TYPE_SRCROUTING = 0x1234;
const bit<16> TYPE_IPV4 = 0x0800;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header srcRoute_t {
    bit<1>  bos;
    bit<15> port;
}

struct metadata_t { }

struct headers_t {
    ethernet_t              ethernet;
    srcRoute_t[MAX_HOPS]    srcRoutes;
}

parser SrParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_SRCROUTING: parse_srcRouting;
            default: accept;
        }
    }
    state parse_srcRouting {
        packet.extract(hdr.srcRoutes.next);
        transition select(hdr.srcRoutes.last.bos) {
            1: accept;
            default: parse_srcRouting;
        }
    }
}

control SrVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control SrIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (!hdr.srcRoutes[0].isValid()) {
            mark_to_drop(standard_metadata);
            return;
        }
        if (hdr.srcRoutes[0].bos == 1) {
            hdr.ethernet.etherType = TYPE_IPV4;
        }
        standard_metadata.egress_spec = (bit<9>)hdr.srcRoutes[0].port;
        hdr.srcRoutes.pop_front(1);
    }
}

control SrEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control SrComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control SrDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.srcRoutes);
    }
}

V1Switch(SrParser(), SrVerifyChecksum(), SrIngress(), SrEgress(),
         SrComputeChecksum(), SrDeparser()) main;
