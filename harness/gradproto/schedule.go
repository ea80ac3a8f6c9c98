package gradproto

import (
	"fmt"
	"math"
)

// A plan may split a worker's gradient over several aggregation nodes in
// given shares (ATP's plans do: a worker's first switch takes what its
// capacity allows, the rest goes on). Every fragment then belongs to one
// class, the same for every worker, by a deterministic schedule: fragment
// f's position in [0, 1) is the fractional part of (f+1) times the golden
// ratio's inverse (a low-discrepancy sequence, so any run of fragments
// splits close to the shares), and Plan.Classes cut [0, 1) into classes.
// In each class each worker has one placement: a node and a bitmap slot.
// A switch aggregating a node counts the fan-in of that node, so a node's
// fan-in differs between classes only under different node ids (the
// controller gives a switch one node id per distinct set of workers).

// goldenStep is 2^64 divided by the golden ratio: the Weyl sequence
// k*goldenStep mod 2^64 spreads any run of consecutive k evenly over
// [0, 2^64).
const goldenStep = 0x9E3779B97F4A7C15

// FragmentPosition is fragment frag's position in [0, 1) in the schedule.
func FragmentPosition(frag uint32) float64 {
	return float64((uint64(frag)+1)*goldenStep>>11) / (1 << 53)
}

// Placement is where a worker's fragments of one class are aggregated.
type Placement struct {
	Node uint16
	Slot uint8 // 0..MaxFanIn-1, unique per node within the class
}

// Class is the class of fragment frag: the first of Plan.Classes above its
// position; 0 for a plan without classes.
func (p *Plan) Class(frag uint32) int {
	if len(p.Classes) == 0 {
		return 0
	}
	pos := FragmentPosition(frag)
	for c, until := range p.Classes {
		if pos < until {
			return c
		}
	}
	return len(p.Classes) - 1
}

// Placement is where member index's fragment frag is aggregated.
func (p *Plan) Placement(index int, frag uint32) Placement {
	m := &p.Members[index]
	if len(p.Classes) == 0 {
		return Placement{Node: m.Node, Slot: m.Slot}
	}
	return m.Placements[p.Class(frag)]
}

// classes is the number of classes, at least 1.
func (p *Plan) classes() int { return max(1, len(p.Classes)) }

// placementIn is member m's placement in class c.
func (m *Member) placementIn(c int) Placement {
	if len(m.Placements) == 0 {
		return Placement{Node: m.Node, Slot: m.Slot}
	}
	return m.Placements[c]
}

// checkClasses checks the classes' bounds and that every member has one
// placement per class.
func (p *Plan) checkClasses() error {
	if len(p.Classes) == 0 {
		return nil
	}
	prev := 0.0
	for c, until := range p.Classes {
		if !(until > prev) || until > 1 || math.IsNaN(until) {
			return fmt.Errorf("classes[%d]: bound %g, want increasing bounds in (0, 1]", c, until)
		}
		prev = until
	}
	if prev != 1 {
		return fmt.Errorf("classes: the last bound is %g, want 1", prev)
	}
	for i, m := range p.Members {
		if len(m.Placements) != len(p.Classes) {
			return fmt.Errorf("member %d: %d placements for %d classes", i, len(m.Placements), len(p.Classes))
		}
	}
	return nil
}
