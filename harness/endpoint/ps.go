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
var broadcast = netip.AddrPortFrom(netip.AddrFrom4([4]byte{255, 255, 255, 255}), gradproto.UDPPort)

// RunPS runs the spec's parameter server: it adds every contribution (a
// worker's fragment sent to the PS directly, a switch's partial sum, a
// fragment a switch passed on) with gradproto.PS, checks each completed
// fragment's sums against the exact sums (so a contribution counted twice,
// or missed, is a mismatch), and sends results. It ends when every fragment
// is complete and nothing of the job has arrived for the linger time (late
// resends get the result again meanwhile), when the deadline passes or when
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
	conn, err := listen(ctx, plan.PSIP, spec.Results != ResultsUnicast)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	o := collectOptions(opts)
	o.announce(conn)
	s := &psRun{
		spec: spec, plan: &plan, model: model, conn: conn,
		sums: make([]int64, plan.Values),
		log:  slog.With("job", plan.Job, "role", RolePS),
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
	spec     *Spec
	plan     *gradproto.Plan
	model    *gradproto.PS
	conn     *net.UDPConn
	resultTo []netip.AddrPort
	rep      *Report
	log      *slog.Logger
	// heard is when the last packet of the job arrived.
	heard time.Time
	sums  []int64
}

func (s *psRun) run(ctx context.Context, deadline time.Time) {
	s.rep.Start = time.Now()
	linger := s.spec.linger()
	buf, oob := make([]byte, 2048), make([]byte, oobSize)
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
		d, got, err := readUntil(s.conn, buf, oob, wake)
		if err == nil && got {
			err = s.receive(buf[:d.n])
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
	res, err := s.model.Receive(&gradproto.Packet{Header: h, Values: vals})
	if err != nil {
		// The network delivered something the plan does not allow: a
		// fragment that skipped its aggregation node, or a bitmap naming
		// workers the node does not have.
		if s.rep.Mismatch == nil {
			s.rep.Mismatch = &Mismatch{Fragment: h.Frag, Reason: err.Error()}
		}
		return nil
	}
	if res == nil {
		return nil
	}
	if wasComplete {
		s.rep.ResultsAgain++
	} else {
		s.complete(res)
	}
	payload := res.Payload()
	for _, to := range s.resultTo {
		s.rep.Results++
		if err := sendTo(s.conn, payload, to, &s.rep.SendDrops); err != nil {
			return fmt.Errorf("send result of fragment %d to %s: %w", res.Frag, to, err)
		}
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
