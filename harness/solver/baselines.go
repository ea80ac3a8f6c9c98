package solver

import (
	"math"
	"sort"
)

// switchML aggregates every worker at its rack switch (the switch its first
// link reaches) when that switch is programmable, else at the PS; results go
// from the rack switch to the PS on a shortest path.
func (in *Instance) switchML() *Plan {
	a := in.newAssignment()
	dc := distCache{}
	bal := in.newBalancer()
	for j, jb := range in.jobs {
		for w, wi := range jb.workers {
			rack := in.arcs[in.out[wi][0]].to
			node := jb.ps
			if in.prog[rack] {
				node = rack
			}
			path := in.shortestPath(dc, wi, node, bal.choose)
			bal.add(in, path, 1)
			a.shares[j][w] = []share{{node: node, frac: 1, path: path}}
		}
	}
	in.completeStreams(a, dc, bal.choose)
	return in.buildPlan(AlgoSwitchML, "none", a)
}

// geryon aggregates nothing in the network: every worker sends to the PS.
// Flows start on shortest paths spread over equal-cost arcs; a local search
// then moves flows that cross a bottleneck link onto any of the k shortest
// paths when that raises the slowest rate (Fig. 1's W4 goes S1-S2-S3).
func (in *Instance) geryon(opt Options) *Plan {
	a := in.newAssignment()
	dc := distCache{}
	bal := in.newBalancer()
	for j, jb := range in.jobs {
		for w, wi := range jb.workers {
			path := in.shortestPath(dc, wi, jb.ps, bal.choose)
			bal.add(in, path, 1)
			a.shares[j][w] = []share{{node: jb.ps, frac: 1, path: path}}
		}
	}
	ls := in.newSearch(dc, opt.paths())
	ls.onlyReroute = true
	a = ls.improve(a, 400)
	return in.buildPlan(AlgoGeryon, "links", a)
}

// atp follows ATP as the paper describes it: gradients go up the default
// (shortest) path to the PS and the first programmable switch with capacity
// left aggregates them; what exceeds its capacity continues unaggregated and
// may be aggregated by the next one, or by the PS. How much a switch can take
// depends on the rate, so the plan is the one for the largest common rate t
// at which the evaluator lets every worker send t (found by bisection).
func (in *Instance) atp() *Plan {
	dc := distCache{}
	hi := 0.0
	for _, jb := range in.jobs {
		hi = math.Max(hi, jb.maxRate)
	}
	best := in.atpAt(dc, 0)
	lo := 0.0
	for i := 0; i < 50 && hi-lo > 1e-9*hi; i++ {
		mid := (lo + hi) / 2
		a := in.atpAt(dc, mid)
		if in.evaluate(a).lambda >= mid*(1-1e-9) {
			lo, best = mid, a
		} else {
			hi = mid
		}
	}
	return in.buildPlan(AlgoATP, "none", best)
}

// atpAt is ATP's aggregation at common rate t (t = 0: everything fits).
func (in *Instance) atpAt(dc distCache, t float64) *assignment {
	a := in.newAssignment()
	capLeft := append([]float64(nil), in.capS...)
	for j, jb := range in.jobs {
		d := in.dist(dc, jb.ps)
		paths := make([][]int, len(jb.workers))
		rem := make([]float64, len(jb.workers))
		through := map[int][]int{} // programmable switch -> workers whose default path crosses it
		for w, wi := range jb.workers {
			paths[w] = in.shortestPath(dc, wi, jb.ps, nil)
			rem[w] = 1
			for _, v := range paths[w] {
				if in.prog[v] {
					through[v] = append(through[v], w)
				}
			}
		}
		order := sortedKeys(through)
		sort.SliceStable(order, func(x, y int) bool { return d[order[x]] > d[order[y]] })
		for _, s := range order {
			var want float64
			for _, w := range through[s] {
				want += rem[w]
			}
			if want <= 0 || capLeft[s] <= 0 {
				continue
			}
			take := 1.0
			if t > 0 && want*t > capLeft[s] {
				take = capLeft[s] / (want * t)
			}
			// The bisection leaves crumbs: a switch that takes all but a
			// shareEpsilon of the traffic takes it all, one that could take
			// only a crumb takes none.
			if take > 1-shareEpsilon {
				take = 1
			} else if take < shareEpsilon {
				continue
			}
			for _, w := range through[s] {
				if rem[w] <= 0 {
					continue
				}
				f := rem[w] * take
				a.shares[j][w] = append(a.shares[j][w], share{node: s, frac: f, path: prefixTo(paths[w], s)})
				rem[w] -= f
				if take == 1 {
					rem[w] = 0
				}
			}
			capLeft[s] -= want * take * t
		}
		for w := range jb.workers {
			switch sh := a.shares[j][w]; {
			case rem[w] > shareEpsilon || len(sh) == 0:
				a.shares[j][w] = append(sh, share{node: jb.ps, frac: rem[w], path: paths[w]})
			case rem[w] > 0:
				sh[len(sh)-1].frac += rem[w]
			}
		}
	}
	in.completeStreams(a, dc, nil)
	return a
}

// shareEpsilon is the smallest fraction of a worker's traffic ATP sends to
// a node of its own; smaller ones are rounding noise of the rate search.
const shareEpsilon = 1e-6

func prefixTo(path []int, v int) []int {
	for i, x := range path {
		if x == v {
			return path[:i+1]
		}
	}
	return path
}
