package endpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"time"

	"github.com/grid-ina/grid/harness/gradproto"
)

// pollInterval bounds how long an endpoint blocks in a read, so it notices
// a cancelled context soon.
const pollInterval = 50 * time.Millisecond

// RunWorker runs member index of the spec's job until every fragment has a
// verified result, the spec's deadline passes or ctx is cancelled. The
// report is returned in every case once the socket is open; the error is
// for failures to start (bad index, no socket). Report.Failure says whether
// the run verified.
//
// The protocol rules are gradproto.Worker's. That model sends all fragments
// at once (Originals); here fragments enter a window, so each fragment in
// flight gets its own gradproto.Worker, which decides retries after control
// packets, resends after timeouts (the worker's round is the retransmission
// timeout / gradproto.TimeoutRounds) and when the fragment is done. The
// window is the model's AIMD rule over the whole worker: one more per
// result, halved (at least 1) on each control packet the model answers with
// a retry, capped at the spec's window.max.
func RunWorker(ctx context.Context, spec *Spec, index int, opts ...Option) (*Report, error) {
	began := time.Now()
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	o := collectOptions(opts)
	if spec.Start == StartSignal && o.start == nil {
		return nil, errors.New(`spec: start: "signal" needs a start trigger (StartOn)`)
	}
	if index < 0 || index >= len(spec.Job.Members) {
		return nil, fmt.Errorf("worker index %d: the job has members 0..%d", index, len(spec.Job.Members)-1)
	}
	plan := spec.Job.Plan()
	me := plan.Members[index]
	conn, err := listen(ctx, me.IP, false)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	o.announce(conn)
	w := &workerRun{
		spec: spec, plan: &plan, index: index, conn: conn,
		ps:       netip.AddrPortFrom(plan.PSIP, gradproto.UDPPort),
		inflight: map[uint32]*gradproto.Worker{},
		window:   float64(spec.Window.Initial),
		roundLen: time.Duration(spec.Timeout) / gradproto.TimeoutRounds,
		sums:     make([]int64, plan.Values),
		log:      slog.With("job", plan.Job, "worker", index),
	}
	w.rep = &Report{Role: RoleWorker, Job: plan.Job, Index: &index, Host: spec.Job.Members[index].Host,
		IP: me.IP.String(), Fragments: spec.Fragments, MinWindow: w.window}
	deadline := began.Add(time.Duration(spec.Deadline))
	if w.waitForStart(ctx, o.start, deadline) {
		w.run(ctx, deadline)
	}
	w.rep.FinalWindow = w.window
	w.rep.finish(time.Now(), plan.Values)
	return w.rep, nil
}

type workerRun struct {
	spec  *Spec
	plan  *gradproto.Plan
	index int
	conn  *net.UDPConn
	ps    netip.AddrPort
	rep   *Report
	log   *slog.Logger

	// inflight holds the model of each fragment sent and still without
	// its result; next is the number of the next fragment to send.
	inflight map[uint32]*gradproto.Worker
	next     int
	window   float64
	start    time.Time
	roundLen time.Duration
	round    int

	sums []int64
}

// waitForStart waits for the start trigger, if there is one; false means
// the run ended first (the report says why).
func (w *workerRun) waitForStart(ctx context.Context, start <-chan struct{}, deadline time.Time) bool {
	if start == nil {
		return true
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-start:
		return true
	case <-ctx.Done():
		w.rep.Error = "interrupted before the start signal: " + context.Cause(ctx).Error()
	case <-timer.C:
		w.rep.Error = fmt.Sprintf("deadline %v passed before the start signal", time.Duration(w.spec.Deadline))
	}
	w.rep.Start = time.Now()
	return false
}

func (w *workerRun) run(ctx context.Context, deadline time.Time) {
	w.start = time.Now()
	w.rep.Start = w.start
	buf, oob := make([]byte, 2048), make([]byte, oobSize)
	for w.rep.Completed < w.spec.Fragments {
		if err := w.fill(); err != nil {
			w.rep.Error = err.Error()
			return
		}
		now := time.Now()
		switch {
		case ctx.Err() != nil:
			w.rep.Error = "interrupted: " + context.Cause(ctx).Error()
			return
		case !now.Before(deadline):
			w.rep.Error = fmt.Sprintf("deadline %v passed", time.Duration(w.spec.Deadline))
			return
		}
		if r := int(now.Sub(w.start) / w.roundLen); r > w.round {
			if err := w.tick(r); err != nil {
				w.rep.Error = err.Error()
				return
			}
		}
		nextRound := w.start.Add(time.Duration(w.round+1) * w.roundLen)
		d, got, err := readUntil(w.conn, buf, oob, earliest(nextRound, deadline, now.Add(pollInterval)))
		if err == nil && got {
			err = w.receive(buf[:d.n], d.ce)
		}
		if err != nil {
			w.rep.Error = err.Error()
			return
		}
	}
}

