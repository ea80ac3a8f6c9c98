package solver

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/grid-ina/grid/harness/lp"
)

// exact is grid-exact. When the link-aware MILP (one binary per worker, node
// and path) is small enough it is solved exactly, links included. Otherwise
// the paper's model (links assumed sufficient) is solved exactly by
// paperExact for a single job; several jobs that large are refused.
func (in *Instance) exact(ctx context.Context, opt Options) (*Plan, error) {
	limit := opt.MILPLimit
	if limit <= 0 {
		limit = 40
		if opt.LP.Resolve() == lp.CBC {
			limit = 400
		}
	}
	k := opt.paths()
	dc := distCache{}
	if n := in.countMILPBinaries(dc, k, limit); n <= limit {
		return in.linkMILP(ctx, dc, k, opt)
	} else if len(in.jobs) > 1 {
		return nil, fmt.Errorf("%d jobs need the link-aware MILP, which would have %d binaries (limit %d): the paper-model exact method handles one job", len(in.jobs), n, limit)
	}
	lam, counts := in.paperExact(0)
	a := in.placeCounts(dc, 0, counts)
	plan := in.buildPlan(AlgoGRIDExact, "paper", a)
	plan.BoundGbps = ptr(round9(lam))
	plan.Notes = append(plan.Notes, "exact optimum of the paper's model (links assumed sufficient); workers placed on the chosen switches nearest first")
	return plan, nil
}

// paperExact solves GRIA for job j exactly. For a rate lambda, switch s can
// aggregate floor(C_s/lambda) workers and the PS takes floor(B/lambda)
// streams, each used switch sending one and each unaggregated worker one.
// Feasibility only gets easier as lambda falls, and for a fixed number K of
// switches the K largest capacities are best; the optimum is one of the
// breakpoints T, B/q, C_s/q, so a bisection over the sorted breakpoints
// finds it. It returns lambda and the number of workers per programmable
// switch (index into progList).
func (in *Instance) paperExact(j int) (float64, []int) {
	jb := in.jobs[j]
	N := len(jb.workers)
	cands := []float64{jb.maxRate}
	for q := 1; q <= N+len(in.progList); q++ {
		cands = append(cands, jb.ingress/float64(q))
	}
	for _, s := range in.progList {
		for q := 1; q <= N; q++ {
			cands = append(cands, in.capS[s]/float64(q))
		}
	}
	var valid []float64
	for _, c := range cands {
		if c <= jb.maxRate*(1+1e-12) && c > 0 {
			valid = append(valid, c)
		}
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(valid)))
	// valid[i] feasible is monotone: false...false true...true
	i := sort.Search(len(valid), func(i int) bool { _, ok := in.paperFeasible(j, valid[i]); return ok })
	if i == len(valid) {
		return 0, make([]int, len(in.progList)) // cannot happen: B/(N) is always feasible
	}
	counts, _ := in.paperFeasible(j, valid[i])
	return valid[i], counts
}

// paperFeasible says whether every worker of job j can send lambda, and how.
func (in *Instance) paperFeasible(j int, lambda float64) ([]int, bool) {
	jb := in.jobs[j]
	N := len(jb.workers)
	streams := int(math.Floor(jb.ingress/lambda + 1e-9))
	order := make([]int, len(in.progList))
	slots := make([]int, len(in.progList))
	for k, s := range in.progList {
		order[k] = k
		slots[k] = min(N, int(math.Floor(in.capS[s]/lambda+1e-9)))
	}
	sort.SliceStable(order, func(x, y int) bool { return slots[order[x]] > slots[order[y]] })
	held := 0
	for K := 0; K <= len(order); K++ {
		if K > 0 {
			if slots[order[K-1]] == 0 {
				break
			}
			held += slots[order[K-1]]
		}
		direct := max(0, N-held)
		if K+direct <= streams {
			counts := make([]int, len(in.progList))
			left := N
			for _, k := range order[:K] {
				counts[k] = min(slots[k], left)
				left -= counts[k]
			}
			return counts, true
		}
	}
	return nil, false
}

