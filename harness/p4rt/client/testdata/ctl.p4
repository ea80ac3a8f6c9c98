// A program with one of every control-plane object the client handles:
// exact, lpm, ternary, range and optional match fields, a direct counter
// and a direct meter, an indexed counter, meter and register, multicast,
// cloning, and packet_in / packet_out headers for port 255 (the CPU port
// the tests give the server).
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 255;

@controller_header("packet_in")
header packet_in_h {
    bit<9> ingress_port;
    bit<7> pad;
}

@controller_header("packet_out")
header packet_out_h {
    bit<9> egress_port;
    bit<7> pad;
}

header ethernet_h {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers {
    packet_in_h  packet_in;
    packet_out_h packet_out;
    ethernet_h   ethernet;
}

struct meta {
    bit<2> color;
}

parser CtlParser(packet_in p, out headers hdr, inout meta m, inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            CPU_PORT: packet_out;
            default: ethernet;
        }
    }
    state packet_out {
        p.extract(hdr.packet_out);
        transition ethernet;
    }
    state ethernet {
        p.extract(hdr.ethernet);
        transition accept;
    }
}

control CtlVerify(inout headers hdr, inout meta m) { apply {} }

control CtlIngress(inout headers hdr, inout meta m, inout standard_metadata_t sm) {
    counter(8, CounterType.packets_and_bytes) port_in;
    meter(4, MeterType.packets) port_rate;
    register<bit<16>>(8) last_type;
    direct_counter(CounterType.packets_and_bytes) fwd_hits;
    direct_meter<bit<2>>(MeterType.packets) acl_rate;

    action forward(bit<9> port) {
        sm.egress_spec = port;
        fwd_hits.count();
    }
    action flood(bit<16> group) {
        sm.mcast_grp = group;
        fwd_hits.count();
    }
    action to_cpu() {
        sm.egress_spec = CPU_PORT;
        fwd_hits.count();
    }
    action drop() {
        mark_to_drop(sm);
        fwd_hits.count();
    }
    table fwd {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; flood; to_cpu; drop; }
        default_action = drop();
        counters = fwd_hits;
    }

    action deny() {
        acl_rate.read(m.color);
        mark_to_drop(sm);
    }
    action allow() {
        acl_rate.read(m.color);
    }
    table acl {
        key = {
            hdr.ethernet.srcAddr: ternary;
            hdr.ethernet.etherType: range;
        }
        actions = { deny; allow; }
        default_action = allow();
        meters = acl_rate;
    }

    action mirror(bit<32> session) {
        clone(CloneType.I2E, session);
    }
    table mirror_by_prefix {
        key = {
            hdr.ethernet.dstAddr: lpm;
            sm.ingress_port: optional;
        }
        actions = { mirror; NoAction; }
        default_action = NoAction();
    }

    apply {
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            return;
        }
        port_in.count((bit<32>)sm.ingress_port);
        port_rate.execute_meter((bit<32>)sm.ingress_port, m.color);
        last_type.write((bit<32>)sm.ingress_port, hdr.ethernet.etherType);
        fwd.apply();
        acl.apply();
        mirror_by_prefix.apply();
    }
}

control CtlEgress(inout headers hdr, inout meta m, inout standard_metadata_t sm) {
    apply {
        if (sm.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = sm.ingress_port;
        }
    }
}

control CtlCompute(inout headers hdr, inout meta m) { apply {} }

control CtlDeparser(packet_out p, in headers hdr) {
    apply {
        p.emit(hdr.packet_in);
        p.emit(hdr.ethernet);
    }
}

V1Switch(CtlParser(), CtlVerify(), CtlIngress(), CtlEgress(), CtlCompute(), CtlDeparser()) main;