func earliest(t time.Time, more ...time.Time) time.Time {
	for _, u := range more {
		if u.Before(t) {
			t = u
		}
	}
	return t
}

// fill sends originals while the window has room.
func (w *workerRun) fill() error {
	for len(w.inflight) < int(w.window) && w.next < w.spec.Fragments {
		frag := w.spec.fragment(w.next)
		w.next++
		vals := make([]int32, w.plan.Values)
		Gradient(vals, w.spec.Seed, w.index, frag, len(w.plan.Members))
		m := gradproto.NewWorker(w.plan, w.index, map[uint32][]int32{frag: vals})
		m.Round = w.round
		w.inflight[frag] = m
		for _, p := range m.Originals() {
			if err := w.send(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// tick moves the fragments' clocks to round r and sends what timed out.
func (w *workerRun) tick(r int) error {
	w.round = r
	for _, m := range w.inflight {
		m.Round = r
		for _, p := range m.Timeout() {
			w.rep.Resent++
			if err := w.send(p); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *workerRun) send(p *gradproto.Packet) error {
	w.rep.Sent++
	if err := sendTo(w.conn, p.Payload(), w.ps, &w.rep.SendDrops); err != nil {
		return fmt.Errorf("send fragment %d to %s: %w", p.Frag, w.ps, err)
	}
	return nil
}

func (w *workerRun) receive(b []byte, ce bool) error {
	h, vals, err := gradproto.ParsePayload(b, w.plan.Values)
	if err != nil || h.Job != w.plan.Job {
		w.rep.Ignored++
		return nil
	}
	p := &gradproto.Packet{Header: h, Values: vals}
	switch {
	case h.Has(gradproto.FlagResult):
		w.rep.Results++
		w.verify(p)
		m := w.inflight[h.Frag]
		if m == nil {
			w.rep.DuplicateResults++
			return nil
		}
		m.Receive(p)
		if m.Done() {
			delete(w.inflight, h.Frag)
			w.rep.Completed++
			w.window = math.Min(float64(w.spec.Window.Max), w.window+1)
			if w.rep.Completed == w.spec.Fragments {
				w.rep.Done = time.Now()
			}
		}
	case h.Has(gradproto.FlagCongestion):
		w.rep.Controls++
		if ce {
			w.rep.ECNMarked++
		}
		m := w.inflight[h.Frag]
		if m == nil {
			return nil
		}
		if re := m.Receive(p); re != nil {
			w.rep.Retries++
			w.window = math.Max(1, w.window/2)
			w.rep.MinWindow = math.Min(w.rep.MinWindow, w.window)
			return w.send(re)
		}
	default:
		w.rep.Ignored++
	}
	return nil
}

// verify compares a result with the exact sums and keeps the first
// mismatch.
func (w *workerRun) verify(p *gradproto.Packet) {
	w.rep.Checked++
	if w.rep.Mismatch != nil {
		return
	}
	if p.Frag < w.spec.FirstFragment || p.Frag-w.spec.FirstFragment >= uint32(w.spec.Fragments) {
		w.rep.Mismatch = &Mismatch{Fragment: p.Frag, Reason: "a result for a fragment the job does not have"}
		return
	}
	w.rep.Mismatch = checkSums(p, w.sums, w.spec.Seed, len(w.plan.Members))
	if w.rep.Mismatch != nil {
		w.log.Warn("wrong result", "mismatch", w.rep.Mismatch.String())
	}
}

// checkSums compares a result's values with the exact sums of its fragment.
func checkSums(p *gradproto.Packet, sums []int64, seed uint64, members int) *Mismatch {
	if p.Values == nil {
		return &Mismatch{Fragment: p.Frag, Reason: "a result without values"}
	}
	if int(p.Count) != members {
		return &Mismatch{Fragment: p.Frag, Reason: fmt.Sprintf("the result counts %d workers, the job has %d", p.Count, members)}
	}
	ExactSums(sums, seed, p.Frag, members)
	for i, s := range sums {
		if int64(p.Values[i]) != s {
			return &Mismatch{Fragment: p.Frag, Value: i, Got: int64(p.Values[i]), Want: s}
		}
	}
	return nil
}
