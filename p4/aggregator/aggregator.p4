/*
 * GRID aggregator: forwards IPv4 traffic and aggregates gradient fragments
 * at the switch the routing plan names (GRID, Fang et al., IEEE/ACM ToN 2023,
 * Sec. 3.4 and 5), for v1model (bmv2 simple_switch and grid's engine).
 *
 * p4/README.md documents the packet format, the tables the controller fills
 * and the loss-recovery protocol; harness/gradproto holds the Go reference
 * model this program must match packet for packet.
 *
 * Compile-time parameters (-D):
 *   GRID_UNITS=M        memory units (default 16384)
 *   GRID_VALUES_64      64 int32 values per packet instead of 32
 */
#include <core.p4>
#include <v1model.p4>

/* From V1MODEL_VERSION 20200408 on, v1model's register, counter and meter
 * take their index type as a type argument; before (p4c's default) the
 * index is bit<32>. The program indexes with bit<32> either way. */
#if V1MODEL_VERSION >= 20200408
#define GRID_REGISTER(T) register<T, bit<32>>
#define GRID_COUNTER counter<bit<32>>
#define GRID_METER meter<bit<32>>
#else
#define GRID_REGISTER(T) register<T>
#define GRID_COUNTER counter
#define GRID_METER meter
#endif

#ifndef GRID_UNITS
#define GRID_UNITS 16384
#endif

/* Per-job statistics: job_stats[(job mod GRID_JOBS) * 16 + event]. */
#define GRID_JOBS 1024
#define GRID_JOB_MASK 1023
#define NUM_PORTS 512

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  PROTO_UDP = 17;
const bit<16> GRID_UDP_PORT = 18258;
/* UDP length of a control packet: UDP header + GRID header, no values. */
const bit<16> GRID_CONTROL_UDP_LEN = 28;
const bit<16> GRID_CONTROL_IP_LEN = 48;
/* UDP length of a data packet: the control packet's and N int32 values. */
#ifdef GRID_VALUES_64
const bit<16> GRID_DATA_UDP_LEN = GRID_CONTROL_UDP_LEN + 4 * 64;
#else
const bit<16> GRID_DATA_UDP_LEN = GRID_CONTROL_UDP_LEN + 4 * 32;
#endif

const bit<8> FLAG_RESULT     = 0x80;
const bit<8> FLAG_CONGESTION = 0x40;
const bit<8> FLAG_RESEND     = 0x20;
const bit<8> FLAG_OVERFLOW   = 0x10;
const bit<8> FLAG_AGGREGATED = 0x08;

/* Results to this address are multicast to the job's workers. */
const bit<32> BROADCAST = 0xffffffff;

/* Unit states: the top 16 bits of unit_tag. */
const bit<16> UNIT_EMPTY  = 0;
const bit<16> UNIT_ACTIVE = 1;
const bit<16> UNIT_DONE   = 2;

/* job_stats events. */
const bit<32> EV_RECEIVED  = 0;
const bit<32> EV_ABSORBED  = 1;
const bit<32> EV_EMITTED   = 2;
const bit<32> EV_COLLISION = 3;
const bit<32> EV_DUPLICATE = 4;
const bit<32> EV_OVERFLOW  = 5;
const bit<32> EV_CAPACITY  = 6;
const bit<32> EV_PASSED    = 7;
const bit<32> EV_RECLAIMED = 8;

/* Where ingress sends a packet. */
const bit<8> ROUTE_LPM  = 0;
const bit<8> ROUTE_DONE = 1;
const bit<8> ROUTE_DROP = 2;

const bit<32> PKT_INSTANCE_TYPE_REPLICATION = 5;

typedef bit<48> mac_t;
typedef bit<32> ip4_t;
typedef bit<9>  port_t;

header ethernet_t {
    mac_t   dstAddr;
    mac_t   srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<6>  dscp;
    bit<2>  ecn;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    ip4_t   srcAddr;
    ip4_t   dstAddr;
}

header udp_t {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<16> length;
    bit<16> checksum;
}

