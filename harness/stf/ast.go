// Package stf reads and runs STF packet tests, the format p4c's bmv2 test
// driver (backends/bmv2/bmv2stf.py) uses: table entries, multicast and mirror
// configuration, packets to inject and packets expected on each port.
//
// A test is a sequence of lines, one command each; '#' starts a comment:
//
//	add ipv4_lpm ipv4.dstAddr:0x0a000001/32 set_nhop(port:2)
//	add acl 10 hdr.tcp.dstPort:0x0050&&&0xffff deny()
//	setdefault ipv4_lpm drop()
//	packet 0 000000000002 000000000001 0800 4500 ...
//	expect 2 000000000002 ******** ****  0800 ... $
//
// Commands:
//
//	add TABLE [PRIORITY] FIELD:VALUE ... ACTION(PARAM:VALUE, ...) [= NAME]
//	    VALUE is decimal, 0x hex or 0b binary; hex and binary may use '*'
//	    digits (don't care for ternary keys, shorter prefix for lpm keys).
//	    Refinements: VALUE/LEN (lpm), VALUE&&&MASK (ternary), LOW->HIGH
//	    (range). Keys left out match anything. A larger PRIORITY wins.
//	    "= NAME" names the entry for check_counter on a direct counter.
//	setdefault TABLE ACTION(PARAM:VALUE, ...)
//	remove all
//	packet PORT HEX...          inject a frame (spaces between digits are free)
//	expect PORT [HEX...] [$]    '*' matches any nibble; '$' ends the packet;
//	                            a bare "expect PORT" accepts anything there
//	no_packet, wait             wait until the packets sent so far came out
//	check_counter NAME(INDEX|ENTRY) [packets|bytes OP VALUE]
//	check_register NAME(INDEX) OP VALUE      (a grid extension)
//	advance_clock N(us|ms|s)                 (a grid extension)
//	mirroring_add SESSION PORT, mirroring_add_mc SESSION GROUP,
//	mirroring_delete SESSION, mc_mgrp_create GROUP,
//	mc_node_create RID PORT..., mc_node_update NODE PORT...,
//	mc_node_associate GROUP NODE, counter_read/counter_write,
//	register_read/register_write/register_reset,
//	meter_set_rates NAME INDEX CIR:CBURST PIR:PBURST,
//	meter_array_set_rates NAME CIR:CBURST PIR:PBURST
//	    as simple_switch_CLI takes them (rates in units per microsecond,
//	    multicast node handles counted from 0 in creation order).
//
// A comment line "# build: NAME[=VALUE] ..." (a grid extension, see
// ReadBuild) names preprocessor definitions the test's program must be
// compiled with; `grid p4test` honours it.
//
// Tables, actions, counters, registers and meters are found by full name or
// by a unique suffix, key fields by their P4 name ("hdr.ipv4.dstAddr") or a
// unique suffix of it ("ipv4.dstAddr"), as bmv2stf.py does.
//
// # Grid extensions
//
// bmv2stf.py knows none of these; p4c's own tests do not use them.
//
//   - check_register NAME(INDEX) OP VALUE asserts the value of a register
//     cell (OP is ==, !=, <, <=, > or >=), as check_counter does for
//     counters.
//   - advance_clock N(us|ms|s) moves the switch's clock forward: the engine
//     moves its virtual clock, a switch running in real time (a Target over
//     P4Runtime) waits that long. At most an hour per command.
//   - The engine's clock is virtual: it starts at 0 and advances exactly
//     1 µs per packet (before the packet is processed, so the first packet
//     sees ingress_global_timestamp 1) plus what advance_clock adds. Meters
//     and timestamps therefore do not depend on the speed of the machine.
//     A real switch's clock runs in real time, so a test that depends on
//     exact timestamps holds only on the engine.
//   - "# build: NAME[=VALUE] ..." (see ReadBuild).
//
// # Running tests
//
// Parse turns the text into Commands; Run applies them to an engine switch
// and compares what came out with what was expected: every expected packet
// must come out on its port, in order per port, and nothing else. RunOn
// does the same on any Target, such as a real simple_switch_grpc reached
// over P4Runtime: the runner resolves names against the program's bmv2
// JSON and hands the target full names and encoded values. Before every
// command other than expect that follows a packet, the runner lets the
// target settle (Target.Settle), so packets are processed one at a time in
// the order of the file.
package stf

