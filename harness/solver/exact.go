package solver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/grid-ina/grid/harness/lp"
)

// exact is grid-exact. When links cannot limit rates (only workers' and
// PSs' own links are finite, which T and the PS ingress bound) the paper's
// model is the whole story and is solved exactly: combinatorially for one
// job (paperExact), by counting MILPs for several (paperExactJobs). Otherwise, when the
// link-aware model (an integer per worker class, node and path) is small
// enough, it is solved exactly, links and results included (linkExact).
// Larger link-limited instances get grid-paths' search, started from the
// paper model's exact placement among others, and the paper model's optimum
// as an upper bound. The plan says exact only when its rate is proved
// optimal: every MILP decided, or the rate reaching the upper bound.
func (in *Instance) exact(ctx context.Context, opt Options) (*Plan, error) {
	limit := opt.milpLimit()
	k := opt.paths()
	dc := distCache{}
	if !in.linksCannotLimit() {
		// Count the MILP's integers before enumerating any path: at most k per class and node.
		classes := in.exactClasses()
		if len(classes)*(len(in.progList)+1)*k <= limit {
			in.addCandidates(classes, in.newRouteCache(dc, k))
			return in.linkExact(ctx, dc, classes, k, opt)
		}
		return in.boundedSearch(ctx, dc, opt, fmt.Sprintf("the link-aware MILP would need more than %d integer variables (--exact-limit)", limit))
	}
	var lam float64
	var a *assignment
	if len(in.jobs) == 1 {
		var counts []int
		lam, counts = in.paperExact(0)
		a = in.placeCounts(dc, 0, counts)
	} else {
		var err error
		lam, a, err = in.paperExactJobs(ctx, dc, opt.LP, 0)
		if errors.Is(err, errUndecided) {
			return in.boundedSearch(ctx, dc, opt, err.Error())
		}
		if err != nil {
			return nil, err
		}
	}
	plan := in.buildPlan(AlgoGRIDExact, "paper", a)
	plan.BoundGbps = ptr(round9(lam))
	plan.Exact = ptr(plan.LambdaGbps >= lam*(1-1e-9))
	plan.Notes = append(plan.Notes, "exact optimum of the paper's model, which is the whole story here: the only finite links are workers' and PSs' own, which T and the PS ingress already bound; workers placed on the chosen switches nearest first")
	return plan, nil
}

// linksCannotLimit says whether every finite link is a worker's access
// link or a PS's link at least as fast as its ingress. A worker's link
// carries its gradients one way and its job's results the other, both at
// most T, which is at most the link's bandwidth; a PS's link carries at
// most its ingress up and its jobs' results down, which are no more than
// the streams that came up.
func (in *Instance) linksCannotLimit() bool {
	roomy := make([]float64, len(in.names)) // links of these hosts at least this fast cannot limit
	for i := range roomy {
		roomy[i] = math.Inf(1)
	}
	for _, jb := range in.jobs {
		for _, w := range jb.workers {
			roomy[w] = 0
		}
		roomy[jb.ps] = min(roomy[jb.ps], jb.ingress)
	}
	for _, a := range in.arcs {
		if !math.IsInf(a.cap, 1) && a.cap < roomy[a.from] && a.cap < roomy[a.to] {
			return false
		}
	}
	return true
}

