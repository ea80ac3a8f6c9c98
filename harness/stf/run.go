package stf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/engine"
)

// Options tune a run.
type Options struct {
	// Trace, when set, receives every STF command as it is applied,
	// interleaved with the engine's per-packet trace (parser states, tables,
	// actions, drops), like simple_switch --log-console.
	Trace io.Writer
	// Compat makes the run behave like p4c's bmv2stf.py driving
	// simple_switch_CLI: a command the switch rejects (a duplicate entry,
	// a const default action) and a false check_counter or
	// check_register become Warnings and the test goes on, as the CLI's
	// errors do not stop bmv2stf.py. Unknown names and bad syntax still
	// stop the test. grid conformance runs in this mode; grid p4test does
	// not, so that a rejected entry never goes unnoticed.
	Compat bool
}

// Output is a packet that left the switch.
type Output struct {
	Port int
	Data []byte
	// Cause is the "packet" command whose processing emitted it.
	Cause Pos
}

// FailureKind classifies what went wrong.
type FailureKind int

// Kinds of failure.
const (
	// Mismatch: a packet came out on the expected port but its bytes differ.
	Mismatch FailureKind = iota
	// Missing: an expected packet never came out.
	Missing
	// Unexpected: a packet came out that no expect line accounts for.
	Unexpected
	// CheckFailed: a check_counter or check_register assertion is false.
	CheckFailed
	// CommandFailed: a command could not be applied (unknown table, bad
	// argument, the switch refused it); the run stops there.
	CommandFailed
	// Crashed: the engine panicked while applying a command; the panic was
	// caught and the run stops there.
	Crashed
	// NothingTested: the test sends no packet and checks nothing (an
	// empty file, say), so it would pass without testing anything.
	NothingTested
)

func (k FailureKind) String() string {
	switch k {
	case Mismatch:
		return "mismatch"
	case Missing:
		return "missing"
	case Unexpected:
		return "unexpected"
	case CheckFailed:
		return "check failed"
	case CommandFailed:
		return "command failed"
	case Crashed:
		return "engine crashed"
	case NothingTested:
		return "nothing tested"
	}
	return "unknown"
}

// Failure is one reason a test failed.
type Failure struct {
	Kind FailureKind
	// At is the STF line the failure is about: the expect line of a
	// mismatch or missing packet, the packet line that caused an unexpected
	// output, the failing check or command.
	At Pos
	// Port and Index locate a packet: the Index-th packet (from 0) on Port.
	Port, Index int
	Expect      *Expect // mismatch, missing
	Got         *Output // mismatch, unexpected
	Msg         string
	// Hint, when set, guesses the cause: a missing packet that came out
	// on another port, say.
	Hint string
}

// Result is the outcome of one STF test.
type Result struct {
	Sent     int      // packets injected
	Outputs  []Output // every packet that came out, in order
	Failures []Failure
	// Warnings are rejected commands and false checks that Compat mode
	// let pass.
	Warnings []Failure
}

// Passed reports whether every expectation and check held.
func (r *Result) Passed() bool { return len(r.Failures) == 0 }

// Summary is a one-line description: "PASS (5 packets in, 4 out)" or the
// count and first reasons of the failures.
func (r *Result) Summary() string {
	if r.Passed() {
		return fmt.Sprintf("PASS (%d packets in, %d out)", r.Sent, len(r.Outputs))
	}
	parts := make([]string, 0, 3)
	for _, f := range r.sortedFailures()[:min(3, len(r.Failures))] {
		parts = append(parts, f.short())
	}
	more := ""
	if len(r.Failures) > 3 {
		more = fmt.Sprintf("; and %d more", len(r.Failures)-3)
	}
	return fmt.Sprintf("%d failure(s): %s%s", len(r.Failures), strings.Join(parts, "; "), more)
}

func (f Failure) short() string {
	switch f.Kind {
	case Mismatch:
		bad, length := f.Expect.Compare(f.Got.Data)
		what := length
		if len(bad) > 0 {
			what = fmt.Sprintf("%d byte(s) differ, first at byte %d", len(bad), bad[0])
			if field := FieldAt(f.Got.Data, bad[0]); field != "" {
				what += " (" + field + ")"
			}
			if length != "" {
				what += ", " + length
			}
		}
		return fmt.Sprintf("line %d: packet #%d on port %d: %s", f.At.Line, f.Index+1, f.Port, what)
	case Missing:
		if f.Hint != "" {
			return fmt.Sprintf("line %d: expected packet #%d on port %d never came out (%s)", f.At.Line, f.Index+1, f.Port, f.Hint)
		}
		return fmt.Sprintf("line %d: expected packet #%d on port %d never came out", f.At.Line, f.Index+1, f.Port)
	case Unexpected:
		return fmt.Sprintf("unexpected packet on port %d (caused by the packet at line %d)", f.Port, f.At.Line)
	case NothingTested:
		return f.Msg
	}
	return fmt.Sprintf("line %d: %s", f.At.Line, f.Msg)
}

