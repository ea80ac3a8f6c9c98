// meters: a two-rate three-colour meter per ingress port (RFC 2698, counting
// packets). The colour is written into a "report" header (EtherType 0x88b6):
// 0 green, 1 yellow, 2 red. Green and yellow packets are forwarded to port 3;
// red ones are dropped.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header report_t {
    bit<8> color;
}

struct metadata_t { }

struct headers_t {
    ethernet_t ethernet;
    report_t   report;
}

parser MeterParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b6: parse_report;
            default: accept;
        }
    }
    state parse_report {
        packet.extract(hdr.report);
        transition accept;
    }
}

control MeterVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MeterIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    meter(8, MeterType.packets) port_meter;

    apply {
        if (!hdr.report.isValid()) {
            mark_to_drop(standard_metadata);
            return;
        }
        port_meter.execute_meter((bit<32>)standard_metadata.ingress_port, hdr.report.color);
        if (hdr.report.color == 2) {
            mark_to_drop(standard_metadata);
        } else {
            standard_metadata.egress_spec = 3;
        }
    }
}

control MeterEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply { }
}

control MeterComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MeterDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.report);
    }
}

V1Switch(MeterParser(), MeterVerifyChecksum(), MeterIngress(), MeterEgress(),
         MeterComputeChecksum(), MeterDeparser()) main;
