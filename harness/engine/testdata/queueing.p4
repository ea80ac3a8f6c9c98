// queueing: ingress sends every packet to port 1 with the priority its
// header asks for; egress writes the queueing metadata into the header
// (v1model has no qid field: qid stays 7).
#include <core.p4>
#include <v1model.p4>

header q_t {
    bit<8>  prio;
    bit<32> enq_qdepth;
    bit<32> deq_qdepth;
    bit<32> deq_timedelta;
    bit<8>  qid;
}

struct headers { q_t q; }
struct metadata { }

parser P(packet_in pk, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pk.extract(h.q); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        sm.priority = (bit<3>) h.q.prio;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        h.q.enq_qdepth = (bit<32>) sm.enq_qdepth;
        h.q.deq_qdepth = (bit<32>) sm.deq_qdepth;
        h.q.deq_timedelta = sm.deq_timedelta;
        h.q.qid = 7;
    }
}
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pk, in headers h) { apply { pk.emit(h.q); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
