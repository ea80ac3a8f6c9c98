package gradproto

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sort"
)

// Member is one worker of a job: its address and where the plan aggregates
// its gradient (Node, the switch's or the PS's node id) in which bitmap slot;
// in a plan with classes (schedule.go), Placements say where per class and
// Node and Slot are unused.
type Member struct {
	IP         netip.Addr
	MAC        MAC
	Node       uint16
	Slot       uint8 // 0..MaxFanIn-1, unique per node
	Placements []Placement
}

// Plan is one job's aggregation plan as the endpoints see it.
type Plan struct {
	Job    uint16
	PSNode uint16
	// PSAliases are further node ids of the PS. A packet's bitmap has
	// MaxFanIn slots, so a PS that aggregates more workers directly
	// appears as several nodes (PSNode, then its aliases), each with at
	// most MaxFanIn slots; the PS takes unaggregated fragments for any of
	// them.
	PSAliases []uint16
	PSIP      netip.Addr
	// Gateway is the MAC address hosts send to (their switch port's MAC).
	Gateway MAC
	Members []Member
	Values  int
	// Classes, when set, split every worker's fragments over nodes: the
	// classes' upper bounds in [0, 1], increasing, the last 1 (schedule.go).
	Classes []float64
}

// IsPSNode reports whether node is one of the PS's node ids.
func (p *Plan) IsPSNode(node uint16) bool {
	return node == p.PSNode || slices.Contains(p.PSAliases, node)
}

// Expected returns, per class (one without Classes) and node, the bitmap
// of the workers aggregated there.
func (p *Plan) Expected() ([]map[uint16]uint64, error) {
	if err := p.checkClasses(); err != nil {
		return nil, err
	}
	for i, a := range p.PSAliases {
		if a == p.PSNode || slices.Contains(p.PSAliases[:i], a) {
			return nil, fmt.Errorf("PS alias %d: node %d is already the PS's", i, a)
		}
	}
	out := make([]map[uint16]uint64, p.classes())
	for c := range out {
		exp := map[uint16]uint64{}
		for i := range p.Members {
			pl := p.Members[i].placementIn(c)
			if int(pl.Slot) >= MaxFanIn {
				return nil, fmt.Errorf("member %d: slot %d outside 0..%d", i, pl.Slot, MaxFanIn-1)
			}
			bit := uint64(1) << pl.Slot
			if exp[pl.Node]&bit != 0 {
				return nil, fmt.Errorf("member %d: slot %d of node %d taken twice", i, pl.Slot, pl.Node)
			}
			exp[pl.Node] |= bit
		}
		out[c] = exp
	}
	return out, nil
}

// PS is the parameter server's side of the protocol for one job. It adds
// every contribution (a direct fragment, a switch's partial sum or a
// fragment a switch passed through) exactly once, per worker, in int64; when
// every worker of the plan is in, it multicasts the result. The rules:
//
//   - A contribution is (node, bitmap): the workers of node whose values it
//     carries. One whose bitmap is all already received is a duplicate: it
//     is ignored, and if the fragment is complete the result goes again to
//     the workers it carries, addressed to each (they retransmitted because
//     they missed the result; the others have it).
//   - One that overlaps what was received only in part cannot be split, so
//     it is discarded whole (Overlaps counts them); its other workers have
//     not got a result and retransmit, and their retransmissions reach the
//     PS one by one because the switch marked the unit done.
//   - Result values that do not fit int32 are saturated and the result
//     carries FlagOverflow.
type PS struct {
	plan     Plan
	expected []map[uint16]uint64 // per class
	frags    map[uint32]*psFragment
	// Overlaps counts contributions discarded for partial overlap.
	Overlaps int
	// Duplicates counts contributions already fully received.
	Duplicates int
}

type psFragment struct {
	got    map[uint16]uint64
	sums   []int64
	result *Packet
}

// NewPS returns the PS of plan.
func NewPS(plan Plan) (*PS, error) {
	exp, err := plan.Expected()
	if err != nil {
		return nil, err
	}
	return &PS{plan: plan, expected: exp, frags: map[uint32]*psFragment{}}, nil
}

// Complete reports whether fragment frag has its result.
func (ps *PS) Complete(frag uint32) bool {
	f := ps.frags[frag]
	return f != nil && f.result != nil
}

