package gradproto

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
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
	group := ResultGroup{Job: job, Group: job + 1}
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

// RunReport says how a simulated job went.
type RunReport struct {
	Transmissions int
	Rounds        int
	Lost          string // what the lost packet was, "" if none
	Workers       []*Worker
	PS            *PS
}

// Attach is a switch port of a Network.
type Attach struct {
	Switch int
	Port   uint16
}

// Network is switches, the links between them and where the job's hosts
// attach: the topology a simulated job runs on.
type Network struct {
	Plan     *Plan
	Switches []Fabric
	// PS and Workers (member i at Workers[i]) are host attachments.
	PS      Attach
	Workers []Attach
	// Links joins switch ports; Run follows it both ways.
	Links map[Attach]Attach
}

// Network is the star as a one-switch network over fabric.
func (st *Star) Network(fabric Fabric) *Network {
	n := &Network{Plan: &st.Plan, Switches: []Fabric{fabric}, PS: Attach{0, StarPSPort}}
	for i := range st.Plan.Members {
		n.Workers = append(n.Workers, Attach{0, st.WorkerPort(i)})
	}
	return n
}

// Run drives one job over the star through fabric (see Network.Run).
func (st *Star) Run(fabric Fabric, grads []map[uint32][]int32, opt RunOptions) (*RunReport, error) {
	return st.Network(fabric).Run(grads, opt)
}

type flight struct {
	at    Attach // the switch port the frame enters
	frame []byte
}

// Run drives one job: every worker sends its fragments (grads[i] for member
// i), frames are delivered in a random interleaving (FIFO per link), the
// switches forward them, the PS and workers react, and timeouts fire while
// some worker lacks a result. It fails if the job does not complete or a
// worker's result differs from the exact sum.
func (n *Network) Run(grads []map[uint32][]int32, opt RunOptions) (*RunReport, error) {
	rng := rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15))
	ps, err := NewPS(*n.Plan)
	if err != nil {
		return nil, err
	}
	if len(n.Workers) != len(n.Plan.Members) || len(grads) != len(n.Plan.Members) {
		return nil, fmt.Errorf("%d members, %d worker attachments, %d gradients", len(n.Plan.Members), len(n.Workers), len(grads))
	}
	hostAt := map[Attach]int{n.PS: -1}
	for i, a := range n.Workers {
		hostAt[a] = i
	}
	links := map[Attach]Attach{}
	for a, b := range n.Links {
		links[a], links[b] = b, a
	}
	rep := &RunReport{PS: ps}
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
	for i := range n.Plan.Members {
		w := NewWorker(n.Plan, i, grads[i])
		rep.Workers = append(rep.Workers, w)
		for _, p := range w.Originals() {
			f := flight{n.Workers[i], p.Marshal()}
			if rng.Float64() < opt.Duplicate {
				push(f, f)
			} else {
				push(f)
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
	// Time advances in rounds: a round delivers everything in flight; what
	// the endpoints send in reply to a control packet goes out next round,
	// and timeouts fire per fragment after TimeoutRounds.
	var next []flight
	for round := 1; ; round++ {
		for len(queue) > 0 {
			f := queue[0]
			queue = queue[1:]
			if lost(fmt.Sprintf("frame into switch %d port %d", f.at.Switch, f.at.Port)) {
				continue
			}
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
				host, ok := hostAt[from]
				if !ok {
					return rep, fmt.Errorf("frame out of switch %d port %d, where nothing is attached", from.Switch, from.Port)
				}
				p, err := Parse(o.Frame, n.Plan.Values)
				if err != nil {
					return rep, fmt.Errorf("frame out of switch %d port %d: %w", from.Switch, from.Port, err)
				}
				if host < 0 {
					if p.DstIP != n.Plan.PSIP {
						return rep, fmt.Errorf("frame for %v reached the PS", p.DstIP)
					}
					res, err := ps.Receive(p)
					if err != nil {
						return rep, err
					}
					if res != nil {
						push(flight{n.PS, res.Marshal()})
					}
					continue
				}
				if p.DstIP != n.Plan.Members[host].IP {
					return rep, fmt.Errorf("frame for %v out of switch %d port %d, whose host is %v", p.DstIP, from.Switch, from.Port, n.Plan.Members[host].IP)
				}
				if re := rep.Workers[host].Receive(p); re != nil {
					next = append(next, flight{from, re.Marshal()})
				}
			}
		}
		pending := false
		for i, w := range rep.Workers {
			w.Round = round
			if !w.Done() {
				pending = true
				for _, p := range w.Timeout() {
					next = append(next, flight{n.Workers[i], p.Marshal()})
				}
			}
		}
		if !pending {
			break
		}
		rep.Rounds = round
		if round > opt.MaxRounds {
			return rep, fmt.Errorf("job incomplete after %d rounds", opt.MaxRounds)
		}
		for _, f := range next {
			push(f)
		}
		next = next[:0]
	}
	return rep, checkResults(rep, grads, n.Plan.Values)
}

func checkResults(rep *RunReport, grads []map[uint32][]int32, values int) error {
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
