package lp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

func backends(t *testing.T) []Backend {
	bs := []Backend{Embedded}
	if CBCAvailable() {
		bs = append(bs, CBC)
	} else {
		t.Log("cbc not installed (apt-get install coinor-cbc): testing the embedded backend only")
	}
	return bs
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*(1+math.Abs(a)+math.Abs(b)) }

func TestSmallLPReachesKnownOptimumOnEveryBackend(t *testing.T) {
	// max 3x + 2y  s.t. x + y <= 4, x + 3y <= 6, 0 <= x <= 3  ->  x=3, y=1, objective 11.
	m := NewModel("textbook")
	x := m.AddVar("x", 0, 3, false)
	y := m.AddVar("y", 0, Inf, false)
	m.AddConstraint("sum", []Term{{x, 1}, {y, 1}}, LE, 4)
	m.AddConstraint("mix", []Term{{x, 1}, {y, 3}}, LE, 6)
	m.SetObjective([]Term{{x, 3}, {y, 2}}, true)
	for _, b := range backends(t) {
		sol, err := Solve(context.Background(), m, Options{Backend: b})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if sol.Status != Optimal || !near(sol.Objective, 11) || !near(sol.Value(x), 3) || !near(sol.Value(y), 1) {
			t.Errorf("%s: got %v objective %g x=%g y=%g, want optimal 11 at (3,1)", b, sol.Status, sol.Objective, sol.Value(x), sol.Value(y))
		}
	}
}

func TestEqualityRangeAndFreeVariablesAreHonoured(t *testing.T) {
	// min x - z  s.t. x + y == 5, 1 <= y - z <= 2, z free with z >= -10 via a row, y <= 4.
	m := NewModel("ranges")
	x := m.AddVar("x", 0, Inf, false)
	y := m.AddVar("y", 0, 4, false)
	z := m.AddVar("z", math.Inf(-1), Inf, false)
	m.AddConstraint("eq", []Term{{x, 1}, {y, 1}}, EQ, 5)
	m.AddConstraint("lo", []Term{{y, 1}, {z, -1}}, GE, 1)
	m.AddConstraint("hi", []Term{{y, 1}, {z, -1}}, LE, 2)
	m.SetObjective([]Term{{x, 1}, {z, -1}}, false)
	// Best: y=4 (x=1), z as large as possible: z = y-1 = 3 -> objective 1-3 = -2.
	for _, b := range backends(t) {
		sol, err := Solve(context.Background(), m, Options{Backend: b})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if sol.Status != Optimal || !near(sol.Objective, -2) {
			t.Errorf("%s: got %v objective %g, want optimal -2", b, sol.Status, sol.Objective)
		}
	}
}

func TestInfeasibleAndUnboundedModelsAreReported(t *testing.T) {
	inf := NewModel("infeasible")
	a := inf.AddVar("a", 0, 1, false)
	inf.AddConstraint("big", []Term{{a, 1}}, GE, 2)
	inf.SetObjective([]Term{{a, 1}}, true)
	unb := NewModel("unbounded")
	b := unb.AddVar("b", 0, Inf, false)
	c := unb.AddVar("c", 0, Inf, false)
	unb.AddConstraint("diff", []Term{{b, 1}, {c, -1}}, LE, 1)
	unb.SetObjective([]Term{{b, 1}}, true)
	for _, be := range backends(t) {
		s, err := Solve(context.Background(), inf, Options{Backend: be})
		if err != nil || s.Status != Infeasible {
			t.Errorf("%s: infeasible model gave %v, %v", be, s, err)
		}
		s, err = Solve(context.Background(), unb, Options{Backend: be})
		if err != nil || s.Status != Unbounded {
			t.Errorf("%s: unbounded model gave %v, %v", be, s, err)
		}
	}
}