// Receive takes a packet addressed to the PS and returns what the PS sends
// in reply: the result, addressed to 255.255.255.255 for the switches to
// multicast, when the packet completes its fragment; a copy of the result
// addressed to each worker of the packet's bitmap when it duplicates what
// a complete fragment already has; else nothing.
func (ps *PS) Receive(p *Packet) ([]*Packet, error) {
	if p.Job != ps.plan.Job || p.Flags&(FlagResult|FlagCongestion) != 0 {
		return nil, fmt.Errorf("PS of job %d got job %d flags %#02x: not a contribution", ps.plan.Job, p.Job, p.Flags)
	}
	if !ps.plan.IsPSNode(p.Node) && p.Flags&FlagAggregated == 0 {
		return nil, fmt.Errorf("fragment of job %d for node %d reached the PS unaggregated", p.Job, p.Node)
	}
	if p.Values == nil {
		return nil, fmt.Errorf("contribution of job %d fragment %d without values", p.Job, p.Frag)
	}
	class := ps.plan.Class(p.Frag)
	exp := ps.expected[class][p.Node]
	if p.Bitmap == 0 || p.Bitmap&^exp != 0 {
		return nil, fmt.Errorf("job %d fragment %d: bitmap %#x names workers node %d does not have (%#x)", p.Job, p.Frag, p.Bitmap, p.Node, exp)
	}
	f := ps.frags[p.Frag]
	if f == nil {
		f = &psFragment{got: map[uint16]uint64{}, sums: make([]int64, ps.plan.Values)}
		ps.frags[p.Frag] = f
	}
	have := f.got[p.Node]
	switch {
	case p.Bitmap&have == p.Bitmap:
		ps.Duplicates++
		if f.result == nil {
			return nil, nil
		}
		var out []*Packet
		for i, m := range ps.plan.Members {
			if pl := m.placementIn(class); pl.Node == p.Node && p.Bitmap&(1<<pl.Slot) != 0 {
				out = append(out, f.result.To(ps.plan.Members[i]))
			}
		}
		return out, nil
	case p.Bitmap&have != 0:
		ps.Overlaps++
		return nil, nil
	}
	f.got[p.Node] = have | p.Bitmap
	for i, v := range p.Values {
		f.sums[i] += int64(v)
	}
	for node, want := range ps.expected[class] {
		if f.got[node] != want {
			return nil, nil
		}
	}
	res := &Packet{
		DstMAC: ps.plan.Gateway, SrcIP: ps.plan.PSIP, DstIP: Broadcast,
		TTL: 64, SrcPort: UDPPort, DstPort: UDPPort,
		Header: Header{Version: Version, Flags: FlagResult, Job: ps.plan.Job, Node: ps.plan.PSNode,
			Count: uint16(len(ps.plan.Members)), Frag: p.Frag},
		Values: make([]int32, len(f.sums)),
	}
	for i, s := range f.sums {
		switch {
		case s > math.MaxInt32:
			res.Values[i], res.Flags = math.MaxInt32, res.Flags|FlagOverflow
		case s < math.MinInt32:
			res.Values[i], res.Flags = math.MinInt32, res.Flags|FlagOverflow
		default:
			res.Values[i] = int32(s)
		}
	}
	f.result = res
	return []*Packet{res}, nil
}

// To is a copy of result p addressed to worker m, which the switches route
// by IPv4 to m alone instead of multicasting it.
func (p *Packet) To(m Member) *Packet {
	c := *p
	c.DstIP = m.IP
	return &c
}

// Worker is one worker's side of the protocol for one job:
//
//   - It sends each fragment once with flags 0 (an original).
//   - On a control packet (FlagCongestion) for a fragment still pending it
//     halves its window and sends the fragment again with the flags it had
//     (an original stays an original: it was dropped, not counted).
//     At most one such retry per fragment and round trip.
//   - A fragment without a result TimeoutRounds after its first send (or
//     last resend) is sent again with FlagResend; the switch never stores a resend in a fresh
//     unit, it either completes the unit the fragment is in or passes the
//     fragment to the PS.
//   - On a result it records the sums and grows its window by one.
//
// Window follows ATP's AIMD rule; the emulated workers use it for pacing.
type Worker struct {
	Plan   *Plan
	Index  int // into Plan.Members
	Window float64
	grads  map[uint32][]int32
	sent   map[uint32]uint8 // pending fragment -> flags of its last send
	// sentAt is the Round a pending fragment's timer started: its first send
	// or last timeout. Retries after control packets do not restart it, so
	// a fragment that keeps colliding with a unit that never completes
	// escalates to a resend, which the switch passes to the PS.
	sentAt    map[uint32]int
	retriedAt map[uint32]int // fragment -> Round of its last retry after a control packet
	// Round is the worker's clock in round trips; the driver advances it.
	Round int
	// Results holds each fragment's global sums once received.
	Results map[uint32]*Packet
	// Controls counts control packets received.
	Controls int
}

