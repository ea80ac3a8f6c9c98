package solver

import "slices"

// share is part of one worker's gradient: the fraction frac of its rate is
// aggregated at node, reached along path (node indices from the worker to
// node inclusive). Most plans give a worker one share of fraction 1; ATP
// splits a worker's traffic when a switch runs out of capacity.
type share struct {
	node int
	frac float64
	path []int
}

// assignment is what an algorithm decides; the evaluator turns it into rates.
type assignment struct {
	shares [][][]share // [job][worker] shares
	// streams holds, per job, the path from each aggregating switch to the PS
	// that carries the switch's aggregated result.
	streams []map[int][]int
	// intended is the rate (Gbps) the algorithm's model expects per [job][worker];
	// nil when the algorithm has no model of its own rates.
	intended [][]float64
}

func (in *Instance) newAssignment() *assignment {
	a := &assignment{shares: make([][][]share, len(in.jobs)), streams: make([]map[int][]int, len(in.jobs))}
	for j, jb := range in.jobs {
		a.shares[j] = make([][]share, len(jb.workers))
		a.streams[j] = map[int][]int{}
	}
	return a
}

func (a *assignment) clone() *assignment {
	b := &assignment{shares: make([][][]share, len(a.shares)), streams: make([]map[int][]int, len(a.streams))}
	for j := range a.shares {
		b.shares[j] = make([][]share, len(a.shares[j]))
		for w, ss := range a.shares[j] {
			b.shares[j][w] = slices.Clone(ss)
		}
		b.streams[j] = make(map[int][]int, len(a.streams[j]))
		for s, p := range a.streams[j] {
			b.streams[j][s] = p
		}
	}
	if a.intended != nil {
		b.intended = make([][]float64, len(a.intended))
		for j := range a.intended {
			b.intended[j] = slices.Clone(a.intended[j])
		}
	}
	return b
}

// arcChooser picks among equal-cost next hops; nil picks the lowest port.
type arcChooser func(candidates []int) int

// distTo caches hop distances to each target.
type distCache map[int][]int

func (in *Instance) dist(c distCache, target int) []int {
	if d, ok := c[target]; ok {
		return d
	}
	d := in.hops(target)
	c[target] = d
	return d
}

// shortestPath walks from src to dst along decreasing hop distance, letting
// choose pick among equal-cost arcs. It returns nil when dst is unreachable.
func (in *Instance) shortestPath(c distCache, src, dst int, choose arcChooser) []int {
	d := in.dist(c, dst)
	if d[src] < 0 {
		return nil
	}
	path := []int{src}
	for v := src; v != dst; {
		var cands []int
		for _, a := range in.out[v] {
			u := in.arcs[a].to
			if d[u] == d[v]-1 && in.arcs[a].cap > 0 && (u == dst || in.sw[u]) {
				cands = append(cands, a)
			}
		}
		pick := cands[0]
		if choose != nil && len(cands) > 1 {
			pick = choose(cands)
		}
		v = in.arcs[pick].to
		path = append(path, v)
	}
	return path
}

// completeStreams gives every aggregating switch without a stream path the
// shortest path to its job's PS.
func (in *Instance) completeStreams(a *assignment, c distCache, choose arcChooser) {
	for j, jb := range in.jobs {
		used := map[int]bool{}
		for _, ss := range a.shares[j] {
			for _, s := range ss {
				if s.node != jb.ps && s.frac > 0 {
					used[s.node] = true
				}
			}
		}
		for s := range a.streams[j] {
			if !used[s] {
				delete(a.streams[j], s)
			}
		}
		for _, s := range sortedKeys(used) {
			if _, ok := a.streams[j][s]; !ok {
				a.streams[j][s] = in.shortestPath(c, s, jb.ps, choose)
			}
		}
	}
}

func sortedKeys[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// pathArcs lists the arcs of a node path.
func (in *Instance) pathArcs(path []int) []int {
	out := make([]int, 0, len(path))
	for i := 0; i+1 < len(path); i++ {
		out = append(out, in.arcFrom(path[i], path[i+1]))
	}
	return out
}