/* The GRID header (20 bytes), see p4/README.md. */
header grid_t {
    bit<8>  version;
    bit<8>  flags;
    bit<16> job;
    bit<16> node;
    bit<16> count;
    bit<32> frag;
    bit<64> bitmap;
}

#include "lanes_types.p4"

struct headers_t {
    ethernet_t       ethernet;
    ipv4_t           ipv4;
    udp_t            udp;
    grid_t           grid;
    grid_values_t    vals;
#ifdef GRID_VALUES_64
    grid_values_hi_t vals_hi;
#endif
}

struct metadata_t {
    bit<8>  route;
    bit<1>  agg;
    bit<16> fanin;
    bit<48> reclaim;
    bit<48> idle;
    bit<32> stat_base;
    bit<2>  color;
    bit<32> idx;
    bit<32> unit_offset;
    /* the unit's registers */
    bit<64> tag;
    bit<16> state;
    bit<64> seen;
    bit<16> count;
    bit<64> summed;
    bit<16> nsum;
    /* decisions */
    bit<1>  same;
    bit<1>  dup;
    bit<1>  resend;
    bit<32> keep;
    bit<32> ovf;
    bit<16> new_count;
    bit<64> new_seen;
    bit<32> tmp_ip;
    bit<16> tmp_port;
    lanes_t old;
    lanes_t sum;
}

parser GridParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.protocol) {
            (4w5, PROTO_UDP): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dstPort) {
            GRID_UDP_PORT: parse_grid;
            default: accept;
        }
    }
    state parse_grid {
        pkt.extract(hdr.grid);
        /* Values only in a packet of exactly N values: a control packet, or
         * one of another build, is never aggregated (nor added in part). */
        transition select(hdr.udp.length) {
            GRID_DATA_UDP_LEN: parse_values;
            default: accept;
        }
    }
    state parse_values {
        pkt.extract(hdr.vals);
#ifdef GRID_VALUES_64
        pkt.extract(hdr.vals_hi);
#endif
        transition accept;
    }
}

control GridVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control GridIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    GRID_COUNTER(NUM_PORTS, CounterType.packets_and_bytes) port_rx;
    GRID_COUNTER(GRID_JOBS * 16, CounterType.packets) job_stats;
    /* The switch's processing capacity C_s for fragments it aggregates. */
    GRID_METER(1, MeterType.packets) capacity;

    /* Memory units: tag = state ++ job ++ fragment; seen/count are the
     * workers counted towards the fan-in, summed/nsum those whose values
     * the lanes hold. */
    GRID_REGISTER(bit<64>)(GRID_UNITS) unit_tag;
    GRID_REGISTER(bit<64>)(GRID_UNITS) unit_seen;
    GRID_REGISTER(bit<16>)(GRID_UNITS) unit_count;
    GRID_REGISTER(bit<64>)(GRID_UNITS) unit_summed;
    GRID_REGISTER(bit<16>)(GRID_UNITS) unit_nsum;
    /* When the unit last took a contribution (ingress_global_timestamp, microseconds). */
    GRID_REGISTER(bit<48>)(GRID_UNITS) unit_time;