// sortedFailures orders the failures by the STF line they are about.
func (r *Result) sortedFailures() []Failure {
	failures := append([]Failure(nil), r.Failures...)
	sort.SliceStable(failures, func(i, j int) bool { return failures[i].At.Line < failures[j].At.Line })
	return failures
}

// Report writes a readable account of every failure, with byte diffs, in
// the order of the STF lines they are about. Packets on a port are counted
// from 1 ("packet #2 on port 3").
func (r *Result) Report(w io.Writer) {
	for _, f := range r.sortedFailures() {
		switch f.Kind {
		case Mismatch:
			bad, length := f.Expect.Compare(f.Got.Data)
			fmt.Fprintf(w, "%s: packet #%d on port %d does not match (sent by the packet at line %d)\n",
				f.At, f.Index+1, f.Port, f.Got.Cause.Line)
			if len(bad) > 0 {
				fmt.Fprintf(w, "    differs in %s\n", DescribeBytes(f.Got.Data, bad, 4))
			}
			if length != "" {
				fmt.Fprintf(w, "    %s\n", length)
			}
			io.WriteString(w, FormatDiff(f.Expect, f.Got.Data))
		case Missing:
			fmt.Fprintf(w, "%s: expected packet #%d on port %d never came out\n", f.At, f.Index+1, f.Port)
			if f.Hint != "" {
				fmt.Fprintf(w, "    hint: %s\n", f.Hint)
			}
			io.WriteString(w, FormatPattern(f.Expect))
		case Unexpected:
			fmt.Fprintf(w, "%s: the packet sent here caused an unexpected packet #%d on port %d:\n",
				f.At, f.Index+1, f.Port)
			if f.Hint != "" {
				fmt.Fprintf(w, "    hint: %s\n", f.Hint)
			}
			io.WriteString(w, HexDump(f.Got.Data))
		case NothingTested:
			fmt.Fprintln(w, f.Msg)
		default:
			fmt.Fprintf(w, "%s: %s\n", f.At, f.Msg)
		}
	}
	for _, f := range r.Warnings {
		fmt.Fprintf(w, "%s: warning: %s\n", f.At, f.Msg)
	}
}

// Run loads the bmv2 JSON program and applies the STF commands to a fresh
// engine switch, then compares the packets that came out with the
// expectations. The returned error is for a program that does not load;
// everything that goes wrong while running the test (including a crash of
// the engine) is a Failure in the Result.
func Run(programJSON []byte, cmds []Command, opts Options) (*Result, error) {
	s, err := NewSession(programJSON, opts)
	if err != nil {
		return nil, err
	}
	return s.run(cmds), nil
}

// RunOn applies the STF commands to target, which must already run the
// program whose bmv2 JSON is programJSON (the runner resolves names with
// it), and compares the packets that came out with the expectations. ctx
// bounds the waits for packets (Target.Settle). The returned error is for a
// program whose JSON does not parse.
func RunOn(ctx context.Context, target Target, programJSON []byte, cmds []Command, opts Options) (*Result, error) {
	s, err := NewSessionOn(ctx, target, programJSON, opts)
	if err != nil {
		return nil, err
	}
	return s.run(cmds), nil
}

func (s *Session) run(cmds []Command) *Result {
	for _, c := range cmds {
		if err := s.Apply(c); err != nil {
			// Later expectations would only fail confusingly.
			break
		}
	}
	r := s.Finish()
	if r.Passed() && !testsSomething(cmds) {
		r.Failures = append(r.Failures, Failure{Kind: NothingTested,
			Msg: fmt.Sprintf("nothing tested: %d command(s), but no packet, expect, no_packet, check_counter or check_register line", len(cmds))})
	}
	return r
}

// testsSomething reports whether the commands send a packet or check
// anything; a test that does neither (an empty file) is a failure, or it
// would pass without testing anything.
func testsSomething(cmds []Command) bool {
	for _, c := range cmds {
		switch c.(type) {
		case *Packet, *Expect, *NoPacket, *CounterCheck, *RegisterCheck:
			return true
		}
	}
	return false
}

// Session is a switch under test driven by STF commands one at a time; Run
// uses it for whole files, package p4test for Go tests.
type Session struct{ r *runner }

