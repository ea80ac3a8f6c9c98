// mpls_label_stack: MPLS label switching with a header stack. As an edge
// router the switch pushes a label onto IPv4 packets (push_front and
// setValid); as a core router it swaps the top label, decrementing its TTL,
// or pops it (pop_front), restoring the IPv4 EtherType when the popped
// label was the bottom of the stack.
#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_IPV4 = 0x0800;
const bit<16> TYPE_MPLS = 0x8847;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header mpls_t {
    bit<20> label;
    bit<3>  tc;
    bit<1>  bos;
    bit<8>  ttl;
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

struct metadata_t { }

struct headers_t {
    ethernet_t ethernet;
    mpls_t[3]  mpls;
    ipv4_t     ipv4;
}

parser MplsParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_MPLS: parse_mpls;
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_mpls {
        packet.extract(hdr.mpls.next);
        transition select(hdr.mpls.last.bos) {
            0: parse_mpls;
            1: parse_ipv4;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control MplsVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MplsIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }

    action push_label(bit<20> label, bit<9> port) {
        hdr.mpls.push_front(1);
        hdr.mpls[0].setValid();
        hdr.mpls[0].label = label;
        hdr.mpls[0].tc = 0;
        hdr.mpls[0].bos = 1;
        hdr.mpls[0].ttl = 64;
        hdr.ethernet.etherType = TYPE_MPLS;
        standard_metadata.egress_spec = port;
    }

    action swap_label(bit<20> label, bit<9> port) {
        hdr.mpls[0].label = label;
        hdr.mpls[0].ttl = hdr.mpls[0].ttl - 1;
        standard_metadata.egress_spec = port;
    }

    action pop_label(bit<9> port) {
        hdr.ethernet.etherType = (hdr.mpls[0].bos == 1) ? TYPE_IPV4 : TYPE_MPLS;
        hdr.mpls.pop_front(1);
        standard_metadata.egress_spec = port;
    }

    // Edge: which label an IPv4 destination gets.
    table ler {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { push_label; drop; }
        default_action = drop();
    }

    // Core: what to do with a top label.
    table lsr {
        key = { hdr.mpls[0].label: exact; }
        actions = { swap_label; pop_label; drop; }
        default_action = drop();
    }

    apply {
        if (hdr.mpls[0].isValid()) {
            lsr.apply();
        } else if (hdr.ipv4.isValid()) {
            ler.apply();
        } else {
            drop();
        }
    }
}

control MplsEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply { }
}

control MplsComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MplsDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.mpls);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(MplsParser(), MplsVerifyChecksum(), MplsIngress(), MplsEgress(),
         MplsComputeChecksum(), MplsDeparser()) main;
