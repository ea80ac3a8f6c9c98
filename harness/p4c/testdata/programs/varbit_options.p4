// varbit: extract with a run-time length (extract_VL), assignment between
// varbit fields and a varbit local (assign_VL), varbit equality, emit;
// also lookahead of a whole header, and / and % on run-time values.
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> n; }
header opt_t { bit<8> kind; varbit<32> data; }
struct headers { len_t l; opt_t o; opt_t o2; }
struct metadata { bit<8> quo; bit<8> rem; }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        len_t peek = pkt.lookahead<len_t>();
        transition select(peek.n) {
            0: accept;
            default: options;
        }
    }
    state options {
        pkt.extract(h.l);
        pkt.extract(h.o, (bit<32>)h.l.n * 8);
        transition accept;
    }
}

control NoVerify(inout headers h, inout metadata m) { apply { } }

control MyIngress(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (h.o.isValid()) {
            h.o2.setValid();
            h.o2.kind = 7;
            h.o2.data = h.o.data;
            varbit<32> s = h.o.data;
            if (s == h.o2.data) {
                h.l.n = h.l.n | 0x80;
            }
            m.quo = h.o.kind / 3;
            m.rem = h.o.kind % 5;
            h.o.kind = (m.quo << 4) | m.rem;
        }
    }
}

control MyEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }

control MyDeparser(packet_out pkt, in headers h) {
    apply {
        pkt.emit(h.l);
        pkt.emit(h.o);
        pkt.emit(h.o2);
    }
}

V1Switch(P(), NoVerify(), MyIngress(), MyEgress(), NoCompute(), MyDeparser()) main;