// NewSession loads the bmv2 JSON program into a fresh engine switch.
func NewSession(programJSON []byte, opts Options) (s *Session, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("engine crashed loading the program: %v\n%s", p, firstFrames(debug.Stack(), 20))
		}
	}()
	prog, names, err := parseProgram(programJSON)
	if err != nil {
		return nil, err
	}
	compiled, err := engine.LoadProgram(prog)
	if err != nil {
		return nil, fmt.Errorf("load program: %w", err)
	}
	target := NewEngineTarget(compiled, opts.Trace)
	r := newRunner(context.Background(), names, target, opts)
	r.engine = target
	return &Session{r: r}, nil
}

// NewSessionOn drives target, which must already run the program whose
// bmv2 JSON is programJSON; ctx bounds the waits for packets.
func NewSessionOn(ctx context.Context, target Target, programJSON []byte, opts Options) (*Session, error) {
	_, names, err := parseProgram(programJSON)
	if err != nil {
		return nil, err
	}
	return &Session{r: newRunner(ctx, names, target, opts)}, nil
}

func parseProgram(programJSON []byte) (*bmv2json.Program, *nameIndex, error) {
	prog, err := bmv2json.Parse(programJSON)
	if err != nil {
		return nil, nil, fmt.Errorf("parse bmv2 JSON: %w", err)
	}
	names, err := newNames(prog)
	if err != nil {
		return nil, nil, err
	}
	return prog, names, nil
}

// Apply runs one command. An error means the command could not be applied;
// it is also recorded as a CommandFailed failure.
func (s *Session) Apply(c Command) error {
	if _, isExpect := c.(*Expect); !isExpect {
		// Packets go one at a time, and control-plane changes and checks
		// find the switch at rest.
		if err := s.r.settle(); err != nil {
			s.r.fail(CommandFailed, c.Position(), "waiting for the packets sent before: %v", err)
			return fmt.Errorf("%s: waiting for the packets sent before: %w", c.Position(), err)
		}
	}
	s.r.traceCommand(c)
	if err := s.r.apply(c); err != nil {
		var crash *crashError
		var refused *rejectedError
		switch {
		case errors.As(err, &crash):
			s.r.fail(Crashed, c.Position(), "%s: %v", commandWord(c), err)
		case s.r.opts.Compat && (errors.As(err, &refused) || isCheck(c)):
			s.r.result.Warnings = append(s.r.result.Warnings, Failure{Kind: CommandFailed, At: c.Position(),
				Msg: fmt.Sprintf("%s: %v (the switch rejected it; the test goes on)", commandWord(c), err)})
			return nil
		default:
			s.r.fail(CommandFailed, c.Position(), "%s: %v", commandWord(c), err)
		}
		return fmt.Errorf("%s: %w", c.Position(), err)
	}
	return nil
}

// Exec parses one line of STF and applies it. Errors name the line "Exec".
func (s *Session) Exec(line string) error {
	cmds, err := Parse("Exec", line)
	if err != nil {
		return err
	}
	for _, c := range cmds {
		if err := s.Apply(c); err != nil {
			return err
		}
	}
	return nil
}

// Send injects a frame on a port and returns the packets it caused, in the
// order they came out (from a remote target, what arrived until it
// settled). They are also kept for Finish.
func (s *Session) Send(port int, frame []byte) ([]Output, error) {
	before := len(s.r.result.Outputs)
	// Outputs name their cause by position: here the n-th Send call.
	at := Pos{File: "Send", Line: s.r.result.Sent + 1}
	err := s.Apply(&Packet{Base: Base{At: at}, Port: port, Data: frame})
	if err == nil {
		if err = s.r.settle(); err != nil {
			s.r.fail(CommandFailed, at, "waiting for the packets it caused: %v", err)
			err = fmt.Errorf("%s: waiting for the packets it caused: %w", at, err)
		}
	}
	return s.r.result.Outputs[before:], err
}

// Switch is the engine switch under test, for control-plane operations STF
// has no command for; nil when the session drives another Target.
func (s *Session) Switch() *engine.Switch {
	if s.r.engine == nil {
		return nil
	}
	return s.r.engine.Switch()
}

// Target is the switch under test.
func (s *Session) Target() Target { return s.r.target }

// Finish waits for the packets still in flight, compares every packet that
// came out with the expect commands applied so far and returns the result.
// Call it once, at the end.
func (s *Session) Finish() *Result {
	if !s.r.finished {
		s.r.finished = true
		if err := s.r.settle(); err != nil {
			s.r.fail(CommandFailed, s.r.current, "waiting for the packets sent so far: %v", err)
		}
		s.r.compare()
	}
	return s.r.result
}