// boundedSearch is grid-exact where no exact method fits: grid-paths'
// search (which also starts from the paper model's exact placement) and
// an upper bound, the paper model's optimum (which ignores links). The
// plan is exact only when its rate reaches the bound.
func (in *Instance) boundedSearch(ctx context.Context, dc distCache, opt Options, why string) (*Plan, error) {
	r, err := in.gridPathsSearch(ctx, opt)
	if err != nil {
		return nil, err
	}
	bound := r.ceiling
	if len(in.jobs) > 1 {
		// The jobs share switches: their joint paper-model optimum is a tighter bound, when proved.
		if lam, _, err := in.paperExactJobs(ctx, dc, opt.LP, r.lambda); err == nil {
			bound = math.Min(bound, lam)
		} else if ctx.Err() != nil {
			return nil, err
		}
	}
	plan := in.buildPlan(AlgoGRIDExact, "links", r.best)
	plan.BoundGbps = ptr(round9(bound))
	plan.LPBackend = r.backend
	proved := plan.LambdaGbps >= bound*(1-1e-9)
	plan.Exact = ptr(proved)
	if proved {
		plan.Notes = append(plan.Notes, fmt.Sprintf("exact: the plan reaches the paper model's optimum %.4g Gbps, an upper bound with links; %s", bound, why))
	} else {
		plan.Notes = append(plan.Notes, fmt.Sprintf("not proved exact: %s, so this is grid-paths' search (best start: %s) under the paper model's upper bound %.4g Gbps", why, r.from, bound))
	}
	return plan, nil
}

// errUndecided is a MILP that stopped (at its limit, or cancelled) without
// saying whether a rate is feasible: never read as infeasible.
var errUndecided = errors.New("a feasibility MILP stopped at its limit undecided")

// milpDeadline bounds each of grid-exact's feasibility MILPs and
// exactBudget all of the link-aware ones, so the algorithm stays
// interactive; a MILP that runs out is undecided.
var (
	milpDeadline = 3 * time.Second
	exactBudget  = 5 * time.Second
)

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

var errNoneFeasible = errors.New("no candidate rate is feasible")

// maxMinBisect finds the largest candidate rate at which feasible says yes.
// The max-min optimum lambda* is a rate at which every worker can send
// exactly lambda*, and then some resource of capacity c carries q flows with
// q*lambda* = c, or lambda* = T: so lambda* is one of the candidates, and as
// feasibility only gets easier at lower rates a bisection finds it.
func maxMinBisect(cands []float64, feasible func(lambda float64) (bool, error)) (float64, error) {
	sort.Sort(sort.Reverse(sort.Float64Slice(cands)))
	uniq := cands[:0]
	for _, c := range cands {
		if c > 0 && !math.IsInf(c, 1) && (len(uniq) == 0 || c < uniq[len(uniq)-1]*(1-1e-12)) {
			uniq = append(uniq, c)
		}
	}
	lo, hi := 0, len(uniq) // answer index in [lo, hi); uniq[hi] is known feasible once set
	best := -1
	for lo < hi {
		mid := (lo + hi) / 2
		ok, err := feasible(uniq[mid])
		if err != nil {
			return 0, err
		}
		if ok {
			best, hi = mid, mid
		} else {
			lo = mid + 1
		}
	}
	if best < 0 {
		return 0, errNoneFeasible
	}
	return uniq[best], nil
}

// maxMinGallop is maxMinBisect for when the optimum is likely near the
// lowest candidate (a good heuristic supplied the lower bound): it probes
// the 1st, 2nd, 4th, 8th... lowest candidate until one is infeasible, then
// bisects between the last feasible and that one.
func maxMinGallop(cands []float64, feasible func(lambda float64) (bool, error)) (float64, error) {
	sort.Float64s(cands)
	uniq := cands[:0]
	for _, c := range cands {
		if len(uniq) == 0 || c > uniq[len(uniq)-1]*(1+1e-12) {
			uniq = append(uniq, c)
		}
	}
	good, bad := -1, len(uniq) // uniq[good] feasible, uniq[bad] infeasible
	for step := 1; ; step *= 2 {
		i := min(good+step, len(uniq)-1)
		ok, err := feasible(uniq[i])
		if err != nil {
			return 0, err
		}
		if !ok {
			bad = i
			break
		}
		good = i
		if i == len(uniq)-1 {
			break
		}
	}
	for bad-good > 1 {
		mid := (good + bad) / 2
		ok, err := feasible(uniq[mid])
		if err != nil {
			return 0, err
		}
		if ok {
			good = mid
		} else {
			bad = mid
		}
	}
	if good < 0 {
		return 0, errNoneFeasible
	}
	return uniq[good], nil
}

