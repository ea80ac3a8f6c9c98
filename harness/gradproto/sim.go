package gradproto

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"
)

// Fabric is a switch that frames can be sent through: the reference model
// (ModelFabric) or a compiled aggregator running on an engine.
type Fabric interface {
	Process(port uint16, frame []byte) ([]Output, error)
}

// ModelFabric runs frames through the reference model.
type ModelFabric struct{ *Switch }

// Process implements Fabric.
func (m ModelFabric) Process(port uint16, frame []byte) ([]Output, error) {
	return m.Switch.Process(port, frame), nil
}

// Star is one switch with the PS on port 0 and one worker per further port:
// the first FanIn workers aggregate at the switch (node SwitchNode), the
// rest directly at the PS (node PSNode).
type Star struct {
	Plan   Plan
	Config SwitchConfig
	// SwitchNode is the switch's node id.
	SwitchNode uint16
	FanIn      int
}

// StarPSPort is the PS's port on a Star; worker i is on port i+1.
const StarPSPort = 0

// HostMAC is the MAC address of host number n in generated topologies.
func HostMAC(n int) MAC { return MAC{0x02, 0, 0, 0, byte(n >> 8), byte(n)} }

// SwitchPortMAC is the MAC address of port p of a generated switch.
func SwitchPortMAC(p int) MAC { return MAC{0x02, 0xaa, 0, 0, byte(p >> 8), byte(p)} }

// NewStar builds the plan and switch configuration of a star with fanIn
// workers aggregating at the switch and direct workers at the PS.
func NewStar(job uint16, fanIn, direct, values int) (*Star, error) {
	if fanIn < 0 || fanIn > MaxFanIn || direct < 0 || direct > MaxFanIn || fanIn+direct == 0 {
		return nil, fmt.Errorf("star with %d switch and %d direct workers: each must be 0..%d, not both 0", fanIn, direct, MaxFanIn)
	}
	const switchNode, psNode = 1, 1000
	psIP := netip.AddrFrom4([4]byte{10, 0, 0, 100})
	st := &Star{SwitchNode: switchNode, FanIn: fanIn}
	st.Plan = Plan{Job: job, PSNode: psNode, PSIP: psIP, Gateway: SwitchPortMAC(StarPSPort), Values: values}
	cfg := &st.Config
	cfg.Ports = append(cfg.Ports, PortMAC{Port: StarPSPort, MAC: SwitchPortMAC(StarPSPort)})
	cfg.Routes = append(cfg.Routes, Route{Prefix: netip.PrefixFrom(psIP, 32), Port: StarPSPort, NextHop: HostMAC(0)})
	group := ResultGroup{Job: job, InPort: StarPSPort, Group: job + 1}
	for i := 0; i < fanIn+direct; i++ {
		port := uint16(i + 1)
		ip := netip.AddrFrom4([4]byte{10, 0, 1, byte(i + 1)})
		m := Member{IP: ip, MAC: HostMAC(i + 1), Node: switchNode, Slot: uint8(i)}
		if i >= fanIn {
			m.Node, m.Slot = psNode, uint8(i-fanIn)
		}
		st.Plan.Members = append(st.Plan.Members, m)
		cfg.Ports = append(cfg.Ports, PortMAC{Port: port, MAC: SwitchPortMAC(int(port))})
		cfg.Routes = append(cfg.Routes, Route{Prefix: netip.PrefixFrom(ip, 32), Port: port, NextHop: m.MAC})
		group.Ports = append(group.Ports, port)
		cfg.ResultHosts = append(cfg.ResultHosts, ResultHost{Job: job, Port: port, MAC: m.MAC, IP: ip})
	}
	cfg.ResultGroups = []ResultGroup{group}
	if fanIn > 0 {
		cfg.Aggregations = []Aggregation{{Job: job, Node: switchNode, FanIn: uint16(fanIn)}}
	}
	return st, cfg.Validate()
}

// WorkerPort is the switch port of member i.
func (st *Star) WorkerPort(i int) uint16 { return uint16(i + 1) }

// RunOptions perturb a simulated job.
type RunOptions struct {
	Seed uint64
	// Lose is the index (in transmission order, from 0) of the one packet
	// the network loses; -1 loses none. Transmissions are every frame
	// entering a switch and every frame delivered to a host.
	Lose int
	// Duplicate is the probability that a worker's original fragment is
	// delivered twice in a row.
	Duplicate float64
	// MaxRounds bounds the round trips before the run fails.
	MaxRounds int
}

// RunReport says how a simulation went.
type RunReport struct {
	Transmissions int
	Rounds        int
	Lost          string // what the lost packet was, "" if none
	Jobs          []*JobReport
}

// JobReport is one job's endpoints after a run.
type JobReport struct {
	Workers []*Worker
	PS      *PS
}

