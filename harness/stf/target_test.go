package stf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/p4c"
)

// queuedTarget behaves like a remote switch: Send hands nothing back, the
// frames come out of Settle. It records how the runner drives it.
type queuedTarget struct {
	*EngineTarget
	queue    []Frame
	settles  []int // wantTotal of each Settle call
	sends    int
	advanced time.Duration
}

func newQueuedTarget(t *testing.T, programJSON []byte) *queuedTarget {
	t.Helper()
	prog, err := bmv2json.Parse(programJSON)
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := engine.LoadProgram(prog)
	if err != nil {
		t.Fatal(err)
	}
	return &queuedTarget{EngineTarget: NewEngineTarget(compiled, nil)}
}

func (q *queuedTarget) Send(port int, frame []byte) ([]Frame, error) {
	if len(q.queue) > 0 {
		// The runner must settle between packets.
		return nil, errors.New("a packet was sent before the previous one settled")
	}
	q.sends++
	frames, err := q.EngineTarget.Send(port, frame)
	q.queue = append(q.queue, frames...)
	return nil, err
}

func (q *queuedTarget) Settle(ctx context.Context, wantTotal int) ([]Frame, error) {
	q.settles = append(q.settles, wantTotal)
	out := q.queue
	q.queue = nil
	return out, ctx.Err()
}

func (q *queuedTarget) Advance(d time.Duration) error {
	q.advanced += d
	return q.EngineTarget.Advance(d)
}

// runQueued runs STF text on the l2acl program on a queued target.
func runQueued(t *testing.T, ctx context.Context, text string) (*queuedTarget, *Result) {
	t.Helper()
	cmds, err := Parse("t.stf", text)
	if err != nil {
		t.Fatal(err)
	}
	target := newQueuedTarget(t, l2acl(t))
	res, err := RunOn(ctx, target, l2acl(t), cmds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return target, res
}

func TestRunOnAQueuedTargetSettlesBeforeEveryCommandAfterAPacket(t *testing.T) {
	text := l2Entries + `
packet 1 000000000002 00000000000a 0800 0102
expect 2 000000000002 00000000000a 0800 0102 $
packet 1 000000000003 00000000000a 0800 0304
expect 3 000000000003 ************ 0800
check_counter port_in(1) packets == 2
advance_clock 3ms
packet 1 000000000009 00000000000a 0800 0506
`
	target, res := runQueued(t, context.Background(), text)
	mustPass(t, res)
	// Settles: before the second packet (1 pattern so far), before
	// check_counter (2), at the end (2). advance_clock follows a check,
	// not a packet.
	if got, want := target.settles, []int{1, 2, 2}; !slices.Equal(got, want) {
		t.Errorf("Settle was called with %v, want %v", got, want)
	}
	if target.sends != 3 || res.Sent != 3 || len(res.Outputs) != 2 {
		t.Errorf("%d sends, result sent %d with %d outputs; want 3, 3, 2", target.sends, res.Sent, len(res.Outputs))
	}
	if target.advanced != 3*time.Millisecond {
		t.Errorf("the clock advanced by %v, want 3ms", target.advanced)
	}
	if res.Outputs[1].Cause.Line != 7 {
		t.Errorf("the second output is blamed on line %d, want 7 (the packet that caused it)", res.Outputs[1].Cause.Line)
	}
}

func TestRunOnReportsAnUnexpectedFrameThatArrivesOnlyAtTheEnd(t *testing.T) {
	_, res := runQueued(t, context.Background(), l2Entries+"packet 1 000000000002 00000000000a 0800 0102\n")
	if len(res.Failures) != 1 || res.Failures[0].Kind != Unexpected || res.Failures[0].At.Line != 4 {
		t.Fatalf("failures %+v, want one unexpected packet caused by line 4", res.Failures)
	}
}

func TestRunOnFailsTheCommandWhenTheTargetCannotSettle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, res := runQueued(t, ctx, l2Entries+"packet 1 000000000002 00000000000a 0800 0102\nwait\n")
	if len(res.Failures) == 0 || res.Failures[0].Kind != CommandFailed || res.Failures[0].At.Line != 5 ||
		!strings.Contains(res.Failures[0].Msg, "context canceled") {
		t.Fatalf("failures %+v, want the wait at line 5 to fail with the context's error", res.Failures)
	}
}

