// V1Switch blocks with constructor arguments (p4c's parser-unroll tests
// write MyParser(false)): the blocks see them as constants.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm)(bool parse_it) {
    state start {
        transition select(parse_it) {
            true: yes;
            default: accept;
        }
    }
    state yes { pkt.extract(hdr.h); transition accept; }
}

control Ig(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm)(bit<9> port, bit<8> mark) {
    apply {
        sm.egress_spec = port;
        hdr.h.b = mark;
    }
}

control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t m) { apply { } }
control Cc(inout headers_t hdr, inout meta_t m) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(true), Vc(), Ig(3, 0x5a), Eg(), Cc(), Dp()) main;
