// Package p4rt is a P4Runtime v1 server (P4Runtime 1.5.0) over grid's
// engine: what makes the embedded switch (`grid switch`) a drop-in for
// simple_switch_grpc. A controller sets the pipeline with
// SetForwardingPipelineConfig, giving the P4Info and, as p4_device_config,
// the bmv2 JSON (as for simple_switch_grpc); the data plane feeds received
// frames to Server.Process, which is safe on many goroutines while the
// controller writes and allocates nothing of its own. Packets go through
// the pipeline one at a time (engine.Config.Serial), as through
// simple_switch's single ingress thread, so register updates split over
// several actions stay atomic.
//
// Typical use:
//
//	srv := p4rt.NewServer(p4rt.Options{DeviceID: 1, CPUPort: 255, Ports: 8, Transmit: send})
//	g := grpc.NewServer()
//	srv.Register(g)
//	go g.Serve(listener)
//	... srv.Process(port, frame, send) for every received frame ...
//
// # What is supported
//
//   - Capabilities (reports "1.5.0").
//   - StreamChannel: arbitration for the default role. The controller with
//     the highest election id is the primary; every controller gets a
//     MasterArbitrationUpdate with status OK (primary), ALREADY_EXISTS
//     (backup) or NOT_FOUND (no primary), and all of them get one when the
//     primary changes (also when it disconnects). A controller without an
//     election id is a backup. An election id already in use ends the
//     stream with INVALID_ARGUMENT, another device id with NOT_FOUND, a
//     role other than the default one with NOT_FOUND (the specification's
//     code for a role the device does not know). Only the primary
//     may Write, set the pipeline and send PacketOut (PERMISSION_DENIED
//     otherwise); anyone may Read.
//   - Packet I/O: a PacketOut's metadata is bit-packed, in metadata id
//     order, into the program's packet_out header (controller_packet_metadata
//     "packet_out"; fields left out are zero), put in front of the payload
//     and injected on Options.CPUPort; what that makes the pipeline send to
//     data-plane ports goes to Options.Transmit. Packets the program sends
//     to the CPU port lose their packet_in header, which becomes the
//     PacketIn's metadata, and go to the primary's stream (dropped when
//     there is no primary or it is 1024 PacketIns behind). Malformed
//     or refused PacketOuts are answered with a StreamError carrying the
//     packet.
//   - SetForwardingPipelineConfig with VERIFY, VERIFY_AND_SAVE, COMMIT and
//     VERIFY_AND_COMMIT. The p4_device_config is the bmv2 JSON or, as PI
//     accepts it, a serialized p4.tmp.P4DeviceConfig whose device_data is
//     the JSON (what p4lang/tutorials' P4Runtime library sends). The P4Info is checked against the JSON: every table,
//     action a table uses, counter, meter, register and direct resource it
//     names must exist in the JSON under the same name, with match fields in
//     key order with the same widths and match kinds, the same parameter
//     widths, sizes, register widths and action profiles (a match field or
//     parameter the P4Info gives no width, as p4c does for error types,
//     takes the JSON's); the error names the P4Info field
//     ("config.p4info.tables[0].match_fields[0]: field ... is 16 bits in the
//     P4Info, 32 in the bmv2 JSON"). Committing resets all state: tables,
//     groups, sessions, counters, meters, registers.
//   - GetForwardingPipelineConfig with every response type (an empty config
//     before one is committed).
//   - Write, CONTINUE_ON_ERROR: when updates fail, the status is UNKNOWN with
//     one p4.v1.Error per update in the details (OK for those applied), each
//     message naming the update and the field
//     ("updates[1].entity.table_entry.match[0].field_id: 7 is not a match
//     field of table TestIngress.ipv4_lpm").
//   - Table entries: exact, lpm, ternary, range and optional fields
//     ("don't care" fields are omitted, as the specification asks);
//     INSERT (ALREADY_EXISTS for the same match and priority), MODIFY and
//     DELETE (NOT_FOUND); priorities (larger wins, required > 0 exactly for
//     tables with ternary, range or optional fields) are converted to the
//     engine's smaller-wins order; action scopes (@tableonly,
//     @defaultonly); the default entry (MODIFY with is_default_action;
//     without an action it goes back to the program's default; a const
//     default action cannot change); counter_data and meter_config on
//     entries of tables with direct counters and meters; const tables
//     refuse writes with PERMISSION_DENIED.
//   - Byte strings (specification section 8.4): the canonical form and the
//     form padded to the field's whole bytes are both accepted; empty
//     strings, longer ones and values with bits beyond the width are
//     INVALID_ARGUMENT, as are lpm values with bits beyond the prefix and
//     ternary values with bits outside the mask. Reads return canonical
//     strings, so what was written padded reads back canonical.
//   - Action profiles and selectors: members (INSERT, MODIFY, DELETE;
//     FAILED_PRECONDITION while a group or entry uses one), groups of
//     members (the selector picks members uniformly by the program's hash,
//     so weights above 1 are refused), entries of indirect tables pointing
//     at a member or a group.
//   - Digests: once the controller inserts a digest's DigestEntry, digest()
//     calls stream as DigestLists to the primary (batched by max_list_size
//     and max_timeout_ns); data sent is not sent again until its list is
//     acknowledged (DigestListAck) or ack_timeout_ns passes.
//   - Idle timeouts: entries of tables with idle_timeout_behavior
//     NOTIFY_CONTROL take idle_timeout_ns; an entry no packet hit for that
//     long is streamed to the primary in an IdleTimeoutNotification, once
//     until it is hit again (swept every 100 ms); Read with
//     time_since_last_hit gives its idle time.
//   - Parser value sets: a ValueSetEntry MODIFY replaces the whole set
//     (exact members, at most the set's size, else RESOURCE_EXHAUSTED);
//     INSERT and DELETE are INVALID_ARGUMENT; Read returns the members.
//   - Multicast groups 1..32767 (replicas by egress_port or port bytes,
//     instance as egress_rid; higher ids are OUT_OF_RANGE) and clone
//     sessions 1..32767, which replicate through the multicast group
//     32768+session id as in simple_switch_grpc (packet_length_bytes
//     truncates clones). Reading a missing group or session is NOT_FOUND.
//   - Counters and direct counters (MODIFY sets or resets cells), meters and
//     direct meters (MeterConfig rates in units per second, bursts in
//     units, as engine.MeterConfig; without a config MODIFY resets a meter
//     to unconfigured, every packet green), registers (MODIFY of cells). An unset
//     index means every cell; an index outside the array is OUT_OF_RANGE.
//   - Read of all of the above with the specification's wildcards: table_id
//     0 for every table, a table without match for all its entries, a match
//     for one entry (nothing when absent), is_default_action for the default
//     entry, counter_data (and meter_config) in the request to get direct
//     counter (and meter) values with the entries; counter, meter and
//     register id 0 for all of them, index unset for all cells; multicast
//     group, clone session, action profile, member, group or value set id
//     0 for all.
//     Const and initial entries of the program are read back too, with
//     P4Runtime priority MaxInt32 minus their bmv2 priority (the inverse of
//     how written priorities map).
//
// # What is refused
//
// UNIMPLEMENTED: atomicity ROLLBACK_ON_ERROR and DATAPLANE_ATOMIC,
// RECONCILE_AND_COMMIT, one-shot action sets, weighted group members,
// watch ports, default actions of indirect tables, other entities, a clone session's class_of_service,
// backup replicas, single-rate meters (eburst), meter counters, direct
// counters and meters of default entries.
//
// # Where it differs from simple_switch_grpc
//
//   - Register reads and writes work; simple_switch_grpc answers register
//     reads with UNIMPLEMENTED (PI issue 376), so controllers of real bmv2
//     read registers with simple_switch_CLI instead.
//   - There is no Thrift server: simple_switch_CLI cannot talk to it (grid
//     cli speaks its commands over P4Runtime, and set_queue_rate and
//     set_queue_depth over grid switch's own queue service).
//   - One packet at a time runs through ingress and then egress;
//     simple_switch runs egress on other threads than ingress, so where a
//     program's ingress and egress share registers, the order in which
//     their updates interleave across packets can differ.
//   - Packets to the CPU port without a packet_in header in the P4Info are
//     sent whole as the PacketIn payload; PacketOut without a packet_out
//     header injects the payload as it is.
package p4rt
