/* v1model.p4 of the grid embedded P4 compiler.
 *
 * Declares the v1model architecture (the BMv2 simple_switch model) with the
 * same names, types and signatures as the v1model.p4 shipped with p4c, so
 * programs written for p4c compile unchanged. Written for the grid project.
 *
 * Like p4c's, it honours V1MODEL_VERSION: from 20200408 on, counter, meter
 * and register take the type of their index as a type parameter.
 */

#ifndef _V1_MODEL_P4_
#define _V1_MODEL_P4_

#include <core.p4>

#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif

/* Additional match kinds of v1model. */
match_kind {
    range,
    optional,
    selector
}

const bit<32> __v1model_version = V1MODEL_VERSION;

#if V1MODEL_VERSION >= 20200408
typedef bit<9>  PortId_t;
#endif

/* Per-packet metadata of simple_switch. @alias names the field as the
 * target knows it (the bmv2 JSON field_aliases). */
@metadata @name("standard_metadata")
struct standard_metadata_t {
#if V1MODEL_VERSION >= 20200408
    PortId_t ingress_port;
    PortId_t egress_spec;  /* set by ingress: the output port */
    PortId_t egress_port;  /* the actual output port, in egress */
#else
    bit<9>  ingress_port;
    bit<9>  egress_spec;   /* set by ingress: the output port */
    bit<9>  egress_port;   /* the actual output port, in egress */
#endif
    bit<32> instance_type; /* normal, clone, resubmit, recirculate, replica */
    bit<32> packet_length;
    @alias("queueing_metadata.enq_timestamp")
    bit<32> enq_timestamp;
    @alias("queueing_metadata.enq_qdepth")
    bit<19> enq_qdepth;
    @alias("queueing_metadata.deq_timedelta")
    bit<32> deq_timedelta;
    @alias("queueing_metadata.deq_qdepth")
    bit<19> deq_qdepth;
    @alias("intrinsic_metadata.ingress_global_timestamp")
    bit<48> ingress_global_timestamp;
    @alias("intrinsic_metadata.egress_global_timestamp")
    bit<48> egress_global_timestamp;
    @alias("intrinsic_metadata.mcast_grp")
    bit<16> mcast_grp;     /* multicast group, set by ingress */
    @alias("intrinsic_metadata.egress_rid")
    bit<16> egress_rid;    /* replication id of a multicast copy */
    bit<1>  checksum_error; /* 1 when verify_checksum failed */
    error   parser_error;
    @alias("intrinsic_metadata.priority")
    bit<3>  priority;
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

/* An array of size counters, updated with count(index). */
#if V1MODEL_VERSION >= 20200408
extern counter<I>
#else
extern counter
#endif
{
    counter(bit<32> size, CounterType type);
#if V1MODEL_VERSION >= 20200408
    void count(in I index);
#else
    void count(in bit<32> index);
#endif
}

/* One counter per entry of the table it is attached to (counters = ...). */
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

#define V1MODEL_METER_COLOR_GREEN  0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED    2

/* An array of size two-rate three-colour meters. */
#if V1MODEL_VERSION >= 20200408
extern meter<I>
#else
extern meter
#endif
{
    meter(bit<32> size, MeterType type);
#if V1MODEL_VERSION >= 20200408
    void execute_meter<T>(in I index, out T result);
#else
    void execute_meter<T>(in bit<32> index, out T result);
#endif
}

/* One meter per entry of the table it is attached to (meters = ...). */
extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

/* An array of size values of type T, readable and writable by the data plane. */
#if V1MODEL_VERSION >= 20200408
extern register<T, I>
#else
extern register<T>
#endif
{
    register(bit<32> size);
#if V1MODEL_VERSION >= 20200408
    @noSideEffects
    void read(out T result, in I index);
    void write(in I index, in T value);
#else
    @noSideEffects
    void read(out T result, in bit<32> index);
    void write(in bit<32> index, in T value);
#endif
}

/* Table implementation holding shared action data. */
extern action_profile {
    action_profile(bit<32> size);
}

/* result = a random value in [lo, hi]. */
extern void random<T>(out T result, in T lo, in T hi);

/* Send data to the control plane on digest receiver. */
extern void digest<T>(in bit<32> receiver, in T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();

/* Make the packet be dropped at the end of the current pipeline. */
@pure
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

/* result = base + hash(data) mod max (base when max is 0). */
@pure
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

/* Table implementation choosing a member by a hash of the selector keys. */
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,
    E2E
}

@deprecated("Please use verify_checksum/update_checksum instead.")
extern Checksum16 {
    Checksum16();
    bit<16> get<D>(in D data);
}

/* In the verify-checksum control: set standard_metadata.checksum_error when
 * condition holds and checksum differs from the checksum of data. */
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

/* In the compute-checksum control: when condition holds, set checksum to the
 * checksum of data. */
@pure
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* As above, with the unparsed payload appended to data. */
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
@noSideEffects
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* Clone the packet to mirroring session session. */
extern void clone(in CloneType type, in bit<32> session);

@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<T>(in T data);
/* Send the packet back to the ingress parser, keeping the user metadata
 * fields annotated @field_list(index). */
extern void resubmit_preserving_field_list(bit<8> index);

@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<T>(in T data);
/* Send the deparsed packet back to ingress, keeping the user metadata
 * fields annotated @field_list(index). */
extern void recirculate_preserving_field_list(bit<8> index);

@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);
/* Clone, keeping the user metadata fields annotated @field_list(index). */
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

/* Keep only the first length bytes of the packet on output. */
extern void truncate(in bit<32> length);

/* Debugging aids of simple_switch. */
extern void assert(in bool check);
extern void assume(in bool check);
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

/* The six programmable blocks of the v1model pipeline. */
parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);

control VerifyChecksum<H, M>(inout H hdr,
                             inout M meta);

@pipeline
control Ingress<H, M>(inout H hdr,
                      inout M meta,
                      inout standard_metadata_t standard_metadata);

@pipeline
control Egress<H, M>(inout H hdr,
                     inout M meta,
                     inout standard_metadata_t standard_metadata);

control ComputeChecksum<H, M>(inout H hdr,
                              inout M meta);

@deparser
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep);

#endif /* _V1_MODEL_P4_ */