// Attach is a switch port of a Network.
type Attach struct {
	Switch int
	Port   uint16
}

// Job is one job on a Network: its plan, where its PS and workers attach
// (member i at Workers[i]; jobs may share hosts) and each member's
// fragments (Grads[i]).
type Job struct {
	Plan    *Plan
	PS      Attach
	Workers []Attach
	Grads   []map[uint32][]int32
}

// Network is switches, the links between them and the jobs running over
// them: what a simulation runs.
type Network struct {
	Switches []Fabric
	// Links joins switch ports; Run follows it both ways.
	Links map[Attach]Attach
	Jobs  []*Job
	// Clock, when set, is the switches' time: Run advances it FrameTime per
	// frame a switch processes and RoundTime per round.
	Clock *Clock
}

// Simulated time per frame and per round (one round trip).
const (
	FrameTime = time.Microsecond
	RoundTime = time.Millisecond
)

// Clock is a virtual clock: give its Now to the switches (the model's Now
// and Start, the engine's Config.Now) and let Network.Run advance it.
type Clock struct{ t time.Time }

// NewClock starts a clock at the Unix epoch.
func NewClock() *Clock { return &Clock{t: time.Unix(0, 0)} }

// Now is the clock's time.
func (c *Clock) Now() time.Time { return c.t }

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.t = c.t.Add(d) }

func (n *Network) tick(d time.Duration) {
	if n.Clock != nil {
		n.Clock.Advance(d)
	}
}

// JobOf is a job of the star (plan is st.Plan or from AddJob) with
// gradients grads.
func (st *Star) JobOf(plan *Plan, grads []map[uint32][]int32) *Job {
	j := &Job{Plan: plan, PS: Attach{0, StarPSPort}, Grads: grads}
	for i := range plan.Members {
		j.Workers = append(j.Workers, Attach{0, st.WorkerPort(i)})
	}
	return j
}

// Run drives the star's first job through fabric (see Network.Run).
func (st *Star) Run(fabric Fabric, grads []map[uint32][]int32, opt RunOptions) (*RunReport, error) {
	n := &Network{Switches: []Fabric{fabric}, Jobs: []*Job{st.JobOf(&st.Plan, grads)}}
	return n.Run(opt)
}

// AddJob runs another job over the star's hosts and returns its plan: the
// first fanIn hosts aggregate at the switch, the next direct ones at the
// PS. The switch configuration gains the job's aggregation, result group
// (number job+1) and result hosts.
func (st *Star) AddJob(job uint16, fanIn, direct int) (*Plan, error) {
	hosts := len(st.Plan.Members)
	if fanIn < 0 || fanIn > MaxFanIn || direct < 0 || fanIn+direct == 0 || fanIn+direct > hosts {
		return nil, fmt.Errorf("job %d with %d switch and %d direct workers on a star of %d hosts", job, fanIn, direct, hosts)
	}
	for _, g := range st.Config.ResultGroups {
		if g.Job == job {
			return nil, fmt.Errorf("job %d already runs on the star", job)
		}
	}
	plan := st.Plan
	plan.Job = job
	plan.Members = nil
	group := ResultGroup{Job: job, InPort: StarPSPort, Group: job + 1}
	for i := 0; i < fanIn+direct; i++ {
		m := st.Plan.Members[i]
		m.Node, m.Slot = st.SwitchNode, uint8(i)
		if i >= fanIn {
			m.Node, m.Slot = plan.PSNode, uint8(i-fanIn)
		}
		plan.Members = append(plan.Members, m)
		port := st.WorkerPort(i)
		group.Ports = append(group.Ports, port)
		st.Config.ResultHosts = append(st.Config.ResultHosts, ResultHost{Job: job, Port: port, MAC: m.MAC, IP: m.IP})
	}
	st.Config.ResultGroups = append(st.Config.ResultGroups, group)
	if fanIn > 0 {
		st.Config.Aggregations = append(st.Config.Aggregations, Aggregation{Job: job, Node: st.SwitchNode, FanIn: uint16(fanIn)})
	}
	return &plan, st.Config.Validate()
}

type flight struct {
	at    Attach // the switch port the frame enters
	frame []byte
}

