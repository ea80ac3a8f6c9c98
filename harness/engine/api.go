// Package engine runs a bmv2 JSON program (v1model, as p4c-bm2-ss emits it
// or as the embedded compiler does) with the semantics of bmv2's
// simple_switch: parser, ingress, packet replication engine, egress,
// deparser, with tables, registers, counters, meters, multicast groups and
// clone sessions driven by a control plane through this package's API.
//
// The JSON is compiled once by Load into closures with every field offset,
// table and action resolved; an unsupported primitive, expression operator or
// field reference is a load error naming it and where it occurs. A Switch
// processes packets concurrently from several goroutines while tables are
// updated, without allocating per packet in steady state; with Config.Serial
// it takes them one at a time, as simple_switch's single ingress thread does
// (what a stand-in for simple_switch must use: see Config.Serial).
//
// Typical use:
//
//	prog, err := engine.Load(jsonBytes)
//	sw := engine.NewSwitch(prog, engine.Config{})
//	_, err = sw.AddEntry("ingress.ipv4_lpm", engine.Entry{
//		Match:  []engine.Match{engine.LPM(dstIP, 24)},
//		Action: "ingress.forward", Args: [][]byte{port, mac}})
//	err = sw.Process(1, frame, func(o engine.Output) { ... o.Port, o.Data ... })
//
// Control-plane names may be fully qualified ("ingress.ipv4_lpm") or any
// unique suffix after a dot ("ipv4_lpm"), as in p4c's STF tests.
//
// Speed is measured by the benchmarks (CPU time per packet, allocations):
// IPv4 LPM forwarding here, GRID's aggregator against its Go reference
// model in package aggbench:
//
//	go test -run '^$' -bench . ./harness/engine ./harness/engine/aggbench
//
// # Where the engine differs from simple_switch
//
//   - assert/assume failures abort bmv2; the engine drops the packet and
//     traces why. So it does for an action whose loop (backward _jump) runs
//     more than a million primitives, where bmv2 would hang. A header stack index out of range aborts bmv2 too; the
//     engine uses the last element.
//   - Without Config.Queues there are no queues: enq_qdepth, deq_qdepth and
//     deq_timedelta stay 0 and packets leave in the order of processing (per
//     port, the order bmv2 would produce). With it (grid switch sets one),
//     each packet leaving ingress is admitted to its port's queue model,
//     which gives its queueing metadata and how long its frame waits; a
//     packet's egress still runs at once, so deq_qdepth is the model's
//     estimate (see Queues), and a full queue drops the packet where bmv2's
//     would hold back ingress.
//   - Signed fields hold their two's complement bits; bmv2 keeps a value
//     assigned to a signed field unwrapped while it lies in (max, 2^w). p4c
//     wraps signed results with two_comp_mod or sat_cast before storing
//     them, so its programs see no difference.
//   - crc16_custom and crc32_custom keep bmv2's default parameters (there is
//     no control to change them); generic extern instances, extern_func and
//     "local" expressions are load errors.
//   - Meters are RFC 2698 two-rate three-colour markers configured in units
//     per second; an action selector picks member hash % n among the group's
//     members in handle order.
package engine

import (
	"io"
	"time"
)

// InstanceType is standard_metadata.instance_type: how a packet instance came
// to be, with simple_switch's numbering.
type InstanceType uint32

// Instance types of simple_switch.
const (
	InstanceNormal       InstanceType = 0
	InstanceIngressClone InstanceType = 1
	InstanceEgressClone  InstanceType = 2
	InstanceCoalesced    InstanceType = 3
	InstanceRecirculated InstanceType = 4
	InstanceReplication  InstanceType = 5
	InstanceResubmit     InstanceType = 6
)

// DefaultDropPort is simple_switch's drop port: egress_spec 511 drops.
const DefaultDropPort = 511

