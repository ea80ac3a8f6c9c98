// error: unsupported: ig.t is reached again after itself (a table applied twice on one path)
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { bit<8> x; }

parser p(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

control ig(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.b = v; }
    table t { key = { hdr.h.a: exact; } actions = { set; NoAction; } }
    apply {
        t.apply();
        if (hdr.h.b == 1) {
            t.apply();
        }
    }
}

control vc(inout headers_t hdr, inout meta_t m) { apply { } }
control cc(inout headers_t hdr, inout meta_t m) { apply { } }
control eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
V1Switch(p(), vc(), ig(), eg(), cc(), dp()) main;

