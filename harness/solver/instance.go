// Package solver computes gradient routing plans: for every worker of every
// training job the node that aggregates its gradients (a programmable switch
// or the job's PS) and the path there, for every switch the fan-in it must
// expect. It implements GRID's R-GRIA (Fang et al., ToN 2023, Alg. 1), an
// exact optimum of the paper's model, a link-aware extension, and the paper's
// baselines Geryon, ATP and SwitchML, and scores every plan with one
// evaluator (max-min fair rates under link, switch, PS and rate caps, with
// gradients, partial sums and results counted on every link direction).
// Results go down one tree per job from its PS (buildResultTrees), so every
// worker gets each result exactly once.
//
// Rates inside the package are in Gbps (float64), which keeps LP
// coefficients near 1; topo.Bandwidth (bits per second) is converted on entry.
package solver

import (
	"fmt"
	"math"
	"slices"

	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// gbps converts a topology bandwidth to Gbps; 0 (unlimited) becomes +Inf.
func gbps(b topo.Bandwidth) float64 {
	if b == 0 {
		return math.Inf(1)
	}
	return float64(b) / 1e9
}

// arc is one direction of a link, leaving node from on port fromPort.
type arc struct {
	from, to         int
	fromPort, toPort int
	cap              float64 // Gbps, +Inf when unlimited
}

// Instance is a topology and its jobs in the form the algorithms use: nodes
// and directed links by index, capacities in Gbps.
type Instance struct {
	Topo  *topo.Topology
	names []string
	index map[string]int
	sw    []bool    // node is a switch
	prog  []bool    // node is a programmable switch
	capS  []float64 // processing capacity C_s of programmable switches, Gbps
	out   [][]int   // arcs leaving each node, by port order
	arcs  []arc
	jobs  []job
	// programmable switches in node order
	progList []int
	// resultParent is, per job, the arc each node's results arrive on in
	// the job's result tree (-1 off the tree); see buildResultTrees.
	resultParent [][]int
}

type job struct {
	name    string
	ps      int
	workers []int
	ingress float64 // B of the PS, Gbps
	maxRate float64 // T, Gbps
}

// NewInstance checks jobs against t and builds the instance. It fails with a
// message naming the problem when a host is unknown, a capacity is zero, or a
// worker cannot reach its PS.
func NewInstance(t *topo.Topology, jobs []workload.Job) (*Instance, error) {
	if len(jobs) == 0 {
		return nil, fmt.Errorf("no jobs to route on topology %s", t.Name)
	}
	in := &Instance{Topo: t, index: map[string]int{}}
	for i, n := range t.Nodes {
		in.names = append(in.names, n.Name)
		in.index[n.Name] = i
		isSw := n.Kind == topo.KindSwitch
		in.sw = append(in.sw, isSw)
		in.prog = append(in.prog, isSw && n.Programmable)
		c := 0.0
		if isSw && n.Programmable {
			if n.Capacity <= 0 {
				return nil, fmt.Errorf("%s: programmable switch %s has no processing capacity (set capacity, e.g. 100Gbps)", where(t, n.Line), n.Name)
			}
			c = float64(n.Capacity) / 1e9
			in.progList = append(in.progList, i)
		}
		in.capS = append(in.capS, c)
	}
	in.out = make([][]int, len(t.Nodes))
	for _, l := range t.Links {
		a, okA := in.index[l.A.Node]
		b, okB := in.index[l.B.Node]
		if !okA || !okB {
			return nil, fmt.Errorf("%s: link %s joins an unknown node", where(t, l.Line), t.LinkString(l))
		}
		if l.Bandwidth < 0 {
			return nil, fmt.Errorf("%s: link %s has negative bandwidth", where(t, l.Line), t.LinkString(l))
		}
		c := gbps(l.Bandwidth)
		for _, d := range [2]arc{{a, b, l.A.Port, l.B.Port, c}, {b, a, l.B.Port, l.A.Port, c}} {
			in.out[d.from] = append(in.out[d.from], len(in.arcs))
			in.arcs = append(in.arcs, d)
		}
	}
	for _, o := range in.out {
		slices.SortFunc(o, func(x, y int) int { return in.arcs[x].fromPort - in.arcs[y].fromPort })
	}
	seen := map[string]string{}
	for _, j := range jobs {
		ps, ok := in.index[j.PS]
		if !ok || in.sw[ps] {
			return nil, fmt.Errorf("job %s: PS %q is not a host of topology %s", j.Name, j.PS, t.Name)
		}
		ingress := gbps(t.Ingress(j.PS))
		if math.IsInf(ingress, 1) {
			return nil, fmt.Errorf("job %s: PS %s has unlimited ingress: give the PS an ingress or its links a bandwidth", j.Name, j.PS)
		}
		jb := job{name: j.Name, ps: ps, ingress: ingress}
		dist := in.hops(ps)
		minAccess := math.Inf(1)
		for _, w := range j.Workers {
			wi, ok := in.index[w]
			if !ok || in.sw[wi] {
				return nil, fmt.Errorf("job %s: worker %q is not a host of topology %s", j.Name, w, t.Name)
			}
			if other, dup := seen[w]; dup {
				return nil, fmt.Errorf("job %s: host %s is already a worker of job %s", j.Name, w, other)
			}
			if wi == ps {
				return nil, fmt.Errorf("job %s: host %s is both PS and worker", j.Name, w)
			}
			seen[w] = j.Name
			if dist[wi] < 0 {
				return nil, fmt.Errorf("job %s: worker %s cannot reach its PS %s (no path through switches)", j.Name, w, j.PS)
			}
			for _, a := range in.out[wi] {
				if in.arcs[a].cap <= 0 {
					return nil, fmt.Errorf("job %s: worker %s has a link of zero bandwidth", j.Name, w)
				}
				minAccess = math.Min(minAccess, in.arcs[a].cap)
			}
			jb.workers = append(jb.workers, wi)
		}
		if len(jb.workers) == 0 {
			return nil, fmt.Errorf("job %s has no workers", j.Name)
		}
		// T: the paper's maximum sending rate, which a worker's own link also bounds.
		jb.maxRate = math.Min(ingress, minAccess)
		if j.MaxRate > 0 {
			jb.maxRate = math.Min(jb.maxRate, float64(j.MaxRate)/1e9)
		}
		if jb.maxRate <= 0 || ingress <= 0 {
			return nil, fmt.Errorf("job %s: PS %s has zero ingress bandwidth", j.Name, j.PS)
		}
		in.jobs = append(in.jobs, jb)
	}
	in.buildResultTrees()
	return in, nil
}

// buildResultTrees gives every job a shortest-path tree from its PS over
// the switches. The PS sends each result once, out of its first interface
// (its gateway); every switch copies it to its children in the tree and to
// the job's workers attached to it. Results therefore reach every worker
// exactly once and never loop, whatever paths the gradients took (results
// that retrace each worker's path copy wherever two paths cross a switch
// in different directions). Among equally short parents a switch takes the
// link fewest earlier jobs' trees use, then the lowest port, so jobs
// spread their results over a Clos fabric's cores.
func (in *Instance) buildResultTrees() {
	use := make([]int, len(in.arcs))
	in.resultParent = make([][]int, len(in.jobs))
	for j, jb := range in.jobs {
		parent := make([]int, len(in.names))
		for i := range parent {
			parent[i] = -1
		}
		in.resultParent[j] = parent
		root := -1
		for _, a := range in.out[jb.ps] {
			if in.sw[in.arcs[a].to] && in.arcs[a].cap > 0 {
				root = a
				break
			}
		}
		if root < 0 {
			continue // NewInstance refused a PS without a link its workers reach
		}
		gw := in.arcs[root].to
		parent[gw] = root
		d := in.hops(gw)
		order := make([]int, 0, len(in.names))
		for v := range in.names {
			if in.sw[v] && d[v] > 0 {
				order = append(order, v)
			}
		}
		slices.SortStableFunc(order, func(x, y int) int { return d[x] - d[y] })
		for _, v := range order {
			best := -1
			for _, back := range in.out[v] {
				u := in.arcs[back].to
				if !in.sw[u] || d[u] != d[v]-1 || in.arcs[back].cap <= 0 {
					continue
				}
				a := in.arcFrom(u, v)
				if best < 0 || use[a] < use[best] {
					best = a
				}
			}
			parent[v] = best
		}
		for _, a := range in.treeArcs(j, in.staticAccess(j)) {
			use[a]++
		}
	}
}

// staticAccess lists the switches job j's workers receive results at
// whatever the plan: a single-homed worker's switch, and every switch of
// a worker with several links (which one it uses depends on its path).
func (in *Instance) staticAccess(j int) []int {
	var out []int
	for _, wi := range in.jobs[j].workers {
		for _, a := range in.out[wi] {
			if in.sw[in.arcs[a].to] {
				out = append(out, in.arcs[a].to)
			}
		}
	}
	return out
}

// staticResults lists, per arc, the jobs whose results cross it whatever
// the plan: what the link-aware models reserve for results.
func (in *Instance) staticResults() map[int][]int {
	out := map[int][]int{}
	for j := range in.jobs {
		for _, a := range in.treeArcs(j, in.staticAccess(j)) {
			out[a] = append(out[a], j)
		}
	}
	return out
}

// treeArcs lists the arcs of job j's result tree that lead from the PS to
// the given switches, each once, in the order they are first reached.
func (in *Instance) treeArcs(j int, switches []int) []int {
	parent := in.resultParent[j]
	seen := map[int]bool{}
	var out []int
	for _, s := range switches {
		for v := s; parent[v] >= 0 && !seen[parent[v]]; v = in.arcs[parent[v]].from {
			seen[parent[v]] = true
			out = append(out, parent[v])
		}
	}
	return out
}

// resultArcs lists the arcs job j's results cross under assignment a: the
// tree arcs to every worker's switch and the arc from there to the worker.
// A worker receives results on the interface its gradients leave from.
func (in *Instance) resultArcs(j int, a *assignment) []int {
	var access, last []int
	for w, wi := range in.jobs[j].workers {
		sw := in.accessSwitch(wi, a.shares[j][w])
		if sw < 0 {
			continue
		}
		access = append(access, sw)
		last = append(last, in.arcFrom(sw, wi))
	}
	return append(in.treeArcs(j, access), last...)
}

// accessSwitch is the switch a worker's gradients enter first (-1 if it has no share).
func (in *Instance) accessSwitch(w int, ss []share) int {
	for _, s := range ss {
		if s.frac > 0 && len(s.path) > 1 {
			return s.path[1]
		}
	}
	if len(in.out[w]) > 0 {
		return in.arcs[in.out[w][0]].to
	}
	return -1
}

func where(t *topo.Topology, line int) string {
	src := t.Source
	if src == "" {
		src = t.Name
	}
	if line > 0 {
		return fmt.Sprintf("%s:%d", src, line)
	}
	return src
}

// hops is the hop distance of every node to target, walking only through
// switches (hosts do not forward); -1 when unreachable.
func (in *Instance) hops(target int) []int {
	d := make([]int, len(in.names))
	for i := range d {
		d[i] = -1
	}
	d[target] = 0
	queue := []int{target}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if v != target && !in.sw[v] {
			continue // a host is a path end, never a transit node
		}
		for _, a := range in.out[v] {
			u := in.arcs[a].to
			if d[u] < 0 && in.arcs[a].cap > 0 {
				d[u] = d[v] + 1
				queue = append(queue, u)
			}
		}
	}
	return d
}

// Jobs is the number of jobs.
func (in *Instance) Jobs() int { return len(in.jobs) }

// Workers is the total number of workers over all jobs.
func (in *Instance) Workers() int {
	n := 0
	for _, j := range in.jobs {
		n += len(j.workers)
	}
	return n
}

// arcFrom is the arc from node u to its neighbour v (-1 if none); degrees are
// small, so a scan beats a map.
func (in *Instance) arcFrom(u, v int) int {
	for _, a := range in.out[u] {
		if in.arcs[a].to == v {
			return a
		}
	}
	return -1
}

// WithoutLinkLimits is a copy of the instance in the paper's model: every
// link unlimited, so only switch capacities, PS ingress and T constrain rates.
func (in *Instance) WithoutLinkLimits() *Instance {
	c := *in
	c.arcs = append([]arc(nil), in.arcs...)
	for i := range c.arcs {
		c.arcs[i].cap = math.Inf(1)
	}
	return &c
}