// slotsAt is how many flows of rate lambda fit into capacity c.
func slotsAt(c, lambda float64) float64 {
	if math.IsInf(c, 1) {
		return math.Inf(1)
	}
	return math.Floor(c/lambda + 1e-9)
}

// rateCandidates lists T of every job and c/q for every finite capacity c
// (links, switches, PS ingress) and q = 1..flows.
func (in *Instance) rateCandidates(withLinks bool) []float64 {
	flows := in.Workers() + len(in.progList)*len(in.jobs)
	var caps []float64
	for _, s := range in.progList {
		caps = append(caps, in.capS[s])
	}
	for _, jb := range in.jobs {
		caps = append(caps, jb.ingress)
	}
	if withLinks {
		seen := map[float64]bool{}
		for _, a := range in.arcs {
			if !math.IsInf(a.cap, 1) && !seen[a.cap] {
				seen[a.cap] = true
				caps = append(caps, a.cap)
			}
		}
	}
	tmin := math.Inf(1)
	for _, jb := range in.jobs {
		tmin = math.Min(tmin, jb.maxRate)
	}
	out := []float64{tmin}
	for _, c := range caps {
		for q := 1; q <= flows; q++ {
			if v := c / float64(q); v <= tmin {
				out = append(out, v)
			}
		}
	}
	return out
}

// exactClass is the workers of one job behind the same switch (hosts with a
// single link): in the link-aware model they differ only in their own access
// link, which carries exactly their one flow, so an assignment is fully
// described by how many of them take each (node, path) candidate.
type exactClass struct {
	job     int
	members []int   // worker indices within the job
	cands   []share // paths start at the first member
}

// exactClasses groups workers into classes, without candidates yet.
func (in *Instance) exactClasses() []exactClass {
	var out []exactClass
	for j, jb := range in.jobs {
		idx := map[int]int{}
		for w, wi := range jb.workers {
			key := -1 - wi // a multi-homed host is a class of its own
			if len(in.out[wi]) == 1 {
				key = in.arcs[in.out[wi][0]].to
			}
			c, ok := idx[key]
			if !ok {
				c = len(out)
				idx[key] = c
				out = append(out, exactClass{job: j})
			}
			out[c].members = append(out[c].members, w)
		}
	}
	return out
}

// addCandidates lists each class's candidates: every programmable switch
// and the PS, over up to k shortest paths each.
func (in *Instance) addCandidates(classes []exactClass, rc *routeCache) {
	for c := range classes {
		cl := &classes[c]
		jb := in.jobs[cl.job]
		rep := jb.workers[cl.members[0]]
		for _, node := range append(append([]int(nil), in.progList...), jb.ps) {
			ps, _ := rc.get(rep, node)
			for _, p := range ps {
				cl.cands = append(cl.cands, share{node: node, frac: 1, path: p})
			}
		}
	}
}

