// Language features with P4Runtime entities of their own: a parser value
// set (ValueSetEntry), a digest (DigestList) and a table with idle
// timeouts (IdleTimeoutNotification).
#include <core.p4>
#include <v1model.p4>

header eth_t {
    bit<48> dst;
    bit<48> src;
    bit<16> type;
}
header tag_t {
    bit<8> kind;
    bit<8> value;
}
struct headers_t { eth_t eth; tag_t tag; }
struct learn_t {
    bit<48> src;
    bit<9>  port;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) tagged;
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) {
            tagged: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action learn() {
        digest<learn_t>(1, { hdr.eth.src, sm.ingress_port });
        sm.egress_spec = 1;
    }
    table flows {
        key = { hdr.eth.dst: exact; }
        actions = { fwd; learn; }
        default_action = learn();
        support_timeout = true;
    }
    apply {
        flows.apply();
        if (hdr.tag.isValid()) {
            sm.egress_spec = 7;
        }
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.tag); } }
V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
