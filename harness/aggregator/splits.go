package aggregator

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/solver"
)

// A plan may split a worker over several aggregation nodes in shares (ATP
// does when a switch's capacity runs out). The endpoints then place each
// fragment by gradproto's schedule: the shares cut [0, 1) into classes,
// the same for every worker of the job, and in each class every worker
// has one node. A switch counts a fixed fan-in per node id, so a switch
// whose set of workers differs between classes gets one node id per
// distinct set (an alias beyond the topology's ids), each with its own
// fan-in, aggregation entry and routes.

// nodeAlias is one node id a job's workers address a node by: the set of
// workers aggregated under it (nil: all the node's workers) and its fan-in.
type nodeAlias struct {
	id      uint16
	fanIn   int
	workers map[string]bool
}

// nodeShare is one node of a worker's split, with its fraction.
type nodeShare struct {
	node string
	id   uint16
	frac float64
}

// addMembers gives every worker of job j its member: its address, and its
// node and slot, or with a split plan its placement per class.
func (b *planBuilder) addMembers(field string, j *solver.JobPlan, jd *JobDeployment) error {
	job := jd.Plan.Job
	counts := map[uint16]int{}
	b.members[job] = counts
	splits := make([][]nodeShare, len(j.Workers))
	split := false
	for wi, w := range j.Workers {
		wf := fmt.Sprintf("%s.workers[%d] (%s)", field, wi, w.Host)
		first := ""
		for si := range w.Shares {
			s := &w.Shares[si]
			if s.Fraction <= shareNoise {
				continue
			}
			id, err := b.nodeID(s, j.PS)
			if err != nil {
				return fmt.Errorf("%s.shares[%d]: %w", wf, si, err)
			}
			if first == "" && len(s.Path) > 0 {
				first = s.Path[0].Switch
			}
			// Two paths to one node are one share here: a worker's
			// fragments reach a node by one route.
			if k := slices.IndexFunc(splits[wi], func(n nodeShare) bool { return n.node == s.Node }); k >= 0 {
				splits[wi][k].frac += s.Fraction
			} else {
				splits[wi] = append(splits[wi], nodeShare{node: s.Node, id: id, frac: s.Fraction})
			}
		}
		if len(splits[wi]) == 0 {
			return fmt.Errorf("%s.shares: no aggregation node", wf)
		}
		split = split || len(splits[wi]) > 1
		for _, n := range splits[wi] {
			counts[n.id]++
		}
		hi, ok := b.hostInterface(w.Host, first)
		if !ok {
			return fmt.Errorf("%s.host: %q is not a host of topology %s", wf, w.Host, b.t.Name)
		}
		jd.Plan.Members = append(jd.Plan.Members, gradproto.Member{IP: hi.IP.Addr(), MAC: macOf(hi.MAC)})
		jd.Workers = append(jd.Workers, w.Host)
	}
	classes := []float64{1}
	if split {
		classes = classBounds(splits)
		jd.Plan.Classes = classes
	}
	if b.nodes == nil {
		b.nodes = map[uint16]map[string][]nodeAlias{}
	}
	aliases := map[string][]nodeAlias{}
	b.nodes[job] = aliases
	lo := 0.0
	for _, hi := range classes {
		mid := (lo + hi) / 2
		lo = hi
		groups := map[string][]int{}
		var order []string
		for wi := range splits {
			n := shareAt(splits[wi], mid)
			if groups[n.node] == nil {
				order = append(order, n.node)
			}
			groups[n.node] = append(groups[n.node], wi)
		}
		for _, node := range order {
			ws := groups[node]
			if len(ws) > gradproto.MaxFanIn {
				return fmt.Errorf("%s: %d workers at node %s, more than one packet's bitmap holds (%d)", field, len(ws), node, gradproto.MaxFanIn)
			}
			id, err := b.alias(aliases, node, shareAt(splits[ws[0]], mid).id, jd.Workers, ws)
			if err != nil {
				return fmt.Errorf("%s: %w", field, err)
			}
			for slot, wi := range ws {
				m := &jd.Plan.Members[wi]
				m.Placements = append(m.Placements, gradproto.Placement{Node: id, Slot: uint8(slot)})
			}
		}
	}
	for i := range jd.Plan.Members {
		m := &jd.Plan.Members[i]
		m.Node, m.Slot = m.Placements[0].Node, m.Placements[0].Slot
		if !split {
			m.Placements = nil
		}
	}
	return nil
}

// alias is the node id of node for the workers ws (indexes into hosts):
// the node's own id for the first set of workers it aggregates, a fresh
// id for every other set. The PS keeps its id: it tells classes apart by
// the schedule itself.
func (b *planBuilder) alias(aliases map[string][]nodeAlias, node string, own uint16, hosts []string, ws []int) (uint16, error) {
	if own == psNodeID {
		return psNodeID, nil
	}
	set := map[string]bool{}
	for _, wi := range ws {
		set[hosts[wi]] = true
	}
	for _, a := range aliases[node] {
		if maps.Equal(a.workers, set) {
			return a.id, nil
		}
	}
	id := own
	if len(aliases[node]) > 0 {
		if b.nextID == 0 {
			for _, n := range b.t.Switches() {
				b.nextID = max(b.nextID, n.ID+1)
			}
		}
		if b.nextID > math.MaxUint16 {
			return 0, fmt.Errorf("node %s: no node id left for another set of its workers", node)
		}
		id = uint16(b.nextID)
		b.nextID++
	}
	aliases[node] = append(aliases[node], nodeAlias{id: id, fanIn: len(ws), workers: set})
	return id, nil
}

// aliases are the node ids job's workers address node by, each with its
// fan-in and workers; a node the job does not split is its own id with
// fanIn, for every worker.
func (b *planBuilder) aliases(job uint16, node string, own uint16, fanIn int) []nodeAlias {
	if as := b.nodes[job][node]; len(as) > 0 && own != psNodeID {
		return as
	}
	return []nodeAlias{{id: own, fanIn: fanIn}}
}

// classBounds cuts [0, 1) where any worker's cumulative shares do: in each
// class every worker has one node.
func classBounds(splits [][]nodeShare) []float64 {
	var cuts []float64
	for _, ns := range splits {
		total := 0.0
		for _, n := range ns {
			total += n.frac
		}
		sum := 0.0
		for _, n := range ns[:len(ns)-1] {
			sum += n.frac
			cuts = append(cuts, sum/total)
		}
	}
	slices.Sort(cuts)
	var out []float64
	for _, c := range cuts {
		if c > 1e-9 && c < 1-1e-9 && (len(out) == 0 || c-out[len(out)-1] > 1e-9) {
			out = append(out, c)
		}
	}
	return append(out, 1)
}

// shareAt is the share of a worker's split at position pos in [0, 1).
func shareAt(ns []nodeShare, pos float64) nodeShare {
	total := 0.0
	for _, n := range ns {
		total += n.frac
	}
	sum := 0.0
	for _, n := range ns {
		sum += n.frac / total
		if pos < sum {
			return n
		}
	}
	return ns[len(ns)-1]
}