// linkExact solves the link-aware GRIA exactly over each worker's k
// shortest paths to every node: bisection over the candidate rates, each a
// feasibility MILP in which every worker sends exactly lambda — integer n per
// worker class and (node, path) candidate, binary u per job and switch for
// its stream to the PS (on the shortest path) — so capacities become flow
// counts floor(c/lambda). Without big-M rate variables the relaxations are
// tight; grid-paths' plan bounds the search from below and the paper model's
// optimum from above, so few MILPs are needed.
func (in *Instance) linkExact(ctx context.Context, dc distCache, classes []exactClass, k int, opt Options) (*Plan, error) {
	streams := make([]map[int][]int, len(in.jobs))
	for j, jb := range in.jobs {
		streams[j] = map[int][]int{}
		for _, s := range in.progList {
			if p := in.shortestPath(dc, s, jb.ps, nil); p != nil {
				streams[j][s] = p
			}
		}
	}
	var found *assignment
	backend := ""
	milps := 0
	results := in.staticResults()
	stop := time.Now().Add(exactBudget)
	feasible := func(lambda float64) (bool, error) {
		left := time.Until(stop)
		if left <= 0 {
			return false, fmt.Errorf("at %.4g Gbps: grid-exact's %v are spent: %w", lambda, exactBudget, errUndecided)
		}
		// Every arc of a job's result tree carries one result flow.
		for ai, js := range results {
			if slotsAt(in.arcs[ai].cap, lambda) < float64(len(js)) {
				return false, nil
			}
		}
		milps++
		m := lp.NewModel("gria-links-feasibility")
		arcTerms := map[int][]lp.Term{}
		swTerms := map[int][]lp.Term{}
		psTerms := map[int][]lp.Term{}
		u := make([]map[int]lp.Var, len(in.jobs))
		for j, jb := range in.jobs {
			if lambda > jb.maxRate*(1+1e-12) {
				return false, nil
			}
			u[j] = map[int]lp.Var{}
			for _, s := range sortedKeys(streams[j]) {
				u[j][s] = m.AddVar("u", 0, 1, true)
				for _, ai := range in.pathArcs(streams[j][s]) {
					arcTerms[ai] = append(arcTerms[ai], lp.Term{Var: u[j][s], Coef: 1})
				}
				psTerms[jb.ps] = append(psTerms[jb.ps], lp.Term{Var: u[j][s], Coef: 1})
			}
		}
		n := make([][]lp.Var, len(classes))
		jobSw := map[[2]int][]lp.Term{} // (job, switch) -> its workers there
		for c, cl := range classes {
			jb := in.jobs[cl.job]
			size := float64(len(cl.members))
			for _, w := range cl.members {
				if slotsAt(in.arcs[in.out[jb.workers[w]][0]].cap, lambda) < 1 {
					return false, nil // a worker's own link is slower than lambda
				}
			}
			var all []lp.Term
			for _, cand := range cl.cands {
				v := m.AddVar("n", 0, size, true)
				n[c] = append(n[c], v)
				all = append(all, lp.Term{Var: v, Coef: 1})
				for _, ai := range in.pathArcs(cand.path)[1:] { // the access link is each member's own
					arcTerms[ai] = append(arcTerms[ai], lp.Term{Var: v, Coef: 1})
				}
				if cand.node == jb.ps {
					psTerms[jb.ps] = append(psTerms[jb.ps], lp.Term{Var: v, Coef: 1})
					continue
				}
				swTerms[cand.node] = append(swTerms[cand.node], lp.Term{Var: v, Coef: 1})
				jobSw[[2]int{cl.job, cand.node}] = append(jobSw[[2]int{cl.job, cand.node}], lp.Term{Var: v, Coef: 1})
				m.AddConstraint("n<=|c|u", []lp.Term{{Var: v, Coef: 1}, {Var: u[cl.job][cand.node], Coef: -min(size, slotsAt(in.capS[cand.node], lambda))}}, lp.LE, 0)
			}
			m.AddConstraint("all-placed", all, lp.EQ, size)
		}
		for _, ai := range sortedKeys(arcTerms) {
			if slots := slotsAt(in.arcs[ai].cap, lambda); !math.IsInf(slots, 1) {
				m.AddConstraint("arc", arcTerms[ai], lp.LE, slots-float64(len(results[ai])))
			}
		}
		for _, sw := range sortedKeys(swTerms) {
			m.AddConstraint("switch", swTerms[sw], lp.LE, slotsAt(in.capS[sw], lambda))
		}
		// A job's workers at a switch need its stream open, and they are
		// at most the switch's slots, and its own hosts plus what its links
		// from other switches can bring. Implied by the other constraints
		// for integer u, this tightens the relaxation: a fractional u no
		// longer opens a whole switch's worth of workers.
		for j := range in.jobs {
			local := map[int]float64{}
			for _, wi := range in.jobs[j].workers {
				for _, a := range in.out[wi] {
					local[in.arcs[a].to]++
				}
			}
			for _, sw := range sortedKeys(u[j]) {
				if ts := jobSw[[2]int{j, sw}]; len(ts) > 0 {
					reach := local[sw]
					for _, a := range in.out[sw] {
						if back := in.arcFrom(in.arcs[a].to, sw); in.sw[in.arcs[a].to] {
							reach += max(0, slotsAt(in.arcs[back].cap, lambda)-float64(len(results[back])))
						}
					}
					cap := min(float64(len(in.jobs[j].workers)), slotsAt(in.capS[sw], lambda), reach)
					m.AddConstraint("job-switch", append(ts, lp.Term{Var: u[j][sw], Coef: -cap}), lp.LE, 0)
				}
			}
		}
		for _, ps := range sortedKeys(psTerms) {
			m.AddConstraint("ps", psTerms[ps], lp.LE, slotsAt(in.ingressOf(ps), lambda))
		}
		sol, err := lp.Solve(ctx, m, lp.Options{Backend: opt.LP, TimeLimit: min(milpDeadline, left)})
		if err != nil {
			return false, err
		}
		backend = sol.Backend
		if sol.Status == lp.Limit && !sol.Feasible {
			return false, fmt.Errorf("link-aware feasibility at %.4g Gbps: %w", lambda, errUndecided)
		}
		if !sol.Feasible {
			return false, nil
		}
		a := in.newAssignment()
		for c, cl := range classes {
			jb := in.jobs[cl.job]
			next := 0
			for i, v := range n[c] {
				for range int(math.Round(sol.Value(v))) {
					w := cl.members[next]
					next++
					path := append([]int{jb.workers[w]}, cl.cands[i].path[1:]...)
					a.shares[cl.job][w] = []share{{node: cl.cands[i].node, frac: 1, path: path}}
				}
			}
		}
		for j := range in.jobs {
			for s, p := range streams[j] {
				a.streams[j][s] = p
			}
		}
		found = a
		return true, nil
	}
	// grid-paths' plan is feasible at its lambda and the paper model's optimum
	// bounds lambda from above: only the candidates between need a MILP.
	heur, err := in.gridPathsSearch(ctx, opt)
	if err != nil {
		return nil, err
	}
	var rates []float64
	for _, c := range in.rateCandidates(true) {
		if c > heur.lambda*(1+1e-9) && c <= heur.ceiling*(1+1e-9) {
			rates = append(rates, c)
		}
	}
	best, lam := heur.best, heur.lambda
	proved, why := true, ""
	if len(rates) > 0 {
		l, err := maxMinGallop(rates, func(l float64) (bool, error) {
			ok, err := feasible(l)
			if ok {
				best = found
			}
			return ok, err
		})
		switch {
		case errors.Is(err, errNoneFeasible):
		case errors.Is(err, errUndecided):
			// Keep the best plan found; above it some rate is undecided.
			proved, why = false, err.Error()
			lam = math.Max(lam, in.evaluate(best).lambda)
		case err != nil:
			return nil, fmt.Errorf("link-aware exact: %w", err)
		default:
			lam = l
		}
	}
	in.completeStreams(best, dc, nil)
	plan := in.buildPlan(AlgoGRIDExact, "links", best)
	plan.LPBackend = backend
	if proved {
		plan.BoundGbps = ptr(round9(lam))
		plan.Notes = append(plan.Notes, fmt.Sprintf("exact optimum of the link-aware model over %d shortest paths per worker and node; %d worker classes, %d feasibility MILPs solved between grid-paths' %.4g and the paper model's %.4g Gbps", k, len(classes), milps, heur.lambda, heur.ceiling))
	} else {
		plan.BoundGbps = ptr(round9(heur.ceiling))
		plan.Notes = append(plan.Notes, fmt.Sprintf("not proved exact: %s; the best plan found is below the paper model's upper bound %.4g Gbps", why, heur.ceiling))
	}
	plan.Exact = ptr(proved && plan.LambdaGbps >= lam*(1-1e-9))
	return plan, nil
}

