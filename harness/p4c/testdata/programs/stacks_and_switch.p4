// Exercises header stacks (parser loop with .next/.last, push_front,
// pop_front, constant indexes, copies between headers), a switch on a
// value with a fall-through label, and parser errors seen in ingress.
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<8> kind;
    bit<8> len;
}

header v_t {
    bit<8> val;
}

struct headers_t {
    tag_t  tag;
    v_t[3] vs;
    v_t    extra;
}

struct meta_t {
    bit<8> sum;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.tag);
        transition select(hdr.tag.len) {
            0: accept;
            default: more;
        }
    }
    state more {
        pkt.extract(hdr.vs.next);
        transition select(hdr.vs.last.val) {
            0: accept;
            default: more;
        }
    }
}

control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        meta.sum = 0;
        if (hdr.vs[0].isValid()) { meta.sum = meta.sum + hdr.vs[0].val; }
        if (hdr.vs[1].isValid()) { meta.sum = meta.sum + hdr.vs[1].val; }
        if (hdr.vs[2].isValid()) { meta.sum = meta.sum + hdr.vs[2].val; }
        switch (hdr.tag.kind) {
            1: {
                hdr.vs.push_front(1);
                hdr.vs[0].setValid();
                hdr.vs[0].val = meta.sum;
            }
            2: { hdr.vs.pop_front(1); }
            3:
            4: {
                hdr.extra.setValid();
                hdr.extra.val = 0x34;
            }
            default: { hdr.extra = hdr.vs[0]; }
        }
        if (sm.parser_error != error.NoError) {
            hdr.tag.len = 0xee;
        }
    }
}

control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }

control Dp(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.tag);
        pkt.emit(hdr.vs);
        pkt.emit(hdr.extra);
    }
}

V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
