package solver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/grid-ina/grid/harness/lp"
)

// searchBudget is how many evaluations grid-paths' local search may spend per start.
const searchBudget = 120

// classLPBudget bounds each stage of grid-paths' LP relaxation. The
// embedded simplex keeps a dense basis inverse, so on a k=16 fat-tree with
// several jobs it needs minutes where CBC needs a fraction of a second;
// past the budget grid-paths goes on from its other starts.
var classLPBudget = 3 * time.Second

// errLPBudget is an LP stage that ran out of its time budget.
var errLPBudget = errors.New("the LP ran out of its time budget")

// candidatesPerClass bounds the switches each class of workers may use in
// grid-paths' LP: the nearest ones and the ones with the most capacity.
const candidatesPerClass = 4

// workerClass is the workers of one job behind the same rack switch: in the
// link-aware model they are interchangeable, so the LP gives them one set of
// per-worker rates (the same symmetry argument as the paper model's LP).
type workerClass struct {
	job     int
	rack    int
	members []int // worker indices within the job
	cands   []share
}

// gridPaths is the link-aware GRID: an LP relaxation over worker classes
// with link capacities (each class may use its nearest and the largest
// switches and the PS, each over a shortest path), seeded randomized rounding
// as in R-GRIA, then local search on the evaluator. A second start from the
// paper model's exact solution, placed nearest first, goes through the same
// local search; the better plan wins.
func (in *Instance) gridPaths(ctx context.Context, opt Options) (*Plan, error) {
	r, err := in.gridPathsSearch(ctx, opt)
	if err != nil {
		return nil, err
	}
	plan := in.buildPlan(AlgoGRIDPaths, "links", r.best)
	plan.Seed = ptr(opt.Seed)
	plan.LPBackend = r.backend
	if r.lpSkipped == "" {
		plan.RelaxationGbps = ptr(round9(r.lpLambda))
		plan.Notes = append(plan.Notes, fmt.Sprintf("link-aware LP relaxation over %d worker classes: %.4g Gbps; best plan started from %s", r.classes, r.lpLambda, r.from))
	} else {
		plan.Notes = append(plan.Notes, fmt.Sprintf("no LP rounding start: %s; best plan started from %s", r.lpSkipped, r.from))
	}
	return plan, nil
}

type pathsResult struct {
	best     *assignment
	lambda   float64 // evaluated
	ceiling  float64 // paper-model upper bound
	lpLambda float64
	classes  int
	from     string
	backend  string
	// lpSkipped says why there is no LP rounding start ("" when there is one).
	lpSkipped string
}

