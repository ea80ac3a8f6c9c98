package stf

import (
	"context"
	"io"
	"time"

	"github.com/grid-ina/grid/harness/engine"
)

// Target is the switch an STF test drives. The runner resolves every name of
// the STF file against the program's bmv2 JSON (tables, actions, keys,
// counters, registers, meters, by full name or unique suffix) and checks
// widths and argument ranges; a Target receives fully qualified bmv2 JSON
// names ("GridIngress.agg_config"), which are also the P4Info preamble names
// of the same program, and values already encoded as big-endian byte strings
// of the field's width. It keeps the control-plane bookkeeping STF needs
// beyond the switch (entry handles named with "= NAME", multicast nodes) on
// its own side.
//
// Two kinds of target exist: the in-process engine switch (EngineTarget,
// what Run and NewSession use) and remote switches reached over P4Runtime
// and real ports (package p4test). A remote target must already have the
// program loaded (SetForwardingPipelineConfig) when the runner starts.
//
// Every method's error is a refusal of the switch: the runner reports it as
// a rejected command (a failure, or a warning in Compat mode). Methods are
// called from one goroutine, in the order of the STF commands.
type Target interface {
	// AddEntry inserts a table entry. e.Match has one element per key of
	// the table, in key order (keys the STF line leaves out are
	// wildcards: ternary mask 0, full range, lpm prefix 0; exact keys
	// are 0). e.Priority follows bmv2 and the engine: the SMALLEST number
	// wins. The runner passes -P for the STF priority P (STF and
	// P4Runtime let the larger number win), 0 for tables without
	// ternary, range or optional keys. A P4Runtime target converts, e.g.
	// p4rtPriority = 1 - e.Priority for tables that need a priority
	// (so STF priority P becomes P4Runtime priority P+1 >= 1), and 0
	// for the others. e.Action is the action's full name and e.Args its
	// parameters in order; Member and Group are never set.
	//
	// The returned handle names the entry in later ReadDirectCounter
	// calls; a remote target chooses its own handles (e.g. a counter)
	// and remembers the match and priority behind each.
	AddEntry(table string, e engine.Entry) (engine.EntryHandle, error)
	// SetDefaultAction sets the action a table runs on a miss ("setdefault").
	SetDefaultAction(table, action string, args [][]byte) error
	// ClearTable deletes every entry of a table ("remove all" calls it for
	// every table of the program, also those that have no entries).
	ClearTable(table string) error

	// SetMulticastGroup creates the multicast group or replaces its
	// replicas (mc_mgrp_create creates it with no replicas;
	// mc_node_create, mc_node_update and mc_node_associate end in a call
	// with every replica of the group). Group 0 is invalid in v1model.
	// A P4Runtime target inserts a MulticastGroupEntry the first time
	// and modifies it after.
	SetMulticastGroup(group uint16, replicas []engine.Replica) error
	// SetCloneSession creates or replaces a mirroring session
	// (mirroring_add SESSION PORT: cs.Port; mirroring_add_mc SESSION
	// GROUP: cs.Group). A P4Runtime target writes a CloneSessionEntry
	// (a port becomes one replica with instance 0, a group one replica
	// per replica of that group).
	SetCloneSession(session uint32, cs engine.CloneSession) error
	// DeleteCloneSession removes a mirroring session (mirroring_delete).
	DeleteCloneSession(session uint32) error

	// ReadCounter reads one cell of an indexed counter (check_counter
	// NAME(INDEX), counter_read).
	ReadCounter(counter string, index int) (engine.CounterValue, error)
	// WriteCounter sets one cell of an indexed counter (counter_write).
	WriteCounter(counter string, index int, v engine.CounterValue) error
	// ReadDirectCounter reads the direct counter of the entry AddEntry
	// returned h for (check_counter NAME(HANDLE)).
	ReadDirectCounter(table string, h engine.EntryHandle) (engine.CounterValue, error)

	// ReadRegister reads one register cell as big-endian bytes
	// (check_register, register_read); any length is fine, the runner
	// compares numbers.
	ReadRegister(register string, index int) ([]byte, error)
	// WriteRegister sets one register cell; value has the register's
	// width rounded up to bytes (register_write).
	WriteRegister(register string, index int, value []byte) error
	// ResetRegister sets every cell of a register to 0 (register_reset).
	ResetRegister(register string) error

	// SetMeter configures one cell of an indexed two-rate three-colour
	// meter in units (packets or bytes) per second and burst units
	// (meter_set_rates; meter_array_set_rates calls it for every index).
	// P4Runtime's MeterConfig has the same units.
	SetMeter(meter string, index int, cfg engine.MeterConfig) error
	// ReadMeter returns a meter cell's configuration, and false if it was
	// never configured (meter_get_rates, shown only in the trace).
	ReadMeter(meter string, index int) (cfg engine.MeterConfig, configured bool, err error)

	// Send injects a frame on a port ("packet PORT ..."). A target that
	// processes packets synchronously (the engine) returns every frame the
	// packet caused; a remote target returns nil at once and hands the
	// frames out from Settle. Packets are numbered by the order of Send
	// calls, from 0.
	Send(port int, frame []byte) ([]Frame, error)
	// Settle waits until the switch has finished with the packets sent so
	// far and returns the frames that came out since the last Send or
	// Settle call. A synchronous target returns nil at once.
	//
	// wantTotal is a hint: the number of expect lines with a pattern
	// applied so far, i.e. how many frames the test expects to have come
	// out since the start of the run, counting those Send and earlier
	// Settle calls returned. It can be more than the packets sent so far
	// cause: files in p4c's style write a packet's expect lines before the
	// packet. So a remote target should wait until it has received
	// wantTotal frames or nothing arrived for a quiet period, whichever
	// comes first (never past ctx or a timeout of its own), then a short
	// grace period more to catch frames nobody expected. Frames arriving
	// later are not lost: the next Settle returns them.
	//
	// The runner calls Settle before every command other than "expect"
	// that follows a "packet" (so packets are processed one after another
	// in the order of the file, and control-plane changes and checks see
	// the switch at rest), and at the end of the test.
	Settle(ctx context.Context, wantTotal int) ([]Frame, error)
	// Advance moves the switch's clock forward ("advance_clock"): the
	// engine target moves its virtual clock, a real-time target sleeps
	// that long.
	Advance(d time.Duration) error
}

