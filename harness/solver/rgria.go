package solver

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/grid-ina/grid/harness/lp"
)

// paperLP is the LP relaxation of GRIA (Eq. 1) for all jobs at once.
//
// In the paper's model the workers of a job are interchangeable (links are
// not modelled), so averaging any LP solution over permutations of a job's
// workers gives another solution with the same lambda: the relaxation has an
// optimal solution in which all workers of a job have the same rates r_j^s.
// Eliminating x (x_n^s = r_n^s / T) then leaves, per job j and node s in
// S ∪ {PS}, the per-worker rate r_j^s and per switch the stream rate y_j^s
// >= r_j^s. A stream costs only PS ingress, so y_j^s = r_j^s at an optimum
// and it is substituted:
//
//	max lambda  s.t.  lambda <= sum_s r_j^s <= T_j,
//	                  sum_j N_j r_j^s <= C_s,
//	                  sum_{j at PS p} (N_j r_j^PS + sum_s r_j^s) <= B_p.
//
// Its optimum equals the full per-worker relaxation's (a test checks this
// against CBC on the full model), with |jobs|·(|S|+1) variables and about
// |S| rows instead of |N|·|S|·2 variables, which is why it solves in
// milliseconds where PuLP takes minutes.
type paperLP struct {
	m      *lp.Model
	lambda lp.Var
	r      [][]lp.Var // [job][k]: k < len(progList) a switch, last the PS
}

func (in *Instance) buildPaperLP() *paperLP {
	m := lp.NewModel("gria-relaxation")
	p := &paperLP{m: m, lambda: m.AddVar("lambda", 0, lp.Inf, false)}
	S := len(in.progList)
	for j, jb := range in.jobs {
		r := make([]lp.Var, S+1)
		sum := []lp.Term{}
		for k := 0; k <= S; k++ {
			r[k] = m.AddVar(fmt.Sprintf("r_%d_%d", j, k), 0, jb.maxRate, false)
			sum = append(sum, lp.Term{Var: r[k], Coef: 1})
		}
		m.AddConstraint("rate-cap", sum, lp.LE, jb.maxRate)
		m.AddConstraint("lambda", append([]lp.Term{{Var: p.lambda, Coef: 1}}, negate(sum)...), lp.LE, 0)
		p.r = append(p.r, r)
	}
	for k, s := range in.progList {
		var terms []lp.Term
		for j, jb := range in.jobs {
			terms = append(terms, lp.Term{Var: p.r[j][k], Coef: float64(len(jb.workers))})
		}
		m.AddConstraint("switch-"+in.names[s], terms, lp.LE, in.capS[s])
	}
	for _, ps := range in.psHosts() {
		var terms []lp.Term
		var ingress float64
		for j, jb := range in.jobs {
			if jb.ps != ps {
				continue
			}
			ingress = jb.ingress
			terms = append(terms, p.psLoad(in, j)...)
		}
		m.AddConstraint("ps-"+in.names[ps], terms, lp.LE, ingress)
	}
	m.SetObjective([]lp.Term{{Var: p.lambda, Coef: 1}}, true)
	return p
}

// psLoad is job j's load on its PS: its unaggregated workers and one
// stream per switch at the rate of its workers there.
func (p *paperLP) psLoad(in *Instance, j int) []lp.Term {
	S := len(in.progList)
	terms := []lp.Term{{Var: p.r[j][S], Coef: float64(len(in.jobs[j].workers))}}
	for k := 0; k < S; k++ {
		terms = append(terms, lp.Term{Var: p.r[j][k], Coef: 1})
	}
	return terms
}

func negate(ts []lp.Term) []lp.Term {
	out := make([]lp.Term, len(ts))
	for i, t := range ts {
		out[i] = lp.Term{Var: t.Var, Coef: -t.Coef}
	}
	return out
}

// psHosts lists the distinct PS hosts of the jobs, in job order.
func (in *Instance) psHosts() []int {
	var out []int
	seen := map[int]bool{}
	for _, jb := range in.jobs {
		if !seen[jb.ps] {
			seen[jb.ps] = true
			out = append(out, jb.ps)
		}
	}
	return out
}