// Config configures a Switch. What a packet reads of it comes first: a
// switch keeps it in the cache lines a packet reads of the switch.
type Config struct {
	// DropPort is the egress_spec value that drops a packet; 0 means 511.
	DropPort uint32
	// Ports, when non-zero, is the number of ports 0..Ports-1: Process
	// refuses other ingress ports, and packets sent to other egress ports
	// are dropped (and traced).
	Ports uint32
	// Serial makes Process take one packet at a time, as simple_switch's
	// single ingress thread does. bmv2 keeps a register locked for one
	// action only, so a read-modify-write split over several actions (GRID's
	// aggregation units, a counter read in one table and written in the next)
	// is atomic only then. Without it, goroutines calling Process run in
	// parallel, which is faster and safe for programs whose state updates sit
	// in one action. With it, a packet also looks tables up without taking
	// their locks: the control plane's changes to a table's entries wait
	// for the packet in process instead.
	Serial bool
	// Queues, when set, models the egress queues between ingress and
	// egress, as simple_switch's egress buffers: it fills enq_qdepth,
	// deq_qdepth, deq_timedelta and qid, drops packets a full queue has no
	// room for, and sets Output.Wait.
	Queues Queues
	// Trace, when set, receives a bmv2 --log-console style line per event
	// (parser states, tables hit or missed, actions with arguments, drops)
	// and the messages of log_msg. Leave nil in production: tracing is then
	// free.
	Trace io.Writer
	// Now is the clock for meters and timestamps; nil means time.Now.
	Now func() time.Time
	// MaxPasses bounds resubmissions plus recirculations of one input
	// packet (a program that recirculates forever would loop); 0 means 16.
	MaxPasses int
	// Digest, when set, receives the digests (v1model digest(), bmv2
	// learning) a packet generates, at the end of its ingress pipeline as
	// simple_switch sends them. It is called on the packet's goroutine and
	// may keep the Digest.
	Digest func(Digest)
}

// Digest is one learning message: the values of a learn list's fields,
// big-endian in ceil(bitwidth/8) bytes each, in the list's order.
type Digest struct {
	List   string
	ID     int
	Values [][]byte
}

// Output is a packet leaving the switch. Data is owned by the switch and
// valid only during the callback that receives it: copy it to keep it.
// Instance is the packet's instance_type in egress, as simple_switch sets
// it: 0 for unicast packets (resubmitted and recirculated packets re-enter
// ingress as 6 and 4 but leave it as normal ones), 5 for multicast
// replicas, 1 and 2 for ingress and egress clones.
type Output struct {
	Port     uint32
	Data     []byte
	Instance InstanceType
	// Wait is how long the packet waits in its egress queue
	// (Config.Queues) before it leaves: the data plane holds the frame
	// that long.
	Wait time.Duration
}

// Queues is the egress queueing a switch models, per port and queue
// (package dataplane gives each port a rate and a depth, as
// simple_switch's set_queue_rate and set_queue_depth do). Enqueue is
// called with the engine's serial lock held when Config.Serial is set, and
// concurrently otherwise.
type Queues interface {
	// Enqueue admits a packet of size bytes, leaving ingress at now(), to
	// the queue of port for priority (standard_metadata.priority). It
	// returns what the packet's egress sees of the queue, and ok false
	// when the packet is dropped (the queue is full, or the priority is
	// beyond the port's queues, as simple_switch drops it). now is the
	// switch's clock, read only by queues that need the time: reading it
	// costs a packet more than a queue that drains at once does.
	Enqueue(port uint32, priority uint8, size int, now func() time.Time) (st QueueState, ok bool)
}

// QueueState is a packet's view of its egress queue, as simple_switch's
// queueing metadata gives it.
type QueueState struct {
	// EnqDepth is the number of packets the port's queues held when it
	// arrived (enq_qdepth).
	EnqDepth uint32
	// DeqDepth is the number it leaves behind when it is dequeued
	// (deq_qdepth). Egress runs at once, before later arrivals are known,
	// so models estimate it.
	DeqDepth uint32
	// Wait is the time from its arrival to its dequeue (deq_timedelta).
	Wait time.Duration
	// QID is the queue it waits in (qid): with N priority queues, N-1-priority.
	QID uint8
}

// MatchKind is a key's match kind.
type MatchKind uint8