// Run drives the jobs: every worker sends its fragments, frames are
// delivered in a random interleaving (FIFO per link), the switches forward
// them, the PSes and workers react, and timeouts fire while some worker
// lacks a result. It fails if a job does not complete or a worker's result
// differs from the exact sum.
func (n *Network) Run(opt RunOptions) (*RunReport, error) {
	rng := rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15))
	// The report is never nil, so callers can name what was lost even when
	// the run fails.
	rep := &RunReport{}
	if len(n.Jobs) == 0 {
		return rep, fmt.Errorf("network without jobs")
	}
	values := n.Jobs[0].Plan.Values
	jobIndex := map[uint16]int{}
	hosts := map[Attach]map[int]int{} // attachment -> job index -> member (-1 PS)
	attach := func(a Attach, job, member int) {
		if hosts[a] == nil {
			hosts[a] = map[int]int{}
		}
		hosts[a][job] = member
	}
	for j, job := range n.Jobs {
		if _, dup := jobIndex[job.Plan.Job]; dup {
			return rep, fmt.Errorf("job id %d runs twice", job.Plan.Job)
		}
		if job.Plan.Values != values {
			return rep, fmt.Errorf("job %d has %d values per packet, job %d %d", job.Plan.Job, job.Plan.Values, n.Jobs[0].Plan.Job, values)
		}
		if len(job.Workers) != len(job.Plan.Members) || len(job.Grads) != len(job.Plan.Members) {
			return rep, fmt.Errorf("job %d: %d members, %d worker attachments, %d gradients", job.Plan.Job, len(job.Plan.Members), len(job.Workers), len(job.Grads))
		}
		jobIndex[job.Plan.Job] = j
		ps, err := NewPS(*job.Plan)
		if err != nil {
			return rep, fmt.Errorf("job %d: %w", job.Plan.Job, err)
		}
		rep.Jobs = append(rep.Jobs, &JobReport{PS: ps})
		attach(job.PS, j, -1)
		for i, a := range job.Workers {
			attach(a, j, i)
		}
	}
	links := map[Attach]Attach{}
	for a, b := range n.Links {
		links[a], links[b] = b, a
	}
	var queue []flight
	push := func(fs ...flight) {
		// Insert at a random position among the frames in flight, but after
		// every frame entering the same port: links are FIFO, different
		// senders interleave at random. fs stay together (a duplicate
		// follows its original).
		lo := 0
		for j, q := range queue {
			if q.at == fs[0].at {
				lo = j + 1
			}
		}
		i := lo + rng.IntN(len(queue)-lo+1)
		queue = append(queue[:i], append(append([]flight(nil), fs...), queue[i:]...)...)
	}
	for j, job := range n.Jobs {
		for i := range job.Plan.Members {
			w := NewWorker(job.Plan, i, job.Grads[i])
			rep.Jobs[j].Workers = append(rep.Jobs[j].Workers, w)
			for _, p := range w.Originals() {
				f := flight{job.Workers[i], p.Marshal()}
				if rng.Float64() < opt.Duplicate {
					push(f, f)
				} else {
					push(f)
				}
			}
		}
	}
	lost := func(what string) bool {
		k := rep.Transmissions
		rep.Transmissions++
		if k == opt.Lose {
			rep.Lost = what
			return true
		}
		return false
	}
	// deliver hands a frame that left the network at a host attachment to
	// the endpoint it is for and returns what that endpoint sends now.
	var next []flight
	deliver := func(from Attach, frame []byte) error {
		p, err := Parse(frame, values)
		if err != nil {
			return fmt.Errorf("frame out of switch %d port %d: %w", from.Switch, from.Port, err)
		}
		j, ok := jobIndex[p.Job]
		member, attached := hosts[from][j]
		if !ok || !attached {
			return fmt.Errorf("frame of job %d out of switch %d port %d, where no endpoint of the job is", p.Job, from.Switch, from.Port)
		}
		job := n.Jobs[j]
		if member < 0 {
			if p.DstIP != job.Plan.PSIP {
				return fmt.Errorf("frame for %v reached the PS of job %d", p.DstIP, p.Job)
			}
			replies, err := rep.Jobs[j].PS.Receive(p)
			if err != nil {
				return err
			}
			for _, r := range replies {
				push(flight{job.PS, r.Marshal()})
			}
			return nil
		}
		if p.DstIP != job.Plan.Members[member].IP {
			return fmt.Errorf("frame for %v out of switch %d port %d, whose host is %v", p.DstIP, from.Switch, from.Port, job.Plan.Members[member].IP)
		}
		if re := rep.Jobs[j].Workers[member].Receive(p); re != nil {
			next = append(next, flight{from, re.Marshal()})
		}
		return nil
	}
	// Time advances in rounds: a round delivers everything in flight; what
	// the workers send in reply to a control packet goes out next round,
	// and timeouts fire per fragment after TimeoutRounds.
	for round := 1; ; round++ {
		for len(queue) > 0 {
			f := queue[0]
			queue = queue[1:]
			if lost(fmt.Sprintf("frame into switch %d port %d", f.at.Switch, f.at.Port)) {
				continue
			}
			n.tick(FrameTime)
			outs, err := n.Switches[f.at.Switch].Process(f.at.Port, f.frame)
			if err != nil {
				return rep, fmt.Errorf("switch %d: %w", f.at.Switch, err)
			}
			for _, o := range outs {
				from := Attach{f.at.Switch, o.Port}
				if peer, ok := links[from]; ok {
					push(flight{peer, o.Frame})
					continue
				}
				if lost(fmt.Sprintf("frame out of switch %d port %d", from.Switch, from.Port)) {
					continue
				}
				if err := deliver(from, o.Frame); err != nil {
					return rep, err
				}
			}
		}
		pending := false
		for j, jr := range rep.Jobs {
			for i, w := range jr.Workers {
				w.Round = round
				if !w.Done() {
					pending = true
					for _, p := range w.Timeout() {
						next = append(next, flight{n.Jobs[j].Workers[i], p.Marshal()})
					}
				}
			}
		}
		if !pending {
			break
		}
		rep.Rounds = round
		n.tick(RoundTime)
		if round > opt.MaxRounds {
			return rep, fmt.Errorf("jobs incomplete after %d rounds", opt.MaxRounds)
		}
		for _, f := range next {
			push(f)
		}
		next = next[:0]
	}
	for j, job := range n.Jobs {
		if err := checkResults(rep.Jobs[j], job.Grads, values); err != nil {
			return rep, fmt.Errorf("job %d: %w", job.Plan.Job, err)
		}
	}
	return rep, nil
}

