package endpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/grid-ina/grid/harness/gradproto"
)

// pollInterval bounds how long an endpoint blocks in a read, so it notices
// a cancelled context soon.
const pollInterval = 50 * time.Millisecond

// queueFloor is the waiting beyond the shortest round trip that still
// counts as none (gradproto.QueueEstimate.Floor): what an endpoint's
// scheduling adds on an idle path.
const queueFloor = 5 * time.Millisecond

// resendBurst is how many resends may leave back to back before pacing
// spaces them by SRTT / window.
const resendBurst = 2

// RunWorker runs member index of the spec's job until every fragment has a
// verified result, the spec's deadline passes or ctx is cancelled. The
// report is returned in every case once the socket is open; the error is
// for failures to start (bad index, no socket). Report.Failure says whether
// the run verified.
//
// The protocol rules are gradproto.Worker's. That model sends all fragments
// at once (Originals); here fragments enter a window, so each fragment in
// flight gets its own gradproto.Worker, which makes the retries after
// control packets, the resends and decides when the fragment is done. The
// transport around it is TCP's: a retransmission timeout estimated from
// round trips (gradproto.RTO; one fragment at a time is timed, never one
// sent twice), doubled on consecutive timeouts up to a cap; a congestion
// window (gradproto.CongestionWindow) that halves once per window of data
// on a control packet or a timeout, and that also stops growing, and
// shrinks, when round trips say its fragments wait in queues (TCP Vegas,
// gradproto.QueueEstimate, measured on every fragment sent once): on links
// emulated at a few hundred kbit/s a window that grows until a queue
// overflows makes round trips of seconds, and timers fire for fragments
// that are only queued. As in TCP, results restart the timers: while
// results come, the queues ahead drain, and a fragment times out only
// after a whole retransmission timeout without any (or, once a fragment
// sent after it has its result, a timeout after its own transmission).
// A fragment whose timer expires counts as lost: it leaves the window and waits for room; resends go before new
// fragments, paced to SRTT / window apart after a short burst, so a
// stalled network gets back as many packets as the shrunken window holds,
// not everything outstanding at once. The result of a fragment that timed
// out but was not resent yet shows the timeout was spurious (a stall held
// the results back): the window decrease is undone and the fragments
// waiting for resends get their timers restarted instead (RFC 4015).
// Resends are never held back for long: the other workers' results wait
// for them.
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
	conn, err := o.socket(ctx, spec, RoleWorker, index)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rx, err := newReceiver(conn)
	if err != nil {
		return nil, err
	}
	o.announce(conn)
	w := &workerRun{
		spec: spec, plan: &plan, index: index, conn: conn, rx: rx,
		ps:       netip.AddrPortFrom(plan.PSIP, gradproto.UDPPort),
		inflight: map[uint32]*fragment{},
		window:   spec.Window.congestionWindow(),
		rto:      spec.rto(),
		queue:    &gradproto.QueueEstimate{Floor: queueFloor},
		sums:     make([]int64, plan.Values),
		log:      o.logger("job", plan.Job, "worker", index),
	}
	w.rep = &Report{Role: RoleWorker, Job: plan.Job, Index: &index, Host: spec.Job.Members[index].Host,
		IP: me.IP.String(), Fragments: spec.Fragments, MinWindow: w.window.Size}
	if w.waitForStart(ctx, o.start, began.Add(spec.startWait())) {
		w.run(ctx, time.Now().Add(time.Duration(spec.Deadline)))
	}
	w.rep.FinalWindow = w.window.Size
	w.rep.Decreases = w.window.Decreases
	w.rep.SRTT = Duration(w.rto.SRTT())
	w.rep.RTO = Duration(w.rto.Timeout())
	w.rep.BaseRTT = Duration(w.queue.Base())
	w.rep.finish(time.Now(), plan.Values)
	return w.rep, nil
}

