// keys: ingress forwards by an exact table whose key fits in 8 bytes
// (a masked field, a validity bit and a 12-bit field of a header of
// unaligned fields), else by one whose key is 10 bytes, else to port 9;
// the tables' actions write the port into the header (to_marked, with
// four words of data, writes d and e too).
#include <core.p4>
#include <v1model.p4>

header k_t {
    bit<8>  a;
    bit<4>  b;
    bit<12> c;
    bit<48> d;
    bit<32> e;
}
header opt_t { bit<8> x; }

struct headers { k_t k; opt_t opt; }
struct metadata { }

parser P(packet_in pk, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.k);
        transition select(h.k.b) {
            1: take_opt;
            default: accept;
        }
    }
    state take_opt { pk.extract(h.opt); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action to(bit<9> port) {
        sm.egress_spec = port;
        h.k.b = (bit<4>) port;
    }
    action to_marked(bit<9> port, bit<48> d, bit<32> e, bit<8> unused) {
        to(port);
        h.k.d = d;
        h.k.e = e;
    }
    table short_key {
        key = { h.k.a & 0xf0: exact; h.opt.isValid(): exact; h.k.c: exact; }
        actions = { to; to_marked; NoAction; }
        default_action = NoAction();
    }
    table long_key {
        key = { h.k.d: exact; h.k.e: exact; }
        actions = { to; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 9;
        if (!short_key.apply().hit) {
            long_key.apply();
        }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pk, in headers h) { apply { pk.emit(h.k); pk.emit(h.opt); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