// runner holds the state of one STF run.
type runner struct {
	ctx    context.Context
	names  *nameIndex
	target Target
	engine *EngineTarget // the target when it is the engine, else nil
	opts   Options
	result *Result

	handles  map[string]entryRef // "= NAME" of add commands
	nodes    []mcNode            // multicast nodes by handle
	groups   map[uint16][]int    // multicast group -> node handles
	expects  map[int][]*Expect   // per port, in order
	anyPort  map[int]bool        // ports whose last expect is a bare "expect PORT"
	ports    map[int]bool        // ports named by packet and expect lines
	current  Pos                 // the packet command being processed
	sentAt   []Pos               // the packet command of each Send, by number
	pending  bool                // packets were sent since the target last settled
	patterns int                 // expect commands with a pattern so far
	finished bool
}

type entryRef struct {
	table  string
	handle engine.EntryHandle
}

type mcNode struct {
	rid   uint16
	ports []uint32
}

// virtualStart is the switch clock at the start of a run. STF runs use a
// virtual clock that advances 1 µs per packet, so meters and timestamps do
// not depend on how fast the machine is.
var virtualStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newRunner(ctx context.Context, names *nameIndex, target Target, opts Options) *runner {
	return &runner{
		ctx:     ctx,
		names:   names,
		target:  target,
		opts:    opts,
		result:  &Result{},
		handles: map[string]entryRef{},
		groups:  map[uint16][]int{},
		expects: map[int][]*Expect{},
		anyPort: map[int]bool{},
		ports:   map[int]bool{},
	}
}

// traceCommand logs a command before it runs; packets and expected
// packets are shown as rows of 16 bytes, like the diffs.
func (r *runner) traceCommand(c Command) {
	if r.opts.Trace == nil {
		return
	}
	switch c := c.(type) {
	case *Packet:
		r.tracef("[%s] packet in on port %d, %d bytes:\n%s", c.At, c.Port, len(c.Data), strings.TrimRight(HexDump(c.Data), "\n"))
	case *Expect:
		if c.Any {
			r.tracef("[%s] expect anything on port %d", c.At, c.Port)
			return
		}
		r.tracef("[%s] expect on port %d:\n%s", c.At, c.Port, strings.TrimRight(FormatPattern(c), "\n"))
	default:
		r.tracef("[%s] %s", c.Position(), c)
	}
}

func (r *runner) tracef(format string, args ...any) {
	if r.opts.Trace != nil {
		fmt.Fprintf(r.opts.Trace, format+"\n", args...)
	}
}

func (r *runner) fail(kind FailureKind, at Pos, format string, args ...any) {
	r.result.Failures = append(r.result.Failures, Failure{Kind: kind, At: at, Msg: fmt.Sprintf(format, args...)})
}

// checkFailed records a false check_counter or check_register: a failure,
// or in Compat mode a warning (bmv2stf.py does not check them).
func (r *runner) checkFailed(at Pos, format string, args ...any) {
	f := Failure{Kind: CheckFailed, At: at, Msg: fmt.Sprintf(format, args...)}
	if r.opts.Compat {
		r.result.Warnings = append(r.result.Warnings, f)
		return
	}
	r.result.Failures = append(r.result.Failures, f)
}

func commandWord(c Command) string {
	w, _, _ := strings.Cut(c.String(), " ")
	return w
}

// crashError is a panic caught while applying a command.
type crashError struct {
	value any
	stack string
}

func (e *crashError) Error() string { return fmt.Sprintf("engine crashed: %v\n%s", e.value, e.stack) }

// isCheck reports whether c is an assertion on switch state, which
// bmv2stf.py does not evaluate.
func isCheck(c Command) bool {
	switch c.(type) {
	case *CounterCheck, *RegisterCheck:
		return true
	}
	return false
}

// rejectedError is a command the switch refused, as opposed to one that
// names something the program does not have.
type rejectedError struct{ err error }

func (e *rejectedError) Error() string { return e.err.Error() }
func (e *rejectedError) Unwrap() error { return e.err }

// rejected marks a non-nil error of the switch (or of the control-plane
// state STF keeps) as a rejection.
func rejected(err error) error {
	if err == nil {
		return nil
	}
	return &rejectedError{err}
}