// ingressOf is the ingress of a PS host.
func (in *Instance) ingressOf(ps int) float64 {
	for _, jb := range in.jobs {
		if jb.ps == ps {
			return jb.ingress
		}
	}
	return 0
}

// paperExactJobs solves the paper's model exactly for several jobs sharing
// switches: bisection over candidate rates, each a small MILP on counts —
// n_js workers of job j at switch s, u_js whether j streams from s —
// with sum_j n_js <= floor(C_s/lambda) and, per PS host, its unaggregated
// workers plus streams <= floor(B/lambda).
//
// Only rates above floor are tried (a rate known feasible); when none is
// feasible it returns floor and no assignment.
func (in *Instance) paperExactJobs(ctx context.Context, dc distCache, backend lp.Backend, floor float64) (float64, *assignment, error) {
	var counts [][]int
	var cands []float64
	for _, c := range in.rateCandidates(false) {
		if c > floor*(1+1e-9) {
			cands = append(cands, c)
		}
	}
	lam, err := maxMinBisect(cands, func(lambda float64) (bool, error) {
		m := lp.NewModel("gria-jobs-feasibility")
		n := make([][]lp.Var, len(in.jobs))
		psTerms := map[int][]lp.Term{}
		psConst := map[int]float64{}
		for j, jb := range in.jobs {
			if lambda > jb.maxRate*(1+1e-12) {
				return false, nil
			}
			N := float64(len(jb.workers))
			var all []lp.Term
			for _, s := range in.progList {
				// A switch holds at most its slots (and one that holds a
				// single worker saves nothing): the tight big-M keeps the
				// relaxation close to the integers.
				slots := min(N, slotsAt(in.capS[s], lambda))
				if slots < 2 {
					slots = 0
				}
				v := m.AddVar("n", 0, slots, true)
				u := m.AddVar("u", 0, 1, true)
				n[j] = append(n[j], v)
				all = append(all, lp.Term{Var: v, Coef: 1})
				m.AddConstraint("n<=Nu", []lp.Term{{Var: v, Coef: 1}, {Var: u, Coef: -slots}}, lp.LE, 0)
				psTerms[jb.ps] = append(psTerms[jb.ps], lp.Term{Var: u, Coef: 1}, lp.Term{Var: v, Coef: -1})
			}
			m.AddConstraint("at-most-all", all, lp.LE, N)
			psConst[jb.ps] += N
		}
		for k, s := range in.progList {
			var terms []lp.Term
			for j := range in.jobs {
				terms = append(terms, lp.Term{Var: n[j][k], Coef: 1})
			}
			m.AddConstraint("switch", terms, lp.LE, slotsAt(in.capS[s], lambda))
		}
		for _, ps := range sortedKeys(psTerms) {
			m.AddConstraint("ps", psTerms[ps], lp.LE, slotsAt(in.ingressOf(ps), lambda)-psConst[ps])
		}
		sol, err := lp.Solve(ctx, m, lp.Options{Backend: backend, TimeLimit: milpDeadline})
		if err != nil {
			return false, err
		}
		if sol.Status == lp.Limit && !sol.Feasible {
			return false, fmt.Errorf("at %.4g Gbps: %w", lambda, errUndecided)
		}
		if !sol.Feasible {
			return false, nil
		}
		counts = make([][]int, len(in.jobs))
		for j := range in.jobs {
			for _, v := range n[j] {
				counts[j] = append(counts[j], int(math.Round(sol.Value(v))))
			}
		}
		return true, nil
	})
	if errors.Is(err, errNoneFeasible) && floor > 0 {
		return floor, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("paper-model exact for %d jobs: %w", len(in.jobs), err)
	}
	a := in.newAssignment()
	for j := range in.jobs {
		one := in.placeCounts(dc, j, counts[j])
		a.shares[j], a.streams[j] = one.shares[j], one.streams[j]
	}
	return lam, a, nil
}
