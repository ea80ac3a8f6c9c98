// Named arguments bind by name, never by position: V1Switch's blocks,
// a control's constructor, an action call and an extern method are all
// given out of order (p4c binds each by name).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
}

struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Sub(inout h_t h)(bit<8> first, bit<8> second) {
    apply { h.b = first - second; }
}

control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;
    Sub(second = 1, first = 10) sub;
    action set(bit<9> port, bit<8> value) {
        sm.egress_spec = port;
        hdr.h.a = value;
    }
    apply {
        set(value = 0x11, port = 2);
        sub.apply(h = hdr.h);
        r.write(value = 0x33, index = 1);
        r.read(index = 1, result = hdr.h.c);
    }
}

// The egress writes a mark the ingress never writes: bound by position,
// it would run as the ingress and the packet would leave on port 0.
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { hdr.h.a = hdr.h.a + 1; }
}
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(vr = Vc(), eg = Eg(), p = P(), dep = Dp(), ig = Ig(), ck = Cc()) main;