// apply runs one command, turning an engine panic into an error so that one
// broken program cannot take down a whole conformance run.
func (r *runner) apply(c Command) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &crashError{value: p, stack: firstFrames(debug.Stack(), 20)}
		}
	}()
	switch c := c.(type) {
	case *Add:
		e, err := r.names.resolveAdd(c)
		if err != nil {
			return err
		}
		h, err := r.target.AddEntry(e.Table, engineEntry(e))
		if err != nil {
			return rejected(err)
		}
		if c.HandleName != "" {
			r.handles[c.HandleName] = entryRef{table: e.Table, handle: h}
		}
	case *SetDefault:
		d, err := r.names.resolveSetDefault(c)
		if err != nil {
			return err
		}
		return rejected(r.target.SetDefaultAction(d.Table, d.Action, d.ActionArgs))
	case *RemoveAll:
		for _, t := range r.names.tables {
			if err := r.target.ClearTable(t.t.Name); err != nil {
				return rejected(err)
			}
		}
	case *Packet:
		r.ports[c.Port] = true
		r.result.Sent++
		r.current = c.At
		r.sentAt = append(r.sentAt, c.At)
		r.pending = true
		frames, err := r.target.Send(c.Port, c.Data)
		r.collect(frames)
		return rejected(err)
	case *Expect:
		r.ports[c.Port] = true
		// As in bmv2stf.py, the last expect on a port decides whether
		// the port is checked at all: a bare "expect PORT" after
		// patterns turns checking off, a pattern after it back on.
		r.anyPort[c.Port] = c.Any
		if !c.Any {
			r.expects[c.Port] = append(r.expects[c.Port], c)
			r.patterns++
		}
	case *NoPacket, *Wait:
		// The target settled before this command (above): every packet
		// sent so far has come out. "no_packet" adds nothing to "every
		// output must be expected".
	case *AdvanceClock:
		return rejected(r.target.Advance(c.By))
	case *CounterCheck:
		return r.checkCounter(c)
	case *RegisterCheck:
		return r.checkRegister(c)
	case *Direct:
		return r.direct(c)
	default:
		return fmt.Errorf("command %T is not supported by the runner", c)
	}
	return nil
}

// firstFrames keeps the top of a stack trace: enough to find the bug.
func firstFrames(stack []byte, lines int) string {
	all := strings.Split(string(stack), "\n")
	return strings.Join(all[:min(lines, len(all))], "\n")
}

// settle waits for the packets sent since the target last settled, if any,
// and collects what they caused.
func (r *runner) settle() error {
	if !r.pending {
		return nil
	}
	r.pending = false
	frames, err := r.target.Settle(r.ctx, r.patterns)
	r.collect(frames)
	return err
}

// collect keeps the frames that came out of the target, naming the packet
// command that caused each.
func (r *runner) collect(frames []Frame) {
	for _, f := range frames {
		cause := r.current
		if f.Packet >= 0 && f.Packet < len(r.sentAt) {
			cause = r.sentAt[f.Packet]
		}
		r.result.Outputs = append(r.result.Outputs, Output{Port: f.Port, Data: f.Data, Cause: cause})
		r.tracef("packet out on port %d, %d bytes:\n%s", f.Port, len(f.Data), strings.TrimRight(HexDump(f.Data), "\n"))
	}
}

func engineEntry(e *resolvedEntry) engine.Entry {
	out := engine.Entry{
		Action: e.Action,
		Args:   e.ActionArgs,
		// STF priorities follow P4Runtime (larger wins); bmv2 and the
		// engine take the smallest number first.
		Priority: -int32(e.Priority),
	}
	for _, k := range e.Keys {
		m := engine.Match{Value: k.Value}
		switch k.MatchType {
		case "lpm":
			m.PrefixLen = k.PrefixLen
		case "ternary":
			m.Mask = k.Mask
		case "optional":
			m.Wildcard = isZero(k.Mask)
		case "range":
			m.High = k.High
		}
		out.Match = append(out.Match, m)
	}
	return out
}

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// compare matches the outputs against the expectations port by port: the
// order of packets on one port matters, the order across ports does not.
func (r *runner) compare() {
	got := map[int][]*Output{}
	for i := range r.result.Outputs {
		o := &r.result.Outputs[i]
		got[o.Port] = append(got[o.Port], o)
	}
	ports := map[int]bool{}
	for p := range got {
		ports[p] = true
	}
	for p := range r.expects {
		ports[p] = true
	}
	sorted := make([]int, 0, len(ports))
	for p := range ports {
		sorted = append(sorted, p)
	}
	sort.Ints(sorted)
	for _, port := range sorted {
		if r.anyPort[port] {
			continue
		}
		if r.opts.Compat && !r.ports[port] {
			// bmv2stf.py gives simple_switch an interface only for the
			// ports its packet and expect lines name; packets sent to
			// any other port vanish.
			for _, o := range got[port] {
				r.result.Warnings = append(r.result.Warnings, Failure{Kind: Unexpected, At: o.Cause, Port: port, Got: o,
					Msg: fmt.Sprintf("a packet went out of port %d, which no packet or expect line names: simple_switch would have no such interface", port)})
			}
			continue
		}
		want, have := r.expects[port], got[port]
		for i := 0; i < max(len(want), len(have)); i++ {
			switch {
			case i >= len(have):
				r.result.Failures = append(r.result.Failures, Failure{Kind: Missing, At: want[i].At, Port: port, Index: i, Expect: want[i]})
			case i >= len(want):
				r.result.Failures = append(r.result.Failures, Failure{Kind: Unexpected, At: have[i].Cause, Port: port, Index: i, Got: have[i]})
			case !want[i].Matches(have[i].Data):
				r.result.Failures = append(r.result.Failures, Failure{Kind: Mismatch, At: want[i].At, Port: port, Index: i, Expect: want[i], Got: have[i]})
			}
		}
	}
	r.hintWrongPorts()
}