func TestSessionOnAQueuedTargetSendReturnsTheSettledFrames(t *testing.T) {
	target := newQueuedTarget(t, l2acl(t))
	s, err := NewSessionOn(context.Background(), target, l2acl(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Switch() != nil {
		t.Error("Switch() of a session on another target is not nil")
	}
	if err := s.Exec("add fwd hdr.ethernet.dstAddr:0x000000000002 forward(port:2)"); err != nil {
		t.Fatal(err)
	}
	out, err := s.Send(1, []byte{0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0x0a, 0x08, 0x00, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Port != 2 {
		t.Fatalf("Send returned %+v, want one frame on port 2", out)
	}
}

func TestAdvanceClockParsesUnitsAndRejectsBadDurations(t *testing.T) {
	cmds, err := Parse("t.stf", "advance_clock 5us\nadvance_clock 7 ms\nadvance_clock 2s\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{5 * time.Microsecond, 7 * time.Millisecond, 2 * time.Second}
	for i, c := range cmds {
		a, ok := c.(*AdvanceClock)
		if !ok || a.By != want[i] {
			t.Errorf("command %d is %#v, want advance_clock by %v", i, c, want[i])
		}
	}
	if cmds[0].String() != "advance_clock 5us" {
		t.Errorf("String() = %q", cmds[0].String())
	}
	for text, wantErr := range map[string]string{
		"advance_clock 5":       "t.stf:1:16: expected the unit us, ms or s after 5, found end of line",
		"advance_clock 5ns":     "t.stf:1:16: expected the unit us, ms or s after 5, found \"ns\"",
		"advance_clock us":      "t.stf:1:15: expected a whole number",
		"advance_clock 3601s":   "t.stf:1:15: clock advance 3601s is more than 1h0m0s",
		"advance_clock 5us 6us": "unexpected \"6us\" after advance_clock",
	} {
		_, err := Parse("t.stf", text)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: error %v, want %q", text, err, wantErr)
		}
	}
}

// TestAdvanceClockMovesTheEngineClock runs a program that stores the
// ingress timestamp (µs since the switch started) in a register.
func TestAdvanceClockMovesTheEngineClock(t *testing.T) {
	src := filepath.Join(t.TempDir(), "clock.p4")
	if err := os.WriteFile(src, []byte(clockProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := p4c.Compile(src, p4c.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := Parse("t.stf", `
packet 0 00
check_register last_seen(0) == 1
advance_clock 2ms
packet 0 00
check_register last_seen(0) == 2002
advance_clock 1s
packet 0 00
check_register last_seen(0) == 1002003
`)
	if err != nil {
		t.Fatal(err)
	}
	result, err := Run(res.JSON, cmds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustPass(t, result)
}

const clockProgram = `
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> b; }
struct headers { h_t h; }
struct meta {}
parser P(packet_in p, out headers hdr, inout meta m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control NoVerify(inout headers hdr, inout meta m) { apply {} }
control I(inout headers hdr, inout meta m, inout standard_metadata_t sm) {
    register<bit<48>>(1) last_seen;
    apply {
        last_seen.write(0, sm.ingress_global_timestamp);
        mark_to_drop(sm);
    }
}
control E(inout headers hdr, inout meta m, inout standard_metadata_t sm) { apply {} }
control NoCompute(inout headers hdr, inout meta m) { apply {} }
control D(packet_out p, in headers hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), NoVerify(), I(), E(), NoCompute(), D()) main;
`