func (in *Instance) gridPathsSearch(ctx context.Context, opt Options) (*pathsResult, error) {
	dc := distCache{}
	classes := in.classes(dc)
	r := &pathsResult{classes: len(classes), backend: string(opt.LP.Resolve())}
	lpLambda, weights, backend, err := in.classLP(ctx, dc, classes, opt.LP)
	switch {
	case errors.Is(err, errLPBudget) && ctx.Err() == nil:
		r.lpSkipped = fmt.Sprintf("the %s LP relaxation took more than %v", opt.LP.Resolve(), classLPBudget)
		slog.Info("grid-paths: no LP rounding start", "why", r.lpSkipped)
	case err != nil:
		return nil, err
	default:
		r.lpLambda, r.backend = lpLambda, backend
	}
	var a *assignment
	if r.lpSkipped == "" {
		a = in.roundClasses(classes, weights, opt.Seed)
	}
	// Each job alone in the paper's model is an upper bound on its lambda
	// with links and other jobs added; a start reaching it cannot improve.
	ceiling := math.Inf(1)
	for j := range in.jobs {
		lam, _ := in.paperExact(j)
		ceiling = math.Min(ceiling, lam)
	}
	var best *assignment
	var bestScore score
	from := ""
	try := func(name string, a *assignment) {
		ls := in.newSearch(dc, opt.paths())
		ls.ceiling, ls.ctx = ceiling, ctx
		s := ls.improve(a, searchBudget)
		if sc := scoreOf(in.evaluate(s)); best == nil || sc.better(bestScore) {
			best, from, bestScore = s, name, sc
		}
	}
	if a != nil {
		try("LP rounding", a)
	}
	try("the paper model's exact solution", in.paperSeed(dc))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Greedy packing only needs to look above the best rate found so far.
	a, err = in.packStart(ctx, dc, opt.paths(), bestScore.lambda, ceiling)
	if err != nil {
		return nil, err
	}
	if a != nil {
		try("link-aware greedy packing", a)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.best, r.lambda, r.ceiling, r.from = best, bestScore.lambda, ceiling, from
	return r, nil
}

// roundClasses is R-GRIA's randomized rounding on the class LP: every
// member of a class picks a candidate with probability proportional to its
// rate there (seeded), over its own access link and the class's path.
func (in *Instance) roundClasses(classes []workerClass, weights [][]float64, seed uint64) *assignment {
	rng := rand.New(rand.NewPCG(seed, 0x51ed27))
	a := in.newAssignment()
	for ci, c := range classes {
		total := 0.0
		for _, w := range weights[ci] {
			total += w
		}
		for _, w := range c.members {
			sh := c.cands[pick(rng, weights[ci], total)]
			path := append([]int{in.jobs[c.job].workers[w]}, sh.path[1:]...)
			a.shares[c.job][w] = []share{{node: sh.node, frac: 1, path: path}}
		}
	}
	return a
}

// paperSeed is the paper model's exact placement for every job (each job
// solved alone; the local search resolves shared switches), or nil when a
// job cannot use it.
func (in *Instance) paperSeed(dc distCache) *assignment {
	a := in.newAssignment()
	for j := range in.jobs {
		_, counts := in.paperExact(j)
		one := in.placeCounts(dc, j, counts)
		a.shares[j] = one.shares[j]
		a.streams[j] = one.streams[j]
	}
	return a
}

func (in *Instance) classes(dc distCache) []workerClass {
	var out []workerClass
	bal := in.newBalancer()
	byCap := append([]int(nil), in.progList...)
	sort.SliceStable(byCap, func(x, y int) bool { return in.capS[byCap[x]] > in.capS[byCap[y]] })
	for j, jb := range in.jobs {
		idx := map[int]int{}
		var cls []workerClass
		for w, wi := range jb.workers {
			rack := in.arcs[in.out[wi][0]].to
			i, ok := idx[rack]
			if !ok {
				i = len(cls)
				idx[rack] = i
				cls = append(cls, workerClass{job: j, rack: rack})
			}
			cls[i].members = append(cls[i].members, w)
		}
		for i := range cls {
			c := &cls[i]
			rep := jb.workers[c.members[0]]
			near := append([]int(nil), in.progList...)
			sort.SliceStable(near, func(x, y int) bool {
				dx, dy := in.dist(dc, near[x])[rep], in.dist(dc, near[y])[rep]
				return dx < dy || dx == dy && in.capS[near[x]] > in.capS[near[y]]
			})
			chosen := map[int]bool{}
			var nodes []int
			for _, list := range [][]int{near, byCap} {
				for i := 0; i < len(list) && i < candidatesPerClass; i++ {
					if !chosen[list[i]] && in.dist(dc, list[i])[rep] >= 0 {
						chosen[list[i]] = true
						nodes = append(nodes, list[i])
					}
				}
			}
			nodes = append(nodes, jb.ps)
			for _, n := range nodes {
				p := in.shortestPath(dc, rep, n, bal.choose)
				bal.add(in, p, float64(len(c.members)))
				c.cands = append(c.cands, share{node: n, frac: 1, path: p})
			}
		}
		out = append(out, cls...)
	}
	return out
}

// classLP is the link-aware relaxation over classes. It returns lambda and,
// per class, the per-worker rate on each candidate (the rounding weights).
func (in *Instance) classLP(ctx context.Context, dc distCache, classes []workerClass, backend lp.Backend) (float64, [][]float64, string, error) {
	m := lp.NewModel("grid-paths-relaxation")
	lam := m.AddVar("lambda", 0, lp.Inf, false)
	r := make([][]lp.Var, len(classes))
	y := make([]map[int]lp.Var, len(in.jobs))
	for j := range y {
		y[j] = map[int]lp.Var{}
	}
	arcTerms := map[int][]lp.Term{}
	swTerms := map[int][]lp.Term{}
	psTerms := map[int][]lp.Term{}
	stream := func(j, s int) lp.Var {
		if v, ok := y[j][s]; ok {
			return v
		}
		v := m.AddVar("y", 0, lp.Inf, false)
		y[j][s] = v
		for _, ai := range in.pathArcs(in.shortestPath(dc, s, in.jobs[j].ps, nil)) {
			arcTerms[ai] = append(arcTerms[ai], lp.Term{Var: v, Coef: 1})
		}
		psTerms[in.jobs[j].ps] = append(psTerms[in.jobs[j].ps], lp.Term{Var: v, Coef: 1})
		return v
	}
	// Results cross their job's tree at the rate of its fastest worker: z_j
	// is at least every class's rate.
	z := make([]lp.Var, len(in.jobs))
	for j, jb := range in.jobs {
		z[j] = m.AddVar("z", 0, jb.maxRate, false)
	}
	for ai, js := range in.staticResults() {
		for _, j := range js {
			arcTerms[ai] = append(arcTerms[ai], lp.Term{Var: z[j], Coef: 1})
		}
	}
	for ci, c := range classes {
		jb := in.jobs[c.job]
		n := float64(len(c.members))
		var sum []lp.Term
		for _, cand := range c.cands {
			v := m.AddVar("r", 0, jb.maxRate, false)
			r[ci] = append(r[ci], v)
			sum = append(sum, lp.Term{Var: v, Coef: 1})
			// The first arc is each member's own access link, which T already bounds.
			for _, ai := range in.pathArcs(cand.path)[1:] {
				arcTerms[ai] = append(arcTerms[ai], lp.Term{Var: v, Coef: n})
			}
			if cand.node == jb.ps {
				psTerms[jb.ps] = append(psTerms[jb.ps], lp.Term{Var: v, Coef: n})
				continue
			}
			swTerms[cand.node] = append(swTerms[cand.node], lp.Term{Var: v, Coef: n})
			m.AddConstraint("r<=y", []lp.Term{{Var: v, Coef: 1}, {Var: stream(c.job, cand.node), Coef: -1}}, lp.LE, 0)
		}
		m.AddConstraint("rate-cap", sum, lp.LE, jb.maxRate)
		m.AddConstraint("lambda", append([]lp.Term{{Var: lam, Coef: 1}}, negate(sum)...), lp.LE, 0)
		m.AddConstraint("results", append([]lp.Term{{Var: z[c.job], Coef: -1}}, sum...), lp.LE, 0)
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
	var psLoad []lp.Term
	for _, ps := range sortedKeys(psTerms) {
		psLoad = append(psLoad, psTerms[ps]...)
	}
	var rates []lp.Var
	for _, rs := range r {
		rates = append(rates, rs...)
	}
	sol, err := lexSolve(ctx, backend, m, lam, tieBreak(psLoad, rates), classLPBudget)
	if err != nil {
		return 0, nil, "", err
	}
	weights := make([][]float64, len(classes))
	for ci := range classes {
		for _, v := range r[ci] {
			weights[ci] = append(weights[ci], math.Max(0, sol.Value(v)))
		}
	}
	return sol.Objective, weights, sol.Backend, nil
}