// fragment is one fragment the worker sent that has no result yet.
type fragment struct {
	model *gradproto.Worker
	// first is when its original left, timer when its retransmission
	// timer started (original or last resend; retries after control
	// packets do not restart it, as in gradproto.Worker).
	first, timer time.Time
	// seq is the sequence number of its last transmission, sends how
	// many it had.
	seq   uint64
	sends int
	// lost is set when its timer expired: it waits in the resend queue,
	// outside the window. passed is set when a fragment sent after it got
	// its result: it waits for something other than the queues ahead of
	// it (its own loss, or another worker's), so it leaves the window
	// (TCP's pipe leaves out what selective acknowledgements passed, RFC
	// 6675: a window of one is not held for a whole timeout by a fragment
	// whose result was lost while the other workers wait for this worker's
	// next one) and its timer runs from its own transmission, as in RACK
	// (RFC 8985), not from the later results. It is not declared lost as
	// soon as RACK would: when another worker's contribution was lost,
	// that worker's timeout recovers it, and a resend here would only
	// flush the switch's partial sum early.
	lost, passed bool
	// control is a control packet that came after the fragment's retry in
	// the same round trip: the model retries once per round, so it is
	// answered in the next one (retryDeferred) rather than left to the
	// fragment's timeout, which a switch over capacity would otherwise
	// stretch into a stall of back-offs.
	control *gradproto.Packet
}

type workerRun struct {
	spec  *Spec
	plan  *gradproto.Plan
	index int
	conn  *net.UDPConn
	rx    *receiver
	ps    netip.AddrPort
	rep   *Report
	log   *slog.Logger

	// inflight holds each fragment sent and still without its result;
	// next is the number of the next fragment to send, flight how many of
	// inflight are not lost.
	inflight map[uint32]*fragment
	next     int
	flight   int
	// resends are the lost fragments, oldest first.
	resends []uint32
	// resendAt is the earliest time pacing lets the next resend leave;
	// paceAt the next transmission while the window is below one
	// fragment (one fragment per SRTT / size).
	resendAt, paceAt time.Time

	window *gradproto.CongestionWindow
	rto    *gradproto.RTO
	queue  *gradproto.QueueEstimate
	// timeoutDecrease is whether the window's last decrease was for a
	// timeout (which a spurious timeout undoes).
	timeoutDecrease bool
	// seq numbers transmissions; backoffFrom is the first sequence number
	// sent after the last back-off: a timeout of an earlier transmission is
	// the same episode.
	seq, backoffFrom uint64
	// timed is the fragment whose round trip is being measured.
	timed  uint32
	timing bool
	// progress is when the last result of a fragment in flight came:
	// while results come, the queues drain, and a fragment's timer runs
	// from then at the earliest (TCP restarts its retransmission timer on
	// every acknowledgement of new data, RFC 6298 5.3).
	progress time.Time

	// round is the protocol model's clock (gradproto.Worker.Round): one
	// tick per smoothed round trip.
	round     int
	roundFrom time.Time

	sums []int64
}

// waitForStart waits for the start trigger, if there is one, until
// giveUp; false means the run ended first (the report says why).
func (w *workerRun) waitForStart(ctx context.Context, start <-chan struct{}, giveUp time.Time) bool {
	if start == nil {
		return true
	}
	timer := time.NewTimer(time.Until(giveUp))
	defer timer.Stop()
	select {
	case <-start:
		return true
	case <-ctx.Done():
		w.rep.Error = "interrupted before the start signal: " + context.Cause(ctx).Error()
	case <-timer.C:
		w.rep.Error = fmt.Sprintf("no start signal within %v", w.spec.startWait())
	}
	w.rep.Start = time.Now()
	return false
}

func (w *workerRun) run(ctx context.Context, deadline time.Time) {
	w.rep.Start = time.Now()
	w.roundFrom = w.rep.Start
	w.progress = w.rep.Start
	if err := w.loop(ctx, deadline); err != nil {
		w.rep.Error = err.Error()
	}
}