func checkResults(rep *JobReport, grads []map[uint32][]int32, values int) error {
	want := ExactSums(grads, values)
	for i, w := range rep.Workers {
		for frag, sums := range want {
			r := w.Results[frag]
			if r == nil {
				return fmt.Errorf("worker %d has no result for fragment %d", i, frag)
			}
			for j, s := range sums {
				if int64(r.Values[j]) != s {
					if r.Flags&FlagOverflow != 0 && (s > 1<<31-1 || s < -1<<31) {
						continue
					}
					return fmt.Errorf("worker %d fragment %d value %d: got %d, exact sum %d", i, frag, j, r.Values[j], s)
				}
			}
		}
	}
	return nil
}

// RandomGradients gives each of members workers frags fragments (ids 1,
// 14, 27, ...) of values random int32s: within ±10^6, or anywhere in int32
// when big is set, so that sums overflow.
func RandomGradients(rng *rand.Rand, members, frags, values int, big bool) []map[uint32][]int32 {
	out := make([]map[uint32][]int32, members)
	for m := range out {
		out[m] = map[uint32][]int32{}
		for f := 0; f < frags; f++ {
			vs := make([]int32, values)
			for i := range vs {
				if big {
					vs[i] = int32(rng.Uint32())
				} else {
					vs[i] = int32(rng.IntN(2_000_001) - 1_000_000)
				}
			}
			out[m][uint32(f*13+1)] = vs
		}
	}
	return out
}

// ExactSums adds every member's fragments in int64.
func ExactSums(grads []map[uint32][]int32, values int) map[uint32][]int64 {
	out := map[uint32][]int64{}
	for _, g := range grads {
		for frag, vs := range g {
			s := out[frag]
			if s == nil {
				s = make([]int64, values)
				out[frag] = s
			}
			for i, v := range vs {
				s[i] += int64(v)
			}
		}
	}
	return out
}

// ProbeUnits checks that no unit is stuck: after advancing clock by wait
// (at least the jobs' reclaim time), it sends through fabric, for every unit
// the model holds active, a new fragment of that unit's job that maps to the
// unit, from the first worker the job's plan (one of plans) aggregates at
// the switch. A probe answered with a control packet means the unit could
// not be taken over.
func (st *Star) ProbeUnits(fabric Fabric, model *Switch, clock *Clock, wait time.Duration, plans ...*Plan) error {
	clock.Advance(wait)
	for idx, u := range model.Units() {
		if u.State != UnitActive {
			continue
		}
		var plan *Plan
		for _, p := range plans {
			if p.Job == u.Job {
				plan = p
			}
		}
		if plan == nil {
			return fmt.Errorf("unit %d holds job %d, which no plan names", idx, u.Job)
		}
		member := -1
		for i, m := range plan.Members {
			if m.Node == st.SwitchNode {
				member = i
				break
			}
		}
		if member < 0 {
			return fmt.Errorf("unit %d holds job %d, which aggregates nothing at the switch", idx, u.Job)
		}
		frag := uint32(1 << 30)
		for UnitIndex(u.Job, frag, len(model.Units())) != idx {
			frag++
		}
		w := NewWorker(plan, member, map[uint32][]int32{frag: make([]int32, plan.Values)})
		clock.Advance(FrameTime)
		outs, err := fabric.Process(st.WorkerPort(member), w.Originals()[0].Marshal())
		if err != nil {
			return err
		}
		for _, o := range outs {
			if p, err := Parse(o.Frame, plan.Values); err == nil && p.Has(FlagCongestion) {
				return fmt.Errorf("unit %d (job %d fragment %d) is stuck: a new fragment collides with it", idx, u.Job, u.Frag)
			}
		}
	}
	return nil
}
