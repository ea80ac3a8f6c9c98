// for loops: with a trip count known at compile time they are unrolled
// (nested loops, continue, break, for ... in ranges, a counting-down loop);
// with a run-time bound they jump back to their test.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> sum; bit<8> prod; bit<8> odd; bit<8> brk; bit<8> down; bit<8> tri; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control NoVerify(inout headers h, inout metadata m) { apply { } }
control MyIngress(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action loops() {
        h.h.sum = 0;
        for (bit<8> i = 1; i <= 4; i = i + 1) {
            h.h.sum = h.h.sum + i * h.h.a;
        }
        h.h.prod = 0;
        for (bit<8> i = 0; i < 3; i = i + 1) {
            for (bit<8> j in 1 .. 2) {
                h.h.prod = h.h.prod + j;
            }
        }
        h.h.odd = 0;
        for (bit<8> i in 0 .. 9) {
            if ((i & 1) == 0) { continue; }
            h.h.odd = h.h.odd + i;
        }
        h.h.brk = 0;
        for (bit<8> i = 0; i < 12; i = i + 1) {
            if (i == h.h.a) { break; }
            h.h.brk = h.h.brk + 1;
        }
        // A run-time bound: a loop with a backward jump.
        h.h.tri = 0;
        for (bit<8> i = 1; i <= (h.h.a & 0x0F); i = i + 1) {
            if (i == 7) { break; }
            h.h.tri = h.h.tri + i;
        }
        h.h.down = 0;
        for (bit<4> k = 3; k != 15; k = k - 1) {
            h.h.down = h.h.down + 1;
        }
    }
    table t { actions = { loops; } const default_action = loops(); }
    apply { sm.egress_spec = 1; t.apply(); }
}
control MyEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }
control MyDeparser(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), NoVerify(), MyIngress(), MyEgress(), NoCompute(), MyDeparser()) main;
