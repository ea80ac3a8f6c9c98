// qos_classify: DiffServ marking. Operators classify flows by protocol and
// destination port with optional keys (either may be left out); a table of
// const entries, compiled into the program, maps each traffic class to a
// DSCP code point. Marked packets leave by the priority uplink (port 1),
// the others by port 2. The switch on action_run picks the port; the ECN
// bits are kept, and the IPv4 checksum is recomputed.
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
    bit<3> tc;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    ports_t    l4;
}

parser QosParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
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

control QosVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control QosIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action set_class(bit<3> tc) {
        meta.tc = tc;
    }

    action mark(bit<6> dscp) {
        // DSCP is the upper six bits of the old ToS byte; keep ECN.
        hdr.ipv4.diffserv = dscp ++ hdr.ipv4.diffserv[1:0];
    }

    table classify {
        key = {
            hdr.ipv4.protocol: optional;
            hdr.l4.dstPort:    optional;
        }
        actions = { set_class; NoAction; }
        default_action = NoAction();
    }

    table dscp_of_class {
        key = { meta.tc: exact; }
        actions = { mark; NoAction; }
        const entries = {
            5 : mark(46);   // EF
            3 : mark(26);   // AF31
            1 : mark(10);   // AF11
        }
        default_action = NoAction();
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            mark_to_drop(standard_metadata);
            exit;
        }
        meta.tc = 0;
        classify.apply();
        switch (dscp_of_class.apply().action_run) {
            mark: {
                standard_metadata.egress_spec = 1;
            }
            default: {
                standard_metadata.egress_spec = 2;
            }
        }
    }
}

control QosEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply { }
}

control QosComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control QosDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.l4);
    }
}

V1Switch(QosParser(), QosVerifyChecksum(), QosIngress(), QosEgress(),
         QosComputeChecksum(), QosDeparser()) main;