// Frame is a packet that left a Target.
type Frame struct {
	Port int
	Data []byte
	// Packet is the number of the Send call (from 0) whose packet caused
	// this frame, as far as the target can tell: exact for the engine; a
	// remote target names the last packet sent before the frame arrived.
	// Reports use it to name the STF line that sent the packet.
	Packet int
}

// EngineTarget is the in-process engine switch with a virtual clock that
// starts at virtualStart and advances 1 µs per packet (and by advance_clock),
// so meters and timestamps do not depend on how fast the machine is.
type EngineTarget struct {
	sw    *engine.Switch
	clock time.Time
	sent  int
}

// NewEngineTarget makes a fresh engine switch running prog. Trace, when
// set, receives the engine's per-packet trace.
func NewEngineTarget(prog *engine.Program, trace io.Writer) *EngineTarget {
	t := &EngineTarget{clock: virtualStart}
	t.sw = engine.NewSwitch(prog, engine.Config{Trace: trace, Now: func() time.Time { return t.clock }})
	return t
}

// Switch is the engine switch, for control-plane operations STF has no
// command for.
func (t *EngineTarget) Switch() *engine.Switch { return t.sw }

// AddEntry adds a table entry to the engine.
func (t *EngineTarget) AddEntry(table string, e engine.Entry) (engine.EntryHandle, error) {
	return t.sw.AddEntry(table, e)
}

// SetDefaultAction sets a table's default action.
func (t *EngineTarget) SetDefaultAction(table, action string, args [][]byte) error {
	return t.sw.SetDefaultAction(table, action, args)
}

// ClearTable removes every entry of a table.
func (t *EngineTarget) ClearTable(table string) error { return t.sw.ClearTable(table) }

// SetMulticastGroup creates or replaces a multicast group.
func (t *EngineTarget) SetMulticastGroup(group uint16, replicas []engine.Replica) error {
	return t.sw.SetMulticastGroup(group, replicas)
}

// SetCloneSession creates or replaces a mirroring session.
func (t *EngineTarget) SetCloneSession(session uint32, cs engine.CloneSession) error {
	return t.sw.SetCloneSession(session, cs)
}

// DeleteCloneSession removes a mirroring session.
func (t *EngineTarget) DeleteCloneSession(session uint32) error {
	return t.sw.DeleteCloneSession(session)
}

// ReadCounter reads one counter cell.
func (t *EngineTarget) ReadCounter(counter string, index int) (engine.CounterValue, error) {
	return t.sw.ReadCounter(counter, index)
}

// WriteCounter sets one counter cell.
func (t *EngineTarget) WriteCounter(counter string, index int, v engine.CounterValue) error {
	return t.sw.WriteCounter(counter, index, v)
}

// ReadDirectCounter reads an entry's direct counter.
func (t *EngineTarget) ReadDirectCounter(table string, h engine.EntryHandle) (engine.CounterValue, error) {
	return t.sw.ReadDirectCounter(table, h)
}

// ReadRegister reads one register cell.
func (t *EngineTarget) ReadRegister(register string, index int) ([]byte, error) {
	return t.sw.ReadRegister(register, index)
}

// WriteRegister sets one register cell.
func (t *EngineTarget) WriteRegister(register string, index int, value []byte) error {
	return t.sw.WriteRegister(register, index, value)
}

// ResetRegister zeroes a register.
func (t *EngineTarget) ResetRegister(register string) error { return t.sw.ResetRegister(register) }

// SetMeter configures one meter cell.
func (t *EngineTarget) SetMeter(meter string, index int, cfg engine.MeterConfig) error {
	return t.sw.SetMeter(meter, index, cfg)
}

// ReadMeter returns one meter cell's configuration.
func (t *EngineTarget) ReadMeter(meter string, index int) (engine.MeterConfig, bool, error) {
	return t.sw.ReadMeter(meter, index)
}

// Send advances the virtual clock by 1 µs and processes the frame; it
// returns every frame the packet caused, in the order they came out.
func (t *EngineTarget) Send(port int, frame []byte) ([]Frame, error) {
	t.clock = t.clock.Add(time.Microsecond)
	n := t.sent
	t.sent++
	var out []Frame
	err := t.sw.Process(uint32(port), frame, func(o engine.Output) {
		out = append(out, Frame{Port: int(o.Port), Data: append([]byte(nil), o.Data...), Packet: n})
	})
	return out, err
}

// Settle returns nothing: Send already handed out every frame.
func (t *EngineTarget) Settle(context.Context, int) ([]Frame, error) { return nil, nil }

// Advance moves the virtual clock.
func (t *EngineTarget) Advance(d time.Duration) error {
	t.clock = t.clock.Add(d)
	return nil
}