func (w *workerRun) loop(ctx context.Context, deadline time.Time) error {
	for w.rep.Completed < w.spec.Fragments {
		// Everything queued first: a result that waited in the socket
		// while the CPU was busy is no reason to time its fragment out.
		for {
			d, got, err := w.rx.poll()
			if err != nil {
				return err
			}
			if !got {
				break
			}
			if err := w.receive(w.rx.buf[:d.n], d.ce); err != nil {
				return err
			}
		}
		if w.rep.Completed == w.spec.Fragments {
			return nil
		}
		now := time.Now()
		switch {
		case ctx.Err() != nil:
			return errors.New("interrupted: " + context.Cause(ctx).Error())
		case !now.Before(deadline):
			return fmt.Errorf("deadline %v passed", time.Duration(w.spec.Deadline))
		}
		w.clock(now)
		w.expire(now)
		if err := w.retryDeferred(); err != nil {
			return err
		}
		if err := w.send(now); err != nil {
			return err
		}
		d, got, err := w.rx.wait(earliest(w.wake(), deadline, now.Add(pollInterval)))
		if err == nil && got {
			err = w.receive(w.rx.buf[:d.n], d.ce)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func earliest(t time.Time, more ...time.Time) time.Time {
	for _, u := range more {
		if u.Before(t) {
			t = u
		}
	}
	return t
}

// clock advances the models' round once per smoothed round trip.
func (w *workerRun) clock(now time.Time) {
	rtt := max(w.rto.SRTT(), w.rto.Min)
	if now.Sub(w.roundFrom) >= rtt {
		w.round++
		w.roundFrom = now
	}
}

// expiry is when fragment f counts as lost, unless its result comes: a
// retransmission timeout after its timer started, or after the last
// result if that came later and f was not passed.
func (w *workerRun) expiry(f *fragment, rto time.Duration) time.Time {
	at := f.timer
	if w.progress.After(at) && !f.passed {
		at = w.progress
	}
	return at.Add(rto)
}

// expire moves the fragments that count as lost out of the window into the
// resend queue: one event for the window (a timeout backs off once and the
// window halves once per episode, whatever number of fragments it caught).
func (w *workerRun) expire(now time.Time) {
	rto := w.rto.Timeout()
	var expired []uint32
	oldest := uint64(0)
	for frag, f := range w.inflight {
		if f.lost || now.Before(w.expiry(f, rto)) {
			continue
		}
		if len(expired) == 0 || f.seq < oldest {
			oldest = f.seq
		}
		expired = append(expired, frag)
	}
	if len(expired) == 0 {
		return
	}
	slices.Sort(expired)
	for _, frag := range expired {
		f := w.inflight[frag]
		if !f.passed {
			w.flight--
		}
		f.lost, f.passed = true, false
		if w.timing && w.timed == frag {
			w.timing = false
		}
	}
	// Oldest fragment first: a fragment completes only once every worker
	// of the job has it through, so workers that all lost fragments must
	// resend the same ones first. In the order their timers expired, each
	// worker's one fragment in flight was a different one, and none
	// completed for seconds (10% loss, windows down to one).
	w.resends = append(w.resends, expired...)
	slices.Sort(w.resends)
	w.rep.Timeouts++
	if oldest >= w.backoffFrom {
		w.rto.Backoff()
		w.backoffFrom = w.seq
	}
	w.decrease(oldest, true)
}

// decrease halves the window for a congestion signal about transmission
// seq: a timeout or a control packet.
func (w *workerRun) decrease(seq uint64, timeout bool) {
	if w.window.Congestion(seq, w.seq) {
		w.rep.MinWindow = min(w.rep.MinWindow, w.window.Size)
		w.timeoutDecrease = timeout
	}
}

// spurious answers the result of a fragment that timed out but was not
// resent yet: the timeout came too early (a busy CPU held the result
// back), so the round trip it took is a sample, the window goes back to
// what it was, and the fragments waiting for resends get their timers
// restarted instead (RFC 4015's response).
func (w *workerRun) spurious(f *fragment, now time.Time) {
	w.rep.SpuriousTimeouts++
	w.rto.Sample(now.Sub(f.first))
	if w.timeoutDecrease && w.window.Undo() {
		w.timeoutDecrease = false
	}
	for _, frag := range w.resends {
		if g := w.inflight[frag]; g != nil && g.lost {
			g.lost, g.timer = false, now
			w.flight++
		}
	}
	w.resends = w.resends[:0]
}

// send fills the window: the resend queue first, paced, then new
// fragments.
func (w *workerRun) send(now time.Time) error {
	for w.flight < w.window.Room() && len(w.resends) > 0 {
		if now.Before(w.resendAt) || !w.paced(now) {
			return nil
		}
		frag := w.resends[0]
		w.resends = w.resends[1:]
		f := w.inflight[frag]
		if f == nil {
			continue // its result came after all
		}
		p := f.model.Resend(frag)
		f.lost, f.timer = false, now
		w.flight++
		w.rep.Resent++
		if err := w.transmit(f, p); err != nil {
			return err
		}
		gap := max(w.rto.SRTT(), w.rto.Min) / time.Duration(max(1, w.window.Room()))
		from := now.Add(-resendBurst * gap)
		if w.resendAt.After(from) {
			from = w.resendAt
		}
		w.resendAt = from.Add(gap)
	}
	for w.flight < w.window.Room() && w.next < w.spec.Fragments && w.paced(now) {
		frag := w.spec.fragment(w.next)
		w.next++
		vals := make([]int32, w.plan.Values)
		Gradient(vals, w.spec.Seed, w.index, frag, len(w.plan.Members))
		m := gradproto.NewWorker(w.plan, w.index, map[uint32][]int32{frag: vals})
		m.Round = w.round
		f := &fragment{model: m, first: now, timer: now}
		w.inflight[frag] = f
		w.flight++
		if !w.timing {
			w.timed, w.timing = frag, true
		}
		for _, p := range m.Originals() {
			if err := w.transmit(f, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// wake is when the worker has something to do without a packet: the next
// timer to expire, or the next paced resend.
func (w *workerRun) wake() time.Time {
	rto := w.rto.Timeout()
	t := time.Now().Add(pollInterval)
	for _, f := range w.inflight {
		if !f.lost {
			t = earliest(t, w.expiry(f, rto))
		}
		if f.control != nil { // its retry waits for the next round
			t = earliest(t, w.roundFrom.Add(max(w.rto.SRTT(), w.rto.Min)))
		}
	}
	if len(w.resends) > 0 && w.flight < w.window.Room() {
		t = earliest(t, w.resendAt)
	}
	if w.window.Size < 1 && w.flight == 0 {
		t = earliest(t, w.paceAt)
	}
	return t
}

// paced says whether a window below one fragment lets the next
// transmission leave now, and if so when the one after it may.
func (w *workerRun) paced(now time.Time) bool {
	if w.window.Size >= 1 {
		return true
	}
	if now.Before(w.paceAt) {
		return false
	}
	gap := float64(max(w.rto.SRTT(), w.rto.Min)) / w.window.Size
	w.paceAt = now.Add(time.Duration(gap))
	return true
}

func (w *workerRun) transmit(f *fragment, p *gradproto.Packet) error {
	f.seq = w.seq
	w.seq++
	f.sends++
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
		f := w.inflight[h.Frag]
		if f == nil {
			w.rep.DuplicateResults++
			return nil
		}
		f.model.Receive(p)
		if !f.model.Done() {
			return nil
		}
		now := time.Now()
		if f.lost && f.sends == 1 {
			w.spurious(f, now)
		}
		// Karn's rule: only a fragment sent once says how long a round
		// trip takes.
		if w.timing && w.timed == h.Frag {
			if f.sends == 1 {
				w.rto.Sample(now.Sub(f.first))
			}
			w.timing = false
		}
		if f.sends == 1 {
			this, least, round := w.queue.Sample(now.Sub(f.first), f.seq, w.seq, w.window.Size)
			switch {
			case w.window.SlowStart():
				w.window.Queued(this)
			case round:
				w.window.Queued(least)
			}
		}
		delete(w.inflight, h.Frag)
		if !f.lost {
			if !f.passed {
				w.flight--
			}
			w.progress = now
		}
		for _, g := range w.inflight {
			if !g.lost && !g.passed && g.seq < f.seq {
				g.passed = true
				w.flight--
			}
		}
		w.rep.Completed++
		w.window.Grow()
		if w.rep.Completed == w.spec.Fragments {
			w.rep.Done = now
		}
	case h.Has(gradproto.FlagCongestion):
		w.rep.Controls++
		if ce {
			w.rep.ECNMarked++
		}
		f := w.inflight[h.Frag]
		if f == nil || f.lost {
			return nil
		}
		f.model.Round = w.round
		if re := f.model.Receive(p); re != nil {
			return w.retry(f, re)
		}
		f.control = &gradproto.Packet{Header: h}
	default:
		w.rep.Ignored++
	}
	return nil
}

// retry sends re, the model's answer to a control packet about f.
func (w *workerRun) retry(f *fragment, re *gradproto.Packet) error {
	f.control = nil
	w.rep.Retries++
	w.decrease(f.seq, false)
	if w.timing && w.timed == re.Frag {
		w.timing = false
	}
	return w.transmit(f, re)
}

// retryDeferred answers the control packets kept for a later round trip,
// once the round has moved on.
func (w *workerRun) retryDeferred() error {
	for _, f := range w.inflight {
		if f.control == nil {
			continue
		}
		if f.lost { // its timeout resends it
			f.control = nil
			continue
		}
		f.model.Round = w.round
		if re := f.model.Receive(f.control); re != nil {
			if err := w.retry(f, re); err != nil {
				return err
			}
		}
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