// placeCounts assigns job j's workers to switches with the given counts,
// nearest pairs first; the rest go to the PS. Paths spread over equal-cost arcs.
func (in *Instance) placeCounts(dc distCache, j int, counts []int) *assignment {
	jb := in.jobs[j]
	a := in.newAssignment()
	type pair struct{ w, k, d int }
	var pairs []pair
	for k, c := range counts {
		if c == 0 {
			continue
		}
		d := in.dist(dc, in.progList[k])
		for w, wi := range jb.workers {
			pairs = append(pairs, pair{w, k, d[wi]})
		}
	}
	sort.SliceStable(pairs, func(x, y int) bool { return pairs[x].d < pairs[y].d })
	left := append([]int(nil), counts...)
	node := make([]int, len(jb.workers))
	for w := range node {
		node[w] = -1
	}
	for _, p := range pairs {
		if node[p.w] < 0 && left[p.k] > 0 && p.d >= 0 {
			node[p.w] = in.progList[p.k]
			left[p.k]--
		}
	}
	bal := in.newBalancer()
	for w, wi := range jb.workers {
		if node[w] < 0 {
			node[w] = jb.ps
		}
		path := in.shortestPath(dc, wi, node[w], bal.choose)
		bal.add(in, path, 1)
		a.shares[j][w] = []share{{node: node[w], frac: 1, path: path}}
	}
	in.completeStreams(a, dc, bal.choose)
	return a
}

// milpCandidates are the (node, path) choices of a worker in the link-aware
// MILP: every programmable switch and the PS, each over up to k shortest paths.
func (in *Instance) milpCandidates(dc distCache, j, w, k int) []share {
	jb := in.jobs[j]
	var out []share
	for _, node := range append(append([]int(nil), in.progList...), jb.ps) {
		for _, p := range in.kShortest(dc, jb.workers[w], node, k) {
			out = append(out, share{node: node, frac: 1, path: p})
		}
	}
	return out
}

// countMILPBinaries counts the MILP's binaries, stopping early once the cheap
// upper bound (workers x nodes x k) or the running count passes limit.
func (in *Instance) countMILPBinaries(dc distCache, k, limit int) int {
	if ub := in.Workers() * (len(in.progList) + 1) * k; ub > limit {
		n := 0
		for _, jb := range in.jobs {
			n += len(jb.workers) * (len(in.progList) + 1)
		}
		if n > limit {
			return n // even one path per candidate is too many
		}
	}
	n := 0
	for j, jb := range in.jobs {
		for w := range jb.workers {
			n += len(in.milpCandidates(dc, j, w, k))
			if n > limit {
				return n
			}
		}
	}
	return n
}

