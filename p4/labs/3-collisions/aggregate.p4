// Lab 3, collisions and recovery (starter: fill in the TODOs; README.md says how): in-network aggregation with
// a fixed number of slots. Workers send gradient fragments (4 int32 values)
// to the parameter server (PS) over UDP port 9999; the switch adds the
// fragments of the same id in a slot (fragment id modulo SLOTS) and sends
// the PS one packet with the sum once fanin workers have contributed.
//
// Two fragment ids can need the same slot: a collision. The second is not
// added to the first's sum (that would corrupt both): it goes on to the PS
// unaggregated, marked PASSED, and the PS adds it itself. A worker that
// times out resends its fragment marked RESEND; if the switch holds a
// partial sum of that fragment it releases it to the PS marked PARTIAL (the
// count of workers it holds in fanin) and frees the slot, so the PS can
// finish the sum from the workers' resends.
#include <core.p4>
#include <v1model.p4>

#define SLOTS 64

const bit<16> AGG_PORT = 9999;

const bit<8> FLAG_RESULT  = 0x80; // a complete sum from the switch
const bit<8> FLAG_PASSED  = 0x40; // a fragment the switch did not aggregate
const bit<8> FLAG_RESEND  = 0x20; // a worker's resend after a timeout
const bit<8> FLAG_PARTIAL = 0x10; // a partial sum released on a resend

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

header udp_t {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<16> length;
    bit<16> checksum;
}

// The aggregation header: which fragment, how many workers' fragments make
// its sum, and the values.
header agg_t {
    bit<16> job;
    bit<8>  fanin;
    bit<8>  flags;
    bit<32> fragment;
    bit<32> v0;
    bit<32> v1;
    bit<32> v2;
    bit<32> v3;
}

struct metadata { }

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    agg_t      agg;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            17: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dstPort) {
            AGG_PORT: parse_agg;
            default: accept;
        }
    }
    state parse_agg {
        packet.extract(hdr.agg);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    // Slot i holds the sum of fragment owner[i] over count[i] workers;
    // count 0 means free.
    register<bit<32>>(SLOTS) owner;
    register<bit<8>>(SLOTS) count;
    register<bit<32>>(SLOTS) sum0;
    register<bit<32>>(SLOTS) sum1;
    register<bit<32>>(SLOTS) sum2;
    register<bit<32>>(SLOTS) sum3;
    // collisions[0] counts fragments passed on because their slot was taken.
    counter(1, CounterType.packets) collisions;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    action ipv4_forward(bit<48> dstAddr, bit<9> port) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = dstAddr;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { ipv4_forward; drop; NoAction; }
        size = 1024;
        default_action = drop();
    }

    // free empties a slot.
    action free(bit<32> slot) {
        count.write(slot, 0);
        owner.write(slot, 0);
    }

    apply {
        if (hdr.agg.isValid()) {
            bit<32> slot = hdr.agg.fragment & (SLOTS - 1);
            bit<32> holder;
            bit<8> n;
            owner.read(holder, slot);
            count.read(n, slot);
            bit<32> s0; bit<32> s1; bit<32> s2; bit<32> s3;
            sum0.read(s0, slot);
            sum1.read(s1, slot);
            sum2.read(s2, slot);
            sum3.read(s3, slot);
            if ((hdr.agg.flags & FLAG_RESEND) != 0) {
                /* TODO (recovery): if this slot holds a partial sum of this
                 * fragment (n != 0 and holder is the fragment), put the sums
                 * into the packet, set fanin to n and the flags to
                 * FLAG_PARTIAL, and free the slot. Either way, zero the UDP
                 * checksum and route the packet to the PS. */
                drop();
            } else if (n == 0) {
                // A free slot: this fragment claims it.
                owner.write(slot, hdr.agg.fragment);
                count.write(slot, 1);
                sum0.write(slot, hdr.agg.v0);
                sum1.write(slot, hdr.agg.v1);
                sum2.write(slot, hdr.agg.v2);
                sum3.write(slot, hdr.agg.v3);
                drop();
            } else if (holder == hdr.agg.fragment) {
                // Add and, with the last worker's fragment, forward the sum.
                s0 = s0 + hdr.agg.v0;
                s1 = s1 + hdr.agg.v1;
                s2 = s2 + hdr.agg.v2;
                s3 = s3 + hdr.agg.v3;
                n = n + 1;
                if (n == hdr.agg.fanin) {
                    hdr.agg.v0 = s0;
                    hdr.agg.v1 = s1;
                    hdr.agg.v2 = s2;
                    hdr.agg.v3 = s3;
                    hdr.agg.flags = FLAG_RESULT;
                    hdr.udp.checksum = 0;
                    free(slot);
                    ipv4_lpm.apply();
                } else {
                    count.write(slot, n);
                    sum0.write(slot, s0);
                    sum1.write(slot, s1);
                    sum2.write(slot, s2);
                    sum3.write(slot, s3);
                    drop();
                }
            } else {
                /* TODO (collision): another fragment holds the slot. Count
                 * it in collisions[0], mark the packet FLAG_PASSED, zero the
                 * UDP checksum and route it to the PS unaggregated. */
                drop();
            }
        } else if (hdr.ipv4.isValid()) {
            ipv4_lpm.apply();
        } else {
            drop();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.agg);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