func TestKnapsackMILPFindsIntegerOptimum(t *testing.T) {
	// max 10a + 13b + 7c + 8d  s.t. 4a + 6b + 3c + 5d <= 10, binaries: best a+b = 23 (weight 10).
	m := NewModel("knapsack")
	vals := []float64{10, 13, 7, 8}
	wts := []float64{4, 6, 3, 5}
	var obj, cap []Term
	for i := range vals {
		v := m.AddVar("item", 0, 1, true)
		obj = append(obj, Term{v, vals[i]})
		cap = append(cap, Term{v, wts[i]})
	}
	m.AddConstraint("weight", cap, LE, 10)
	m.SetObjective(obj, true)
	relax, err := Solve(context.Background(), m.Relaxation(), Options{Backend: Embedded})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range backends(t) {
		sol, err := Solve(context.Background(), m, Options{Backend: b})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if sol.Status != Optimal || !near(sol.Objective, 23) {
			t.Errorf("%s: got %v objective %g, want 23", b, sol.Status, sol.Objective)
		}
		if sol.Objective > relax.Objective+1e-9 {
			t.Errorf("%s: integer optimum %g above the relaxation %g", b, sol.Objective, relax.Objective)
		}
	}
	if relax.Objective <= 23 {
		t.Errorf("relaxation %g should be fractional and above 23", relax.Objective)
	}
}

// randomLP is a feasible, bounded max-min style LP: maximise lambda subject to
// lambda <= sum of each group's rates, rates capped by random capacities.
func randomLP(seed uint64, groups, nodes int) *Model {
	rng := rand.New(rand.NewPCG(seed, 7))
	m := NewModel("random")
	lam := m.AddVar("lambda", 0, Inf, false)
	r := make([][]Var, groups)
	for g := range r {
		r[g] = make([]Var, nodes)
		for s := range r[g] {
			r[g][s] = m.AddVar("r", 0, 1+9*rng.Float64(), false)
		}
		terms := []Term{{lam, 1}}
		for _, v := range r[g] {
			terms = append(terms, Term{v, -1})
		}
		m.AddConstraint("lambda", terms, LE, 0)
	}
	for s := 0; s < nodes; s++ {
		var terms []Term
		for g := range r {
			terms = append(terms, Term{r[g][s], 1 + float64(rng.IntN(5))})
		}
		m.AddConstraint("cap", terms, LE, 5+50*rng.Float64())
	}
	var all []Term
	for g := range r {
		for _, v := range r[g] {
			all = append(all, Term{v, 1})
		}
	}
	m.AddConstraint("ingress", all, LE, 20+30*rng.Float64())
	m.SetObjective([]Term{{lam, 1}}, true)
	return m
}

func TestEmbeddedAndCBCAgreeOnLPOptimum(t *testing.T) {
	if !CBCAvailable() {
		t.Skip("cbc not installed (apt-get install coinor-cbc): cannot compare backends")
	}
	for seed := uint64(1); seed <= 8; seed++ {
		m := randomLP(seed, 3+int(seed), 4+int(seed)%5)
		e, err := Solve(context.Background(), m, Options{Backend: Embedded})
		if err != nil {
			t.Fatal(err)
		}
		c, err := Solve(context.Background(), m, Options{Backend: CBC})
		if err != nil {
			t.Fatal(err)
		}
		if e.Status != Optimal || c.Status != Optimal || !near(e.Objective, c.Objective) {
			t.Errorf("seed %d: embedded %v %.9g, cbc %v %.9g", seed, e.Status, e.Objective, c.Status, c.Objective)
		}
		if v := m.MaxViolation(c.Values); v > 1e-6 {
			t.Errorf("seed %d: cbc values violate the model by %g", seed, v)
		}
	}
}

func TestBadModelsAreRejectedWithTheirNames(t *testing.T) {
	m := NewModel("bad")
	m.AddVar("inverted", 2, 1, false)
	if _, err := Solve(context.Background(), m, Options{Backend: Embedded}); err == nil {
		t.Fatal("inverted bounds accepted")
	}
	m2 := NewModel("nan")
	v := m2.AddVar("v", 0, 1, false)
	m2.AddConstraint("row", []Term{{v, math.NaN()}}, LE, 1)
	if _, err := Solve(context.Background(), m2, Options{Backend: Embedded}); err == nil {
		t.Fatal("NaN coefficient accepted")
	}
	if _, err := ParseBackend("gurobi"); err == nil {
		t.Fatal("unknown backend accepted")
	}
}
