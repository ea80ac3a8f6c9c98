package runner

import (
	"fmt"
	"math"
	"time"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/results"
	"github.com/grid-ina/grid/harness/topo"
)

// Emulated is topology t as the fabric emulates it at scale: every rate of
// the model multiplied by the one factor, so unequal rates stay unequal
// and the plan's predictions scale by the same factor (the LP is linear in
// its rates). Links get their bandwidth times scale; a PS whose ingress B
// is below its only link's bandwidth gets that link shaped to B, since the
// fabric shapes links, not hosts; switch capacities C_s and PS ingresses
// are scaled too (the capacity meters take theirs from PlanOptions's
// CapacityScale). A worker's cap T is the smaller of the PS ingress and
// its own link, both emulated. t itself is left as it is.
func Emulated(t *topo.Topology, scale float64) (*topo.Topology, error) {
	if !(scale > 0) || scale > 1 {
		return nil, fmt.Errorf("emulation scale %g: want a factor in (0, 1]", scale)
	}
	e := *t
	e.Nodes = make([]*topo.Node, len(t.Nodes))
	for i, n := range t.Nodes {
		c := *n
		c.Capacity = scaled(n.Capacity, scale)
		c.Ingress = scaled(n.Ingress, scale)
		e.Nodes[i] = &c
	}
	e.Links = make([]*topo.Link, len(t.Links))
	for i, l := range t.Links {
		c := *l
		c.Bandwidth = scaled(l.Bandwidth, scale)
		e.Links[i] = &c
	}
	for _, n := range e.Nodes {
		if n.Kind != topo.KindHost || n.Ingress <= 0 {
			continue
		}
		if links := e.LinksOf(n.Name); len(links) == 1 && (links[0].Bandwidth == 0 || links[0].Bandwidth > n.Ingress) {
			links[0].Bandwidth = n.Ingress
		}
	}
	// A rate scaled below what tbf can shape would be shaped wrongly, or
	// not at all once it rounds to 0.
	for i, l := range e.Links {
		if t.Links[i].Bandwidth > 0 || l.Bandwidth > 0 {
			if err := topo.CheckLinkBandwidth(l.Bandwidth); err != nil {
				return nil, fmt.Errorf("emulation scale %g: link %s would run at %v bit/s: %w (choose a larger scale)", scale, t.LinkString(t.Links[i]), float64(l.Bandwidth), err)
			}
		}
	}
	return &e, nil
}

// scaled is b times scale to the whole bit per second, so that 100 Gbps
// at 1e-5 is 1 Mbps, not a float's 1.0000000000000001 Mbps.
func scaled(b topo.Bandwidth, scale float64) topo.Bandwidth {
	return topo.Bandwidth(math.Round(float64(b) * scale))
}

// QueueWait is the longest a frame can wait in one of the emulated
// topology's shaped queues (fabric.QueueDelay).
func QueueWait(emulated *topo.Topology) time.Duration {
	longest := time.Duration(0)
	for _, l := range emulated.Links {
		longest = max(longest, fabric.QueueDelay(float64(l.Bandwidth), l.EffectiveMTU()))
	}
	return longest
}

// Rates lists every rate of t's model with its emulated value at scale
// (Emulated): links, switch capacities, PS ingresses.
func Rates(t *topo.Topology, scale float64) ([]results.Rate, error) {
	e, err := Emulated(t, scale)
	if err != nil {
		return nil, err
	}
	var out []results.Rate
	for i, l := range t.Links {
		if l.Bandwidth > 0 {
			out = append(out, results.Rate{Kind: "link", Of: t.LinkString(l), TopologyBits: float64(l.Bandwidth), EmulatedBits: float64(e.Links[i].Bandwidth)})
		}
	}
	for i, n := range t.Nodes {
		switch {
		case n.Kind == topo.KindSwitch && n.Programmable:
			out = append(out, results.Rate{Kind: "switch capacity", Of: n.Name, TopologyBits: float64(n.Capacity), EmulatedBits: float64(e.Nodes[i].Capacity)})
		case n.Role == topo.RolePS:
			out = append(out, results.Rate{Kind: "PS ingress", Of: n.Name, TopologyBits: float64(t.Ingress(n.Name)), EmulatedBits: float64(e.Ingress(n.Name))})
		}
	}
	return out, nil
}
