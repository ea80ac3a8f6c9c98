package endpoint

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/grid-ina/grid/harness/gradproto"
)

// broadcast is where the PS sends results for the switches to multicast.
var broadcast = netip.AddrPortFrom(gradproto.Broadcast, gradproto.UDPPort)

// RunPS runs the spec's parameter server: it adds every contribution (a
// worker's fragment sent to the PS directly, a switch's partial sum, a
// fragment a switch passed on) with gradproto.PS, checks each completed
// fragment's sums against the exact sums (so a contribution counted twice,
// or missed, is a mismatch), and sends results: a completed fragment's to
// every worker; a duplicate's (a worker resent because it missed the
// result) to the workers it carries alone, and to each of them at most once
// per shortest retransmission timeout, so two copies of one resend draw one
// answer. It ends when every fragment is complete and nothing of the job
// has arrived for the linger time (late resends get the result again
// meanwhile), when the deadline passes or when
// ctx is cancelled. The error is for failures to start; Report.Failure says
// whether the run verified.
func RunPS(ctx context.Context, spec *Spec, opts ...Option) (*Report, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	plan := spec.Job.Plan()
	model, err := gradproto.NewPS(plan)
	if err != nil {
		return nil, fmt.Errorf("job: %w", err)
	}
	o := collectOptions(opts)
	conn, err := o.socket(ctx, spec, RolePS, 0)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rx, err := newReceiver(conn)
	if err != nil {
		return nil, err
	}
	o.announce(conn)
	s := &psRun{
		spec: spec, plan: &plan, model: model, conn: conn, rx: rx,
		answered: map[answer]time.Time{},
		holdOff:  spec.rto().Min,
		sums:     make([]int64, plan.Values),
		log:      o.logger("job", plan.Job, "role", RolePS),
	}
	if spec.Results == ResultsUnicast {
		for _, m := range plan.Members {
			s.resultTo = append(s.resultTo, netip.AddrPortFrom(m.IP, gradproto.UDPPort))
		}
	} else {
		s.resultTo = []netip.AddrPort{broadcast}
	}
	s.rep = &Report{Role: RolePS, Job: plan.Job, Host: spec.Job.PSHost, IP: plan.PSIP.String(), Fragments: spec.Fragments}
	s.run(ctx, time.Now().Add(time.Duration(spec.Deadline)))
	s.rep.Duplicates, s.rep.Overlaps = model.Duplicates, model.Overlaps
	s.rep.finish(time.Now(), plan.Values)
	return s.rep, nil
}

type psRun struct {
	spec  *Spec
	plan  *gradproto.Plan
	model *gradproto.PS
	conn  *net.UDPConn
	rx    *receiver
	// resultTo is where a completed fragment's result goes.
	resultTo []netip.AddrPort
	// answered is when each worker last got a fragment's result again;
	// within holdOff a further duplicate from it is the same resend.
	answered map[answer]time.Time
	holdOff  time.Duration
	rep      *Report
	log      *slog.Logger
	// heard is when the last packet of the job arrived.
	heard time.Time
	sums  []int64
}

// answer is a result sent again to one worker.
type answer struct {
	frag uint32
	to   netip.Addr
}

func (s *psRun) run(ctx context.Context, deadline time.Time) {
	s.rep.Start = time.Now()
	linger := s.spec.linger()
	for {
		now := time.Now()
		complete := s.rep.Completed == s.spec.Fragments
		switch {
		case complete && !now.Before(s.heard.Add(linger)):
			return
		case ctx.Err() != nil:
			if !complete {
				s.rep.Error = "interrupted: " + context.Cause(ctx).Error()
			}
			return
		case !now.Before(deadline):
			if !complete {
				s.rep.Error = fmt.Sprintf("deadline %v passed", time.Duration(s.spec.Deadline))
			}
			return
		}
		wake := earliest(deadline, now.Add(pollInterval))
		if complete {
			wake = earliest(wake, s.heard.Add(linger))
		}
		d, got, err := s.rx.wait(wake)
		if err == nil && got {
			err = s.receive(s.rx.buf[:d.n])
		}
		if err != nil {
			s.rep.Error = err.Error()
			return
		}
	}
}

func (s *psRun) receive(b []byte) error {
	h, vals, err := gradproto.ParsePayload(b, s.plan.Values)
	if err != nil || h.Job != s.plan.Job || h.Flags&(gradproto.FlagResult|gradproto.FlagCongestion) != 0 {
		s.rep.Ignored++
		return nil
	}
	s.heard = time.Now()
	if h.Has(gradproto.FlagAggregated) {
		s.rep.Aggregated++
	} else {
		s.rep.Direct++
	}
	wasComplete := s.model.Complete(h.Frag)
	replies, err := s.model.Receive(&gradproto.Packet{Header: h, Values: vals})
	if err != nil {
		// The network delivered something the plan does not allow: a
		// fragment that skipped its aggregation node, or a bitmap naming
		// workers the node does not have.
		if s.rep.Mismatch == nil {
			s.rep.Mismatch = &Mismatch{Fragment: h.Frag, Reason: err.Error()}
		}
		return nil
	}
	if len(replies) == 0 {
		return nil
	}
	if !wasComplete {
		res := replies[0]
		s.complete(res)
		payload := res.Payload()
		for _, to := range s.resultTo {
			if err := s.send(res, payload, to); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range replies {
		a := answer{r.Frag, r.DstIP}
		if last, ok := s.answered[a]; ok && s.heard.Sub(last) < s.holdOff {
			s.rep.AnswersHeld++
			continue
		}
		s.answered[a] = s.heard
		s.rep.ResultsAgain++
		if err := s.send(r, r.Payload(), netip.AddrPortFrom(r.DstIP, gradproto.UDPPort)); err != nil {
			return err
		}
	}
	return nil
}

func (s *psRun) send(res *gradproto.Packet, payload []byte, to netip.AddrPort) error {
	s.rep.Results++
	if err := sendTo(s.conn, payload, to, &s.rep.SendDrops); err != nil {
		return fmt.Errorf("send result of fragment %d to %s: %w", res.Frag, to, err)
	}
	return nil
}

// complete counts a fragment done and checks its first result against the
// exact sums.
func (s *psRun) complete(res *gradproto.Packet) {
	s.rep.Checked++
	inJob := res.Frag >= s.spec.FirstFragment && res.Frag-s.spec.FirstFragment < uint32(s.spec.Fragments)
	var bad *Mismatch
	if inJob {
		bad = checkSums(res, s.sums, s.spec.Seed, len(s.plan.Members))
	} else {
		bad = &Mismatch{Fragment: res.Frag, Reason: "contributions to a fragment the job does not have"}
	}
	if bad != nil && s.rep.Mismatch == nil {
		s.rep.Mismatch = bad
		s.log.Warn("wrong sum", "mismatch", bad.String())
	}
	s.rep.Completed++
	if s.rep.Completed == s.spec.Fragments {
		s.rep.Done = time.Now()
	}
}