// hintWrongPorts explains a missing packet that came out, unexpected, on
// another port: the usual mistake is the port, not the bytes.
func (r *runner) hintWrongPorts() {
	fs := r.result.Failures
	used := map[int]bool{}
	for i := range fs {
		if fs[i].Kind != Missing {
			continue
		}
		for j := range fs {
			if fs[j].Kind == Unexpected && !used[j] && fs[i].Expect.Matches(fs[j].Got.Data) {
				used[j] = true
				fs[i].Hint = fmt.Sprintf("a packet matching it came out on port %d instead (sent by the packet at line %d)", fs[j].Port, fs[j].Got.Cause.Line)
				fs[j].Hint = fmt.Sprintf("it matches the packet expected on port %d at line %d", fs[i].Port, fs[i].At.Line)
				break
			}
		}
	}
}

func (r *runner) checkCounter(c *CounterCheck) error {
	arr, err := lookup("counter", c.Counter, r.names.json.CounterArrays, func(a bmv2json.CounterArray) string { return a.Name })
	if err != nil {
		return err
	}
	var v engine.CounterValue
	switch {
	case c.Handle != "":
		ref, ok := r.handles[strings.TrimPrefix(c.Handle, "$")]
		if !ok {
			return fmt.Errorf("no entry was added with '= %s'", strings.TrimPrefix(c.Handle, "$"))
		}
		if !arr.IsDirect || arr.Binding != ref.table {
			return fmt.Errorf("counter %s is not the direct counter of table %s", arr.Name, ref.table)
		}
		if v, err = r.target.ReadDirectCounter(ref.table, ref.handle); err != nil {
			return err
		}
	default:
		if arr.IsDirect {
			return fmt.Errorf("%s is a direct counter: name an entry with '= NAME' on its add and write %s(NAME)", arr.Name, c.Counter)
		}
		if !c.Index.Value.IsInt64() || c.Index.Value.Int64() > 1<<31-1 {
			return fmt.Errorf("index %s is out of range", c.Index.Text)
		}
		if v, err = r.target.ReadCounter(arr.Name, int(c.Index.Value.Int64())); err != nil {
			return err
		}
	}
	got := v.Packets
	if c.Kind == "bytes" {
		got = v.Bytes
	}
	if !compareOp(new(big.Int).SetUint64(got), c.Op, c.Value.Value) {
		r.checkFailed(c.At, "%s: %s is %d, expected %s %s", c, c.Kind, got, c.Op, c.Value.Text)
	}
	return nil
}

func (r *runner) checkRegister(c *RegisterCheck) error {
	arr, err := r.register(c.Register)
	if err != nil {
		return err
	}
	if !c.Index.Value.IsInt64() || c.Index.Value.Int64() > 1<<31-1 {
		return fmt.Errorf("index %s is out of range", c.Index.Text)
	}
	v, err := r.target.ReadRegister(arr.Name, int(c.Index.Value.Int64()))
	if err != nil {
		return err
	}
	got := new(big.Int).SetBytes(v)
	if !compareOp(got, c.Op, c.Value.Value) {
		r.checkFailed(c.At, "%s: %s[%s] is %#x (%v), expected %s %s", c, arr.Name, c.Index.Text, got, got, c.Op, c.Value.Text)
	}
	return nil
}

func (r *runner) register(name string) (bmv2json.RegisterArray, error) {
	return lookup("register", name, r.names.json.RegisterArrays, func(a bmv2json.RegisterArray) string { return a.Name })
}