// Match kinds of v1model tables.
const (
	MatchExact MatchKind = iota
	MatchLPM
	MatchTernary
	MatchRange
)

func (k MatchKind) String() string {
	switch k {
	case MatchExact:
		return "exact"
	case MatchLPM:
		return "lpm"
	case MatchTernary:
		return "ternary"
	case MatchRange:
		return "range"
	}
	return "unknown"
}

// Match is the value of one key field of an entry, in the table's key order.
// Byte strings are big-endian and may be shorter or longer than the field
// (leading zero bytes are ignored; a value that does not fit is an error).
//   - exact:    Value
//   - lpm:      Value and PrefixLen
//   - ternary:  Value and Mask, or Wildcard for "don't care" (an optional
//     field is a ternary key in bmv2 JSON, its mask all ones or none)
//   - range:    Value (low) and High, inclusive
type Match struct {
	Value     []byte
	Mask      []byte
	PrefixLen int
	High      []byte
	Wildcard  bool
}

// Exact builds an exact match.
func Exact(v []byte) Match { return Match{Value: v} }

// LPM builds a longest-prefix match of plen bits.
func LPM(v []byte, plen int) Match { return Match{Value: v, PrefixLen: plen} }

// Ternary builds a value/mask match.
func Ternary(v, mask []byte) Match { return Match{Value: v, Mask: mask} }

// Range builds an inclusive range match.
func Range(lo, hi []byte) Match { return Match{Value: lo, High: hi} }

// Entry is a table entry. Priority orders the entries of ternary, range and
// optional tables as bmv2 does: the smallest number wins, and among equal
// priorities the entry added first (P4Runtime, where larger wins, must
// convert). Args are the action's parameters in order, as big-endian byte
// strings.
//
// Entries of an indirect table (one with an action profile or selector)
// name a Member or a Group of the profile instead of an Action.
type Entry struct {
	Match    []Match
	Priority int32
	Action   string
	Args     [][]byte
	Member   MemberHandle
	Group    GroupHandle
}

// EntryHandle identifies an entry of a table; it stays valid until the
// entry is deleted.
type EntryHandle uint64

// TableInfo describes a table for control planes (the STF runner, P4Runtime).
type TableInfo struct {
	Name    string // fully qualified, e.g. "ingress.ipv4_lpm"
	Keys    []KeyInfo
	Actions []ActionInfo
	// DefaultAction is the action run on a miss; ConstDefault forbids
	// changing it.
	DefaultAction string
	ConstDefault  bool
	MaxSize       int
	// HasCounters and HasMeters tell whether entries carry direct counters
	// or meters.
	HasCounters bool
	HasMeters   bool
	// ActionProfile names the action profile of an indirect table, which
	// has a selector (groups) when HasSelector.
	ActionProfile string
	HasSelector   bool
}

// KeyInfo describes one key field.
type KeyInfo struct {
	Name     string // as in the P4 source: "hdr.ipv4.dstAddr"
	Field    string // resolved field, "ipv4.dstAddr" (or "ipv4.$valid$")
	Kind     MatchKind
	Bitwidth int
}

// ActionInfo describes an action and its parameters.
type ActionInfo struct {
	Name   string
	Params []ParamInfo
}

// ParamInfo describes an action parameter.
type ParamInfo struct {
	Name     string
	Bitwidth int
}

// Replica is one copy made by a multicast group: the egress port and the
// replication id it gets in standard_metadata.egress_rid.
type Replica struct {
	Port uint32
	Rid  uint16
}

// CounterValue is the state of one counter cell.
type CounterValue struct {
	Bytes   uint64
	Packets uint64
}

// MeterConfig configures a two-rate three-colour meter (RFC 2698), in the
// meter's unit (packets or bytes) per second and units of burst. A meter
// that was never configured marks every packet green.
type MeterConfig struct {
	CIR    uint64
	CBurst uint64
	PIR    uint64
	PBurst uint64
}

// Meter colours as v1model writes them into the result field.
const (
	ColorGreen  = 0
	ColorYellow = 1
	ColorRed    = 2
)
