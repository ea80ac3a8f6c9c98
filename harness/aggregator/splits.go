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
//
// A packet's bitmap has MaxFanIn (64) slots, so a node that aggregates
// more workers in a class is addressed by one node id per 64 of them: a
// switch's groups are sets of workers like any other, each with its own
// aggregation entry whose partial sum goes to the PS on its own; the PS's
// further ids are its aliases (gradproto.Plan.PSAliases), under which it
// takes the workers' fragments directly. A switch keeps one memory unit
// per (job, fragment) that the hash names, so each further id of a job at
// a switch gets its own unit offset (gradproto.Aggregation.UnitOffset):
// two sets of one fragment never meet in one unit.

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
			// A packet's bitmap has MaxFanIn slots: a node with more
			// workers is addressed by one node id per MaxFanIn of them.
			for k, ws := range slices.Collect(slices.Chunk(groups[node], gradproto.MaxFanIn)) {
				own := shareAt(splits[ws[0]], mid).id
				id, err := b.alias(aliases, node, own, k, jd.Workers, ws)
				if err != nil {
					return fmt.Errorf("%s: %w", field, err)
				}
				if own == psNodeID && id != psNodeID && !slices.Contains(jd.Plan.PSAliases, id) {
					jd.Plan.PSAliases = append(jd.Plan.PSAliases, id)
				}
				for slot, wi := range ws {
					m := &jd.Plan.Members[wi]
					m.Placements = append(m.Placements, gradproto.Placement{Node: id, Slot: uint8(slot)})
				}
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

// alias is the node id of node for the workers ws (indexes into hosts),
// the chunk-th group of at most MaxFanIn of the node's workers in a class.
// A switch counts a fixed fan-in per node id, so it has its own id for the
// first set of workers it aggregates and a fresh id for every other set.
// The PS tells classes apart by the schedule itself: its chunk-th group
// has the same id in every class (its own id for the first), whatever its
// workers.
func (b *planBuilder) alias(aliases map[string][]nodeAlias, node string, own uint16, chunk int, hosts []string, ws []int) (uint16, error) {
	set := map[string]bool{}
	for _, wi := range ws {
		set[hosts[wi]] = true
	}
	if own == psNodeID && chunk < len(aliases[node]) {
		a := &aliases[node][chunk]
		maps.Copy(a.workers, set)
		return a.id, nil
	}
	if own != psNodeID {
		for _, a := range aliases[node] {
			if maps.Equal(a.workers, set) {
				return a.id, nil
			}
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
// fan-in and workers (a PS's: its workers in any class); a node none of
// the job's workers names is its own id with fanIn.
func (b *planBuilder) aliases(job uint16, node string, own uint16, fanIn int) []nodeAlias {
	if as := b.nodes[job][node]; len(as) > 0 {
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
