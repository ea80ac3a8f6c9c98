// port0_to_port1: every frame received on port 0 leaves on port 1 unchanged;
// frames from other ports are dropped. No tables: the program forwards as
// soon as it runs, before any controller.
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
        if (sm.ingress_port == 0) {
            sm.egress_spec = 1;
        } else {
            mark_to_drop(sm);
        }
    }
}

control NoEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }

control Emit(packet_out packet, in headers_t hdr) {
    apply { packet.emit(hdr.ethernet); }
}

V1Switch(P(), NoVerify(), Forward(), NoEgress(), NoUpdate(), Emit()) main;