// NewWorker returns member index of plan with its gradient fragments.
func NewWorker(plan *Plan, index int, grads map[uint32][]int32) *Worker {
	return &Worker{Plan: plan, Index: index, Window: 1, grads: grads, sent: map[uint32]uint8{}, sentAt: map[uint32]int{}, retriedAt: map[uint32]int{}, Results: map[uint32]*Packet{}}
}

// TimeoutRounds is how many rounds a worker waits for a result before it
// retransmits.
const TimeoutRounds = 3

func (w *Worker) packet(frag uint32, flags uint8) *Packet {
	m := w.Plan.Members[w.Index]
	pl := w.Plan.Placement(w.Index, frag)
	return &Packet{
		DstMAC: w.Plan.Gateway, SrcMAC: m.MAC, SrcIP: m.IP, DstIP: w.Plan.PSIP,
		TTL: 64, SrcPort: UDPPort, DstPort: UDPPort,
		Header: Header{Version: Version, Flags: flags, Job: w.Plan.Job, Node: pl.Node, Count: 1, Frag: frag, Bitmap: 1 << pl.Slot},
		Values: w.grads[frag],
	}
}

// Originals returns the first transmission of every fragment, in fragment order.
func (w *Worker) Originals() []*Packet {
	frags := make([]uint32, 0, len(w.grads))
	for f := range w.grads {
		frags = append(frags, f)
	}
	sort.Slice(frags, func(i, j int) bool { return frags[i] < frags[j] })
	out := make([]*Packet, len(frags))
	for i, f := range frags {
		w.sent[f] = 0
		w.sentAt[f] = w.Round
		out[i] = w.packet(f, 0)
	}
	return out
}

// Done reports whether every fragment has its result.
func (w *Worker) Done() bool { return len(w.sent) == 0 }

// Receive handles a packet for the worker and returns what it sends in
// reply (a retransmission), or nil.
func (w *Worker) Receive(p *Packet) *Packet {
	switch {
	case p.Flags&FlagResult != 0:
		if _, pending := w.sent[p.Frag]; pending {
			delete(w.sent, p.Frag)
			delete(w.sentAt, p.Frag)
			delete(w.retriedAt, p.Frag)
			w.Results[p.Frag] = p
			w.Window++
		}
		return nil
	case p.Flags&FlagCongestion != 0:
		w.Controls++
		flags, pending := w.sent[p.Frag]
		if !pending {
			return nil
		}
		if r, ok := w.retriedAt[p.Frag]; ok && r == w.Round {
			// One retry per round trip: a duplicated fragment draws two
			// control packets, and a second retry could arrive after the
			// fragment completed and occupy a unit nobody will complete.
			return nil
		}
		w.retriedAt[p.Frag] = w.Round
		w.Window = math.Max(1, w.Window/2)
		return w.packet(p.Frag, flags)
	}
	return nil
}

// Timeout returns the retransmissions of the pending fragments whose
// timer expired at Round.
func (w *Worker) Timeout() []*Packet {
	frags := make([]uint32, 0, len(w.sent))
	for f := range w.sent {
		if w.Round-w.sentAt[f] >= TimeoutRounds {
			frags = append(frags, f)
		}
	}
	sort.Slice(frags, func(i, j int) bool { return frags[i] < frags[j] })
	out := make([]*Packet, len(frags))
	for i, f := range frags {
		out[i] = w.Resend(f)
	}
	return out
}

// Resend returns the retransmission (FlagResend) of pending fragment frag
// whose timer expired by the driver's own clock, and restarts its timer;
// nil when frag has its result.
func (w *Worker) Resend(frag uint32) *Packet {
	if _, pending := w.sent[frag]; !pending {
		return nil
	}
	w.sent[frag] = FlagResend
	w.sentAt[frag] = w.Round
	return w.packet(frag, FlagResend)
}
