// port_from_frame: every frame leaves on the port its destination MAC
// address's low 9 bits name, a port no STF line or table entry needs to
// mention.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers_t { ethernet_t ethernet; }
struct metadata_t { }

parser P(packet_in packet, out headers_t hdr, inout metadata_t meta,
         inout standard_metadata_t sm) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control NoVerify(inout headers_t hdr, inout metadata_t meta) { apply { } }
control NoUpdate(inout headers_t hdr, inout metadata_t meta) { apply { } }

control Forward(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = hdr.ethernet.dstAddr[8:0];
    }
}

control NoEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }

control Emit(packet_out packet, in headers_t hdr) {
    apply { packet.emit(hdr.ethernet); }
}

V1Switch(P(), NoVerify(), Forward(), NoEgress(), NoUpdate(), Emit()) main;