#include "lanes_ingress.p4"

    action drop() {
        mark_to_drop(standard_metadata);
    }

    /* Next hop: MAC rewrite (source MAC is set per port in egress). */
    action forward(mac_t dmac, port_t port) {
        hdr.ethernet.dstAddr = dmac;
        standard_metadata.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    action multicast(bit<16> group) {
        standard_metadata.mcast_grp = group;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    /* reclaim: a unit of another fragment idle for this many microseconds may be
     * taken over (0: never). */
    action aggregate(bit<16> fanin, bit<48> reclaim) {
        meta.fanin = fanin;
        meta.reclaim = reclaim;
        meta.unit_offset = 0;
    }

    /* A further node id of this switch for the same job: a second set of
     * workers of the same fragments (a bitmap has 64 slots). Its fragments
     * take the unit unit_offset (1..GRID_UNITS-1) after the one the hash
     * names, so two sets of one fragment never meet in one unit. */
    action aggregate_alias(bit<16> fanin, bit<48> reclaim, bit<32> unit_offset) {
        meta.fanin = fanin;
        meta.reclaim = reclaim;
        meta.unit_offset = unit_offset;
    }

    /* The packet leaves in-network processing for the PS. */
    action to_ps() {
        hdr.grid.flags = hdr.grid.flags | FLAG_AGGREGATED;
        hdr.udp.checksum = 0;
    }

    /* Turn the fragment into a control packet back to its worker. */
    action control_packet() {
        meta.tmp_ip = hdr.ipv4.srcAddr;
        hdr.ipv4.srcAddr = hdr.ipv4.dstAddr;
        hdr.ipv4.dstAddr = meta.tmp_ip;
        meta.tmp_port = hdr.udp.srcPort;
        hdr.udp.srcPort = hdr.udp.dstPort;
        hdr.udp.dstPort = meta.tmp_port;
        hdr.ipv4.ecn = 3;
        hdr.ipv4.totalLen = GRID_CONTROL_IP_LEN;
        hdr.udp.length = GRID_CONTROL_UDP_LEN;
        hdr.udp.checksum = 0;
        hdr.grid.flags = hdr.grid.flags | FLAG_CONGESTION;
        hdr.vals.setInvalid();
#ifdef GRID_VALUES_64
        hdr.vals_hi.setInvalid();
#endif
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { forward; drop; }
        default_action = drop();
        size = 4096;
    }

    direct_counter(CounterType.packets_and_bytes) grad_route_counter;

    /* Fragments on their way to their aggregation node, along the plan's
     * path for their worker (paths are per worker). */
    table grad_route {
        key = {
            hdr.grid.job: exact;
            hdr.grid.node: exact;
            hdr.ipv4.srcAddr: exact;
        }
        actions = { forward; NoAction; }
        default_action = NoAction();
        counters = grad_route_counter;
        size = 4096;
    }

    /* The (job, node) pairs this switch aggregates, with their fan-in. */
    table agg_config {
        key = {
            hdr.grid.job: exact;
            hdr.grid.node: exact;
        }
        actions = { aggregate; aggregate_alias; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    /* Result multicast group per (job, arrival port): results retrace the
     * gradients' paths, which may cross a switch twice. */
    table job_mcast {
        key = {
            hdr.grid.job: exact;
            standard_metadata.ingress_port: exact;
        }
        actions = { multicast; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    apply {
        port_rx.count((bit<32>)standard_metadata.ingress_port);
        meta.route = ROUTE_LPM;
        meta.agg = 0;
        if (!hdr.ipv4.isValid()) {
            meta.route = ROUTE_DROP;
        } else if (hdr.ipv4.ttl <= 1) {
            meta.route = ROUTE_DROP;
        } else if (hdr.grid.isValid()) {
            if ((hdr.grid.flags & FLAG_RESULT) != 0) {
                /* A result to 255.255.255.255 is for every worker of the
                 * job; one addressed to a worker (the PS answering its
                 * resend) is routed by IPv4 to that worker alone. */
                if (hdr.ipv4.dstAddr == BROADCAST) {
                    if (job_mcast.apply().hit) {
                        meta.route = ROUTE_DONE;
                    }
                }
            } else if ((hdr.grid.flags & (FLAG_AGGREGATED | FLAG_CONGESTION)) == 0) {
                if (agg_config.apply().hit) {
                    if (hdr.vals.isValid()) {
#ifdef GRID_VALUES_64
                        if (hdr.vals_hi.isValid()) {
                            meta.agg = 1;
                        }
#else
                        meta.agg = 1;
#endif
                    }
                }
                if (meta.agg == 0) {
                    if (grad_route.apply().hit) {
                        meta.route = ROUTE_DONE;
                    }
                }
            }
        }

        if (meta.agg == 1) {
            meta.stat_base = ((bit<32>)(hdr.grid.job & GRID_JOB_MASK)) << 4;
            job_stats.count(meta.stat_base | EV_RECEIVED);
            capacity.execute_meter((bit<32>)0, meta.color);
            if (meta.color != 0) {
                /* Over capacity: signalled like a collision. */
                job_stats.count(meta.stat_base | EV_CAPACITY);
                control_packet();
            } else {
                hash(meta.idx, HashAlgorithm.crc32, (bit<32>)0,
                     { hdr.grid.job, hdr.grid.frag }, (bit<32>)GRID_UNITS);
                meta.idx = meta.idx + meta.unit_offset;
                if (meta.idx >= (bit<32>)GRID_UNITS) {
                    meta.idx = meta.idx - (bit<32>)GRID_UNITS;
                }
                unit_tag.read(meta.tag, meta.idx);
                unit_seen.read(meta.seen, meta.idx);
                unit_count.read(meta.count, meta.idx);
                unit_summed.read(meta.summed, meta.idx);
                unit_nsum.read(meta.nsum, meta.idx);
                unit_time.read(meta.idle, meta.idx);
                meta.idle = standard_metadata.ingress_global_timestamp - meta.idle;
                meta.state = meta.tag[63:48];
                meta.same = 0;
                if (meta.state != UNIT_EMPTY) {
                    if (meta.tag[47:0] == (hdr.grid.job ++ hdr.grid.frag)) {
                        meta.same = 1;
                    }
                }
                meta.dup = 0;
                if ((meta.seen & hdr.grid.bitmap) != 0) {
                    meta.dup = 1;
                }
                meta.resend = 0;
                if ((hdr.grid.flags & FLAG_RESEND) != 0) {
                    meta.resend = 1;
                }

                if (meta.resend == 1 && (meta.same == 0 || meta.state != UNIT_ACTIVE)) {
                    /* A resend never takes a unit: straight to the PS. */
                    job_stats.count(meta.stat_base | EV_PASSED);
                    to_ps();
                } else if (meta.resend == 1 && meta.dup == 1) {
                    /* The worker is in the unit but missed the result: flush. */
                    meta.keep = 0xffffffff;
                    meta.ovf = 0;
                    lanes_sum();
                    lanes_emit_old();
                    hdr.grid.bitmap = meta.summed;
                    hdr.grid.count = meta.nsum;
                    to_ps();
                    unit_tag.write(meta.idx, UNIT_DONE ++ hdr.grid.job ++ hdr.grid.frag);
                    job_stats.count(meta.stat_base | EV_EMITTED);
                } else if (meta.resend == 0 && meta.same == 1 && meta.dup == 1) {
                    job_stats.count(meta.stat_base | EV_DUPLICATE);
                    meta.route = ROUTE_DROP;
                } else if (meta.resend == 0 && meta.same == 1 && meta.state == UNIT_DONE) {
                    /* A late fragment of a finished unit goes to the PS alone. */
                    unit_seen.write(meta.idx, meta.seen | hdr.grid.bitmap);
                    job_stats.count(meta.stat_base | EV_PASSED);
                    to_ps();
                } else if (meta.resend == 0 && meta.same == 0 && meta.state == UNIT_ACTIVE &&
                           (meta.reclaim == 0 || meta.idle < meta.reclaim)) {
                    job_stats.count(meta.stat_base | EV_COLLISION);
                    control_packet();
                } else {
                    if (meta.same == 0 && meta.state == UNIT_ACTIVE) {
                        /* Idle past the reclaim time: nobody is waiting for
                         * this unit (its workers would have resent), take it. */
                        job_stats.count(meta.stat_base | EV_RECLAIMED);
                    }
                    /* Accumulate into the unit holding this fragment, or
                     * into a fresh one (empty, or done with another). */
                    if (meta.same == 1 && meta.state == UNIT_ACTIVE) {
                        meta.keep = 0xffffffff;
                    } else {
                        meta.keep = 0;
                        meta.seen = 0;
                        meta.count = 0;
                        meta.summed = 0;
                        meta.nsum = 0;
                    }
                    meta.ovf = 0;
                    lanes_sum();
                    meta.new_count = meta.count + hdr.grid.count;
                    meta.new_seen = meta.seen | hdr.grid.bitmap;
                    unit_seen.write(meta.idx, meta.new_seen);
                    unit_count.write(meta.idx, meta.new_count);
                    unit_time.write(meta.idx, standard_metadata.ingress_global_timestamp);
                    if (meta.ovf[31:31] == 1) {
                        /* int32 overflow: send the sum so far, restart the
                         * unit's sum with this packet's values. */
                        lanes_reseed();
                        unit_summed.write(meta.idx, hdr.grid.bitmap);
                        unit_nsum.write(meta.idx, hdr.grid.count);
                        hdr.grid.bitmap = meta.summed;
                        hdr.grid.count = meta.nsum;
                        hdr.grid.flags = hdr.grid.flags | FLAG_OVERFLOW;
                        to_ps();
                        if (meta.new_count >= meta.fanin) {
                            unit_tag.write(meta.idx, UNIT_DONE ++ hdr.grid.job ++ hdr.grid.frag);
                        } else {
                            unit_tag.write(meta.idx, UNIT_ACTIVE ++ hdr.grid.job ++ hdr.grid.frag);
                        }
                        job_stats.count(meta.stat_base | EV_OVERFLOW);
                        job_stats.count(meta.stat_base | EV_EMITTED);
                    } else if (meta.new_count >= meta.fanin || meta.resend == 1) {
                        lanes_emit_sum();
                        hdr.grid.bitmap = meta.summed | hdr.grid.bitmap;
                        hdr.grid.count = meta.nsum + hdr.grid.count;
                        to_ps();
                        unit_tag.write(meta.idx, UNIT_DONE ++ hdr.grid.job ++ hdr.grid.frag);
                        job_stats.count(meta.stat_base | EV_EMITTED);
                    } else {
                        lanes_store();
                        unit_summed.write(meta.idx, meta.summed | hdr.grid.bitmap);
                        unit_nsum.write(meta.idx, meta.nsum + hdr.grid.count);
                        unit_tag.write(meta.idx, UNIT_ACTIVE ++ hdr.grid.job ++ hdr.grid.frag);
                        job_stats.count(meta.stat_base | EV_ABSORBED);
                        meta.route = ROUTE_DROP;
                    }
                }
            }
        }

        if (meta.route == ROUTE_LPM) {
            ipv4_lpm.apply();
        } else if (meta.route == ROUTE_DROP) {
            drop();
        }
    }
}

control GridEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    GRID_COUNTER(NUM_PORTS, CounterType.packets_and_bytes) port_tx;

    /* A result replica leaving towards a worker host gets its address. */
    action to_host(mac_t dmac, ip4_t ip) {
        hdr.ethernet.dstAddr = dmac;
        hdr.ipv4.dstAddr = ip;
        hdr.udp.checksum = 0;
    }

    action set_src_mac(mac_t mac) {
        hdr.ethernet.srcAddr = mac;
    }

    table result_host {
        key = {
            hdr.grid.job: exact;
            standard_metadata.egress_port: exact;
        }
        actions = { to_host; NoAction; }
        default_action = NoAction();
        size = 4096;
    }

    table port_mac {
        key = { standard_metadata.egress_port: exact; }
        actions = { set_src_mac; NoAction; }
        default_action = NoAction();
        size = NUM_PORTS;
    }

    apply {
        if (hdr.grid.isValid() && standard_metadata.instance_type == PKT_INSTANCE_TYPE_REPLICATION) {
            if ((hdr.grid.flags & FLAG_RESULT) != 0) {
                result_host.apply();
            }
        }
        port_mac.apply();
        port_tx.count((bit<32>)standard_metadata.egress_port);
    }
}

control GridComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.totalLen, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.fragOffset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control GridDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.grid);
        pkt.emit(hdr.vals);
#ifdef GRID_VALUES_64
        pkt.emit(hdr.vals_hi);
#endif
    }
}

V1Switch(GridParser(), GridVerifyChecksum(), GridIngress(), GridEgress(),
         GridComputeChecksum(), GridDeparser()) main;