// lexSolve maximises lambda (m's objective), then picks one optimal
// solution independent of the backend: with lambda held at its optimum, the
// one minimising tie (the PS load plus a small, generic preference among
// the rate variables, which makes the optimum unique). The returned
// objective is the first stage's optimum. budget bounds each stage (0: no
// bound); a stage that runs out returns errLPBudget.
func lexSolve(ctx context.Context, backend lp.Backend, m *lp.Model, lambda lp.Var, tie []lp.Term, budget time.Duration) (*lp.Solution, error) {
	sol, err := lp.Solve(ctx, m, lp.Options{Backend: backend, TimeLimit: budget})
	if err != nil {
		return nil, err
	}
	if sol.Status == lp.Limit {
		return nil, fmt.Errorf("%s: %w", m.Name, errLPBudget)
	}
	if sol.Status != lp.Optimal {
		return nil, fmt.Errorf("%s is %v", m.Name, sol.Status)
	}
	best := sol.Value(lambda)
	// Within 1e-7: solvers hold constraints only to their tolerance.
	m.AddConstraint("lambda-optimal", []lp.Term{{Var: lambda, Coef: 1}}, lp.GE, best*(1-1e-7)-1e-9)
	m.SetObjective(tie, false)
	sol2, err := lp.Solve(ctx, m, lp.Options{Backend: backend, TimeLimit: budget})
	if err != nil {
		return nil, err
	}
	if sol2.Status == lp.Limit {
		return nil, fmt.Errorf("%s (tie-break stage): %w", m.Name, errLPBudget)
	}
	if sol2.Status != lp.Optimal {
		return nil, fmt.Errorf("%s (tie-break stage) is %v", m.Name, sol2.Status)
	}
	sol2.Objective = best
	return sol2, nil
}

// tieBreak is the PS load plus 1e-2 times a weight in [1, 2) per rate.
// The weights are generic (drawn from a fixed seed): weights in arithmetic
// progression tie whenever two jobs trade two switches (i1+k2 = i2+k1), and
// then each backend returns a different optimal vertex. They are large
// enough that two weights differ by more than a backend's optimality
// tolerance (CBC's 1e-7), which smaller ones do not.
func tieBreak(psLoad []lp.Term, rates []lp.Var) []lp.Term {
	out := append([]lp.Term(nil), psLoad...)
	rng := rand.New(rand.NewPCG(0x7469, 0x65))
	for _, v := range rates {
		out = append(out, lp.Term{Var: v, Coef: 1e-2 * (1 + rng.Float64())})
	}
	return out
}

// solvePaperLP solves the relaxation with lexSolve.
func (in *Instance) solvePaperLP(ctx context.Context, backend lp.Backend) (*paperLP, *lp.Solution, error) {
	p := in.buildPaperLP()
	var psLoad []lp.Term
	var rates []lp.Var
	S := len(in.progList)
	for j := range in.jobs {
		psLoad = append(psLoad, p.psLoad(in, j)...)
		rates = append(rates, p.r[j][:S]...)
	}
	sol, err := lexSolve(ctx, backend, p.m, p.lambda, tieBreak(psLoad, rates), 0)
	if err != nil {
		return nil, nil, err
	}
	return p, sol, nil
}

// rgria is R-GRIA (Alg. 1): solve the relaxation, then each worker picks node
// s with probability r^s / sum r (seeded), keeping the LP's rate; streams run
// at the largest rate of their workers. Paths are shortest paths (the paper's
// model has no links). The plan records the LP bound, the rates R-GRIA
// intends and the capacities they violate; the evaluator's lambda is what
// the network can actually carry with this assignment.
func (in *Instance) rgria(ctx context.Context, opt Options) (*Plan, error) {
	p, sol, err := in.solvePaperLP(ctx, opt.LP)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	a := in.newAssignment()
	a.intended = make([][]float64, len(in.jobs))
	dc := distCache{}
	bal := in.newBalancer()
	S := len(in.progList)
	for j, jb := range in.jobs {
		weights := make([]float64, S+1)
		total := 0.0
		for k := range weights {
			weights[k] = math.Max(0, sol.Value(p.r[j][k])) // clamp solver noise
			total += weights[k]
		}
		// The tie-break stage holds lambda only to within 1e-7 of the optimum;
		// a job at the optimum gets exactly the optimum, whatever the backend.
		if math.Abs(total-sol.Objective) <= 1e-6*sol.Objective {
			total = sol.Objective
		}
		a.intended[j] = make([]float64, len(jb.workers))
		for w, wi := range jb.workers {
			k := pick(rng, weights, total)
			node := jb.ps
			if k < S {
				node = in.progList[k]
			}
			path := in.shortestPath(dc, wi, node, bal.choose)
			bal.add(in, path, 1)
			a.shares[j][w] = []share{{node: node, frac: 1, path: path}}
			a.intended[j][w] = total
		}
	}
	in.completeStreams(a, dc, bal.choose)
	plan := in.buildPlan(AlgoGRID, "paper", a)
	plan.BoundGbps = ptr(round9(sol.Objective))
	plan.Seed = ptr(opt.Seed)
	plan.LPBackend = sol.Backend
	return plan, nil
}

// pick draws index k with probability weights[k]/total; the last index when total is 0.
func pick(rng *rand.Rand, weights []float64, total float64) int {
	if total <= 0 {
		return len(weights) - 1
	}
	u := rng.Float64() * total
	for k, w := range weights {
		if u < w {
			return k
		}
		u -= w
	}
	return len(weights) - 1
}