import (
	"fmt"
	"math/big"
	"strings"
	"time"
)

// Pos is where a command starts in its STF file.
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	if p.File == "" {
		return fmt.Sprintf("line %d", p.Line)
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Command is one STF line. The concrete types are the structs below; Run
// type-switches over them.
type Command interface {
	Position() Pos
	// String renders the command back in STF syntax (normalised spacing).
	String() string
}

// Base carries the position shared by every command.
type Base struct{ At Pos }

// Position returns where the command was written.
func (b Base) Position() Pos { return b.At }

// Number is a constant as written in a key or argument. Hex and binary
// constants may contain '*' digits, which are "don't care" for ternary keys
// and shorten the prefix for LPM keys, as in bmv2stf.py.
type Number struct {
	Text  string   // as written, e.g. "0x0a**"
	Value *big.Int // '*' digits read as 0
	// Care has a 1 for every bit written with a concrete digit (not '*').
	// For decimal constants it is nil: every bit of the field is cared for.
	Care *big.Int
	// Bits is how many bits the digits cover (digits × 4 for hex, × 1 for
	// binary); 0 for decimal constants.
	Bits int
}

// HasWildcards reports whether some digit was written as '*'.
func (n Number) HasWildcards() bool { return strings.Contains(n.Text, "*") }

// KeyMatch is one "FIELD:VALUE" of an add command.
type KeyMatch struct {
	Field string
	Value Number
	// Exactly one of the following refinements may be present.
	Mask      *Number // VALUE&&&MASK (ternary)
	PrefixLen int     // VALUE/LEN (lpm); -1 when absent
	RangeHigh *Number // LOW->HIGH (range)
}

func (k KeyMatch) String() string {
	s := k.Field + ":" + k.Value.Text
	switch {
	case k.Mask != nil:
		s += "&&&" + k.Mask.Text
	case k.PrefixLen >= 0:
		s += fmt.Sprintf("/%d", k.PrefixLen)
	case k.RangeHigh != nil:
		s += "->" + k.RangeHigh.Text
	}
	return s
}

// Arg is one "NAME:VALUE" action argument.
type Arg struct {
	Name  string
	Value Number
}

// ActionCall is "ACTION(NAME:VALUE, ...)".
type ActionCall struct {
	Name string
	Args []Arg
}

func (a ActionCall) String() string {
	parts := make([]string, len(a.Args))
	for i, arg := range a.Args {
		parts[i] = arg.Name + ":" + arg.Value.Text
	}
	return a.Name + "(" + strings.Join(parts, ", ") + ")"
}

// Add is "add TABLE [PRIORITY] KEY:VALUE ... ACTION(ARGS) [= HANDLE]".
// A higher STF priority wins, as in bmv2stf.py (which passes 10000-PRIORITY
// to bmv2, where the lowest value wins).
type Add struct {
	Base
	Table      string
	Priority   int // -1 when absent
	Keys       []KeyMatch
	Action     ActionCall
	HandleName string // the ID after '=', used by check_counter; "" when absent
}

func (c *Add) String() string {
	parts := []string{"add", c.Table}
	if c.Priority >= 0 {
		parts = append(parts, fmt.Sprint(c.Priority))
	}
	for _, k := range c.Keys {
		parts = append(parts, k.String())
	}
	parts = append(parts, c.Action.String())
	if c.HandleName != "" {
		parts = append(parts, "=", c.HandleName)
	}
	return strings.Join(parts, " ")
}

// SetDefault is "setdefault TABLE ACTION(ARGS)".
type SetDefault struct {
	Base
	Table  string
	Action ActionCall
}

func (c *SetDefault) String() string { return "setdefault " + c.Table + " " + c.Action.String() }

// RemoveAll is "remove all": delete every entry of every table.
type RemoveAll struct{ Base }

func (c *RemoveAll) String() string { return "remove all" }

// Packet is "packet PORT HEX...": inject a frame.
type Packet struct {
	Base
	Port int
	Data []byte
}

func (c *Packet) String() string { return fmt.Sprintf("packet %d %X", c.Port, c.Data) }

// Expect is "expect PORT [PATTERN] [$]". Pattern is hex where '*' matches any
// nibble; without '$' the packet may carry more bytes after the pattern.
// "expect PORT" alone allows any number of packets on the port.
type Expect struct {
	Base
	Port int
	// Nibbles holds the pattern, one hex digit or '*' per byte, upper case.
	Nibbles string
	// Exact is true when the pattern ended with '$': the packet must be
	// exactly as long as the pattern.
	Exact bool
	// Any is true for a bare "expect PORT": whatever arrives there is fine.
	Any bool
}

func (c *Expect) String() string {
	if c.Any {
		return fmt.Sprintf("expect %d", c.Port)
	}
	s := fmt.Sprintf("expect %d %s", c.Port, c.Nibbles)
	if c.Exact {
		s += "$"
	}
	return s
}

// NoPacket is "no_packet": no packet at all may come out (on any port not
// otherwise expected).
type NoPacket struct{ Base }

func (c *NoPacket) String() string { return "no_packet" }

// Wait is "wait": let the switch finish processing what was sent.
type Wait struct{ Base }

func (c *Wait) String() string { return "wait" }

// CounterCheck is "check_counter NAME(INDEX|HANDLE) [packets|bytes OP VALUE]".
// Without the comparison it checks that the packet count is 0, as
// bmv2stf.py does.
type CounterCheck struct {
	Base
	Counter string
	Index   *Number // set when indexing a counter array
	Handle  string  // set when naming an entry of a direct counter ("= ID" of add)
	Kind    string  // "packets" or "bytes"
	Op      string  // ==, !=, <, <=, >, >=
	Value   Number
}

func (c *CounterCheck) String() string {
	ref := c.Handle
	if c.Index != nil {
		ref = c.Index.Text
	}
	return fmt.Sprintf("check_counter %s(%s) %s %s %s", c.Counter, ref, c.Kind, c.Op, c.Value.Text)
}

// RegisterCheck is "check_register NAME(INDEX) OP VALUE", a grid extension
// (bmv2stf.py has no register assertion) so tests can assert register state.
type RegisterCheck struct {
	Base
	Register string
	Index    Number
	Op       string
	Value    Number
}

func (c *RegisterCheck) String() string {
	return fmt.Sprintf("check_register %s(%s) %s %s", c.Register, c.Index.Text, c.Op, c.Value.Text)
}

// AdvanceClock is "advance_clock DURATION", a grid extension: DURATION is a
// whole number followed by us, ms or s ("advance_clock 5us", "advance_clock
// 2 ms"), at most an hour. The engine
// target moves its virtual clock by that much; a real-time target sleeps.
type AdvanceClock struct {
	Base
	By   time.Duration
	Text string // the duration as written
}

func (c *AdvanceClock) String() string { return "advance_clock " + c.Text }

// Direct is one of the simple_switch_CLI commands STF passes through to the
// switch: mirroring_add SESSION PORT, mirroring_add_mc SESSION GROUP,
// mirroring_delete SESSION, mirroring_get SESSION, mc_mgrp_create GROUP,
// mc_node_create RID PORT..., mc_node_update NODE PORT...,
// mc_node_associate GROUP NODE, counter_read NAME INDEX,
// counter_write NAME INDEX PACKETS BYTES, register_read NAME INDEX,
// register_write NAME INDEX VALUE, register_reset NAME,
// meter_get_rates NAME INDEX, meter_set_rates NAME INDEX RATE:BURST...,
// meter_array_set_rates NAME RATE:BURST...
type Direct struct {
	Base
	Name   string      // the command word, lower case
	Object string      // register, counter or meter name; "" for the others
	Args   []Number    // the numeric arguments in order
	Rates  []MeterRate // meter_*_set_rates only
}

// MeterRate is one "RATE:BURST" pair of a meter command; the rate is in
// units (packets or bytes) per microsecond, as simple_switch_CLI takes it.
type MeterRate struct {
	Text  string
	Rate  float64
	Burst uint64
}

func (c *Direct) String() string {
	parts := []string{c.Name}
	if c.Object != "" {
		parts = append(parts, c.Object)
	}
	for _, a := range c.Args {
		parts = append(parts, a.Text)
	}
	for _, r := range c.Rates {
		parts = append(parts, r.Text)
	}
	return strings.Join(parts, " ")
}
