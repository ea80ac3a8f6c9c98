// timestamps: ingress writes ingress_global_timestamp into the header
// only for a = 1; egress writes egress_global_timestamp always and, with
// EGRESS_READS_INGRESS, for a = 2, ingress_global_timestamp too.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<48> ts_in;
    bit<48> ts_eg;
    bit<48> ts_in_eg;
}

struct headers { h_t h; }
struct metadata { }

parser P(packet_in pk, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (h.h.a == 1) {
            h.h.ts_in = sm.ingress_global_timestamp;
        }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        h.h.ts_eg = sm.egress_global_timestamp;
#ifdef EGRESS_READS_INGRESS
        if (h.h.a == 2) {
            h.h.ts_in_eg = sm.ingress_global_timestamp;
        }
#endif
    }
}
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pk, in headers h) { apply { pk.emit(h.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