func compareOp(got *big.Int, op string, want *big.Int) bool {
	c := got.Cmp(want)
	switch op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

// directArgLimits bounds the numeric arguments of the pass-through
// commands, the last bound repeating: sessions, ports and indexes are 32-bit,
// multicast groups and replication ids 16-bit. Counter values and register
// values are checked where they are used.
var directArgLimits = map[string][]uint64{
	"mirroring_add":     {1<<32 - 1, 1<<32 - 1},
	"mirroring_add_mc":  {1<<32 - 1, 1<<16 - 1},
	"mirroring_delete":  {1<<32 - 1},
	"mirroring_get":     {1<<32 - 1},
	"mc_mgrp_create":    {1<<16 - 1},
	"mc_node_create":    {1<<16 - 1, 1<<32 - 1},
	"mc_node_update":    {1<<31 - 1, 1<<32 - 1},
	"mc_node_associate": {1<<16 - 1, 1<<31 - 1},
	"counter_read":      {1<<31 - 1},
	"counter_write":     {1<<31 - 1, 1<<64 - 1},
	"register_read":     {1<<31 - 1},
	"register_write":    {1<<31 - 1},
	"meter_get_rates":   {1<<31 - 1},
	"meter_set_rates":   {1<<31 - 1},
}

func checkDirectArgs(c *Direct) error {
	limits := directArgLimits[c.Name]
	for i, a := range c.Args {
		if len(limits) == 0 || (c.Name == "register_write" && i == 1) {
			break
		}
		limit := limits[min(i, len(limits)-1)]
		if !a.Value.IsUint64() || a.Value.Uint64() > limit {
			return fmt.Errorf("argument %d (%s) is out of range: at most %d", i+1, a.Text, limit)
		}
	}
	return nil
}

func (r *runner) direct(c *Direct) error {
	if err := checkDirectArgs(c); err != nil {
		return err
	}
	arg := func(i int) int { return int(c.Args[i].Value.Int64()) }
	switch c.Name {
	case "mirroring_add":
		return rejected(r.target.SetCloneSession(uint32(arg(0)), engine.CloneSession{Port: uint32(arg(1))}))
	case "mirroring_add_mc":
		return rejected(r.target.SetCloneSession(uint32(arg(0)), engine.CloneSession{Group: uint16(arg(1))}))
	case "mirroring_delete":
		return rejected(r.target.DeleteCloneSession(uint32(arg(0))))
	case "mirroring_get", "counter_read", "register_read", "meter_get_rates":
		// Reads only show state; the trace has it when asked for.
		return r.traceRead(c)
	case "mc_mgrp_create":
		g := uint16(arg(0))
		if _, dup := r.groups[g]; dup {
			return rejected(fmt.Errorf("multicast group %d already exists", g))
		}
		r.groups[g] = nil
		return rejected(r.target.SetMulticastGroup(g, nil))
	case "mc_node_create", "mc_node_update":
		var ports []uint32
		for _, a := range c.Args[1:] {
			ports = append(ports, uint32(a.Value.Int64()))
		}
		if c.Name == "mc_node_create" {
			r.nodes = append(r.nodes, mcNode{rid: uint16(arg(0)), ports: ports})
			r.tracef("    node handle %d", len(r.nodes)-1)
			return nil
		}
		h := arg(0)
		if h >= len(r.nodes) {
			return rejected(fmt.Errorf("no multicast node with handle %d (%d created)", h, len(r.nodes)))
		}
		r.nodes[h].ports = ports
		return r.syncGroups()
	case "mc_node_associate":
		g, h := uint16(arg(0)), arg(1)
		if _, ok := r.groups[g]; !ok {
			return rejected(fmt.Errorf("multicast group %d was not created (mc_mgrp_create %d)", g, g))
		}
		if h >= len(r.nodes) {
			return rejected(fmt.Errorf("no multicast node with handle %d (%d created; handles count from 0)", h, len(r.nodes)))
		}
		r.groups[g] = append(r.groups[g], h)
		return r.syncGroups()
	case "counter_write":
		arr, err := lookup("counter", c.Object, r.names.json.CounterArrays, func(a bmv2json.CounterArray) string { return a.Name })
		if err != nil {
			return err
		}
		return rejected(r.target.WriteCounter(arr.Name, arg(0), engine.CounterValue{Packets: c.Args[1].Value.Uint64(), Bytes: c.Args[2].Value.Uint64()}))
	case "register_write":
		arr, err := r.register(c.Object)
		if err != nil {
			return err
		}
		v, err := toBytes(c.Args[1].Value, arr.Bitwidth)
		if err != nil {
			return fmt.Errorf("register %s: %w", arr.Name, err)
		}
		return rejected(r.target.WriteRegister(arr.Name, arg(0), v))
	case "register_reset":
		arr, err := r.register(c.Object)
		if err != nil {
			return err
		}
		return rejected(r.target.ResetRegister(arr.Name))
	case "meter_set_rates", "meter_array_set_rates":
		arr, err := lookup("meter", c.Object, r.names.json.MeterArrays, func(a bmv2json.MeterArray) string { return a.Name })
		if err != nil {
			return err
		}
		cfg, err := meterConfig(arr, c.Rates)
		if err != nil {
			return err
		}
		if c.Name == "meter_set_rates" {
			return rejected(r.target.SetMeter(arr.Name, arg(0), cfg))
		}
		for i := 0; i < arr.Size; i++ {
			if err := r.target.SetMeter(arr.Name, i, cfg); err != nil {
				return rejected(err)
			}
		}
		return nil
	}
	return fmt.Errorf("%s is not supported", c.Name)
}

// syncGroups hands the engine the replicas of every group from the nodes
// associated with it.
func (r *runner) syncGroups() error {
	for g, handles := range r.groups {
		var reps []engine.Replica
		for _, h := range handles {
			for _, p := range r.nodes[h].ports {
				reps = append(reps, engine.Replica{Port: p, Rid: r.nodes[h].rid})
			}
		}
		if err := r.target.SetMulticastGroup(g, reps); err != nil {
			return rejected(err)
		}
	}
	return nil
}

// meterConfig converts simple_switch_CLI rates (units per microsecond,
// committed first, then peak) into the engine's units per second. Like
// simple_switch, it wants one pair per rate of the meter (two for v1model's
// two-rate three-colour meters) in increasing order.
func meterConfig(arr bmv2json.MeterArray, rates []MeterRate) (engine.MeterConfig, error) {
	if arr.RateCount != 2 {
		return engine.MeterConfig{}, fmt.Errorf("meter %s has %d rates; only two-rate meters are supported", arr.Name, arr.RateCount)
	}
	if len(rates) != 2 {
		return engine.MeterConfig{}, fmt.Errorf("meter %s needs two RATE:BURST pairs (committed, then peak), got %d", arr.Name, len(rates))
	}
	c, p := rates[0], rates[1]
	if p.Rate < c.Rate {
		return engine.MeterConfig{}, fmt.Errorf("meter %s: the peak rate %s is below the committed rate %s", arr.Name, p.Text, c.Text)
	}
	// The engine counts whole units per second: 0.000001 per microsecond
	// is one per second, the slowest rate it can express.
	perSecond := func(x float64) uint64 { return uint64(x*1e6 + 0.5) }
	return engine.MeterConfig{CIR: perSecond(c.Rate), CBurst: c.Burst, PIR: perSecond(p.Rate), PBurst: p.Burst}, nil
}

func (r *runner) traceRead(c *Direct) error {
	if r.opts.Trace == nil {
		return nil
	}
	switch c.Name {
	case "register_read":
		arr, err := r.register(c.Object)
		if err != nil {
			return err
		}
		v, err := r.target.ReadRegister(arr.Name, int(c.Args[0].Value.Int64()))
		if err != nil {
			return err
		}
		r.tracef("    %s[%s] = 0x%x", arr.Name, c.Args[0].Text, v)
	case "counter_read":
		arr, err := lookup("counter", c.Object, r.names.json.CounterArrays, func(a bmv2json.CounterArray) string { return a.Name })
		if err != nil {
			return err
		}
		v, err := r.target.ReadCounter(arr.Name, int(c.Args[0].Value.Int64()))
		if err != nil {
			return err
		}
		r.tracef("    %s[%s] = %d packets, %d bytes", arr.Name, c.Args[0].Text, v.Packets, v.Bytes)
	case "meter_get_rates":
		arr, err := lookup("meter", c.Object, r.names.json.MeterArrays, func(a bmv2json.MeterArray) string { return a.Name })
		if err != nil {
			return err
		}
		cfg, configured, err := r.target.ReadMeter(arr.Name, int(c.Args[0].Value.Int64()))
		if err != nil {
			return err
		}
		if !configured {
			r.tracef("    %s[%s] is not configured: every packet is green", arr.Name, c.Args[0].Text)
			return nil
		}
		r.tracef("    %s[%s]: committed %d/s burst %d, peak %d/s burst %d", arr.Name, c.Args[0].Text, cfg.CIR, cfg.CBurst, cfg.PIR, cfg.PBurst)
	case "mirroring_get":
		r.tracef("    (the engine does not report mirror sessions back)")
	}
	return nil
}