// linkMILP solves the link-aware GRIA exactly: binary z per worker, node and
// path; rate r <= T z; lambda <= each worker's rate; switch, PS ingress and
// link capacities with one stream per used switch at y >= its workers' rates,
// routed on the shortest path to the PS.
func (in *Instance) linkMILP(ctx context.Context, dc distCache, k int, opt Options) (*Plan, error) {
	m := lp.NewModel("gria-links")
	lam := m.AddVar("lambda", 0, lp.Inf, false)
	type cand struct {
		share
		z, r lp.Var
	}
	cands := make([][][]cand, len(in.jobs))
	y := make([]map[int]lp.Var, len(in.jobs))
	arcTerms := map[int][]lp.Term{}
	swTerms := map[int][]lp.Term{}
	psTerms := map[int][]lp.Term{}
	streams := make([]map[int][]int, len(in.jobs))
	for j, jb := range in.jobs {
		y[j] = map[int]lp.Var{}
		streams[j] = map[int][]int{}
		for _, s := range in.progList {
			y[j][s] = m.AddVar(fmt.Sprintf("y_%d_%s", j, in.names[s]), 0, lp.Inf, false)
			streams[j][s] = in.shortestPath(dc, s, jb.ps, nil)
			if streams[j][s] == nil {
				continue
			}
			for _, ai := range in.pathArcs(streams[j][s]) {
				arcTerms[ai] = append(arcTerms[ai], lp.Term{Var: y[j][s], Coef: 1})
			}
			psTerms[jb.ps] = append(psTerms[jb.ps], lp.Term{Var: y[j][s], Coef: 1})
		}
		cands[j] = make([][]cand, len(jb.workers))
		for w := range jb.workers {
			var one, rate []lp.Term
			for _, sh := range in.milpCandidates(dc, j, w, k) {
				c := cand{share: sh, z: m.AddVar("z", 0, 1, true), r: m.AddVar("r", 0, jb.maxRate, false)}
				cands[j][w] = append(cands[j][w], c)
				one = append(one, lp.Term{Var: c.z, Coef: 1})
				rate = append(rate, lp.Term{Var: c.r, Coef: 1})
				m.AddConstraint("r<=Tz", []lp.Term{{Var: c.r, Coef: 1}, {Var: c.z, Coef: -jb.maxRate}}, lp.LE, 0)
				for _, ai := range in.pathArcs(sh.path) {
					arcTerms[ai] = append(arcTerms[ai], lp.Term{Var: c.r, Coef: 1})
				}
				if sh.node == jb.ps {
					psTerms[jb.ps] = append(psTerms[jb.ps], lp.Term{Var: c.r, Coef: 1})
				} else {
					swTerms[sh.node] = append(swTerms[sh.node], lp.Term{Var: c.r, Coef: 1})
					m.AddConstraint("r<=y", []lp.Term{{Var: c.r, Coef: 1}, {Var: y[j][sh.node], Coef: -1}}, lp.LE, 0)
				}
			}
			m.AddConstraint("one-node", one, lp.EQ, 1)
			m.AddConstraint("lambda", append([]lp.Term{{Var: lam, Coef: 1}}, negate(rate)...), lp.LE, 0)
		}
	}
	for _, ai := range sortedKeys(arcTerms) {
		if c := in.arcs[ai].cap; !math.IsInf(c, 1) {
			m.AddConstraint("arc", arcTerms[ai], lp.LE, c)
		}
	}
	for _, s := range sortedKeys(swTerms) {
		m.AddConstraint("switch", swTerms[s], lp.LE, in.capS[s])
	}
	for _, ps := range sortedKeys(psTerms) {
		var ingress float64
		for _, jb := range in.jobs {
			if jb.ps == ps {
				ingress = jb.ingress
			}
		}
		m.AddConstraint("ps", psTerms[ps], lp.LE, ingress)
	}
	m.SetObjective([]lp.Term{{Var: lam, Coef: 1}}, true)
	sol, err := lp.Solve(ctx, m, lp.Options{Backend: opt.LP})
	if err != nil {
		return nil, err
	}
	if !sol.Feasible {
		return nil, fmt.Errorf("link-aware MILP: %v", sol.Status)
	}
	a := in.newAssignment()
	for j := range in.jobs {
		for w, cs := range cands[j] {
			for _, c := range cs {
				if sol.Value(c.z) > 0.5 {
					a.shares[j][w] = []share{c.share}
					break
				}
			}
		}
		a.streams[j] = map[int][]int{}
		for s, p := range streams[j] {
			a.streams[j][s] = p
		}
	}
	in.completeStreams(a, dc, nil)
	plan := in.buildPlan(AlgoGRIDExact, "links", a)
	plan.BoundGbps = ptr(round9(sol.Value(lam)))
	plan.LPBackend = sol.Backend
	if sol.Status != lp.Optimal {
		plan.Notes = append(plan.Notes, "branch and bound hit its limit: the plan is the best found, not proven optimal")
	}
	return plan, nil
}
