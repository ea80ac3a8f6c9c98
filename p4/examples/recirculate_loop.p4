// recirculate_loop: recirculation. A "loop" header (EtherType 0x88b7) asks
// the switch to send the packet around its pipeline a number of times
// before it leaves. While passes remain, egress recirculates the packet: it
// re-enters the parser with instance_type 4 (recirculated), its header
// changes kept and its metadata reset, except the pass counter, which is in
// field list 0 and so preserved. The last pass writes the count into the
// header and leaves by the port the header names.
#include <core.p4>
#include <v1model.p4>

const bit<32> INSTANCE_RECIRCULATED = 4;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header loop_t {
    bit<8> remaining;     // passes still to make
    bit<8> passes;        // set on the last pass: passes made in this switch
    bit<8> recirculated;  // set on the last pass: 1 if it was recirculated
    bit<8> out_port;
}

struct metadata_t {
    @field_list(0)
    bit<8> passes;
    bit<1> again;
}

struct headers_t {
    ethernet_t ethernet;
    loop_t     loop;
}

parser LoopParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b7: parse_loop;
            default: accept;
        }
    }
    state parse_loop {
        packet.extract(hdr.loop);
        transition accept;
    }
}

control LoopVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control LoopIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply {
        if (!hdr.loop.isValid()) {
            mark_to_drop(standard_metadata);
            return;
        }
        meta.passes = meta.passes + 1;
        if (hdr.loop.remaining > 0) {
            hdr.loop.remaining = hdr.loop.remaining - 1;
            meta.again = 1;
        } else {
            meta.again = 0;
            hdr.loop.passes = meta.passes;
            if (standard_metadata.instance_type == INSTANCE_RECIRCULATED) {
                hdr.loop.recirculated = 1;
            } else {
                hdr.loop.recirculated = 0;
            }
        }
        standard_metadata.egress_spec = (bit<9>)hdr.loop.out_port;
    }
}

control LoopEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        if (meta.again == 1) {
            recirculate_preserving_field_list(0);  // keeps meta.passes
        }
    }
}

control LoopComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control LoopDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.loop);
    }
}

V1Switch(LoopParser(), LoopVerifyChecksum(), LoopIngress(), LoopEgress(),
         LoopComputeChecksum(), LoopDeparser()) main;
