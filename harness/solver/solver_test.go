package solver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

func instanceOf(t *testing.T, tp *topo.Topology) *Instance {
	t.Helper()
	jobs, err := workload.Default(tp)
	if err != nil {
		t.Fatal(err)
	}
	return mustInstance(t, tp, jobs)
}

func scenarioInstance(t *testing.T, sc Scenario, workers int, seed uint64) *Instance {
	t.Helper()
	tp, jobs, err := sc.Build(workers, seed)
	if err != nil {
		t.Fatal(err)
	}
	return mustInstance(t, tp, jobs)
}

func mustInstance(t *testing.T, tp *topo.Topology, jobs []workload.Job) *Instance {
	t.Helper()
	in, err := NewInstance(tp, jobs)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// fullPaperLP is GRIA's relaxation exactly as Eq. 1 writes it, one x, r per
// worker and node: the model the paper hands to PuLP.
func fullPaperLP(in *Instance) *lp.Model {
	m := lp.NewModel("gria-full")
	lam := m.AddVar("lambda", 0, lp.Inf, false)
	jb := in.jobs[0]
	S := len(in.progList)
	y := make([]lp.Var, S)
	for k := range y {
		y[k] = m.AddVar("y", 0, lp.Inf, false)
	}
	swTerms := make([][]lp.Term, S)
	var psTerms []lp.Term
	for k := range y {
		psTerms = append(psTerms, lp.Term{Var: y[k], Coef: 1})
	}
	for range jb.workers {
		var one, rate []lp.Term
		for k := 0; k <= S; k++ {
			x := m.AddVar("x", 0, 1, false)
			r := m.AddVar("r", 0, lp.Inf, false)
			one = append(one, lp.Term{Var: x, Coef: 1})
			rate = append(rate, lp.Term{Var: r, Coef: -1})
			m.AddConstraint("r<=xT", []lp.Term{{Var: r, Coef: 1}, {Var: x, Coef: -jb.maxRate}}, lp.LE, 0)
			if k < S {
				m.AddConstraint("r<=y", []lp.Term{{Var: r, Coef: 1}, {Var: y[k], Coef: -1}}, lp.LE, 0)
				swTerms[k] = append(swTerms[k], lp.Term{Var: r, Coef: 1})
			} else {
				psTerms = append(psTerms, lp.Term{Var: r, Coef: 1})
			}
		}
		m.AddConstraint("one", one, lp.EQ, 1)
		m.AddConstraint("lambda", append([]lp.Term{{Var: lam, Coef: 1}}, rate...), lp.LE, 0)
	}
	for k, s := range in.progList {
		m.AddConstraint("cap", swTerms[k], lp.LE, in.capS[s])
	}
	m.AddConstraint("ps", psTerms, lp.LE, jb.ingress)
	m.SetObjective([]lp.Term{{Var: lam, Coef: 1}}, true)
	return m
}

func TestSymmetricGRIARelaxationEqualsThePapersFullLP(t *testing.T) {
	backend := lp.Embedded
	if lp.CBCAvailable() {
		backend = lp.CBC
	} else {
		t.Log("cbc not installed: solving the full LP with the embedded backend")
	}
	cases := map[string]*Instance{
		"fig1":             fig1(t),
		"testbed":          instanceOf(t, topo.Testbed()),
		"fattree-tor-24":   scenarioInstance(t, PaperScenarios()[0], 24, 3),
		"leafspine-r20-40": scenarioInstance(t, PaperScenarios()[3], 40, 4),
	}
	for name, in := range cases {
		_, reduced, err := in.solvePaperLP(context.Background(), lp.Embedded)
		if err != nil {
			t.Fatal(err)
		}
		full, err := lp.Solve(context.Background(), fullPaperLP(in), lp.Options{Backend: backend})
		if err != nil {
			t.Fatal(err)
		}
		if !approx(reduced.Objective, full.Objective) {
			t.Errorf("%s: reduced relaxation %g, full relaxation (%s) %g", name, reduced.Objective, full.Backend, full.Objective)
		}
	}
}

func TestLPBackendsGiveTheSameBoundsAndPlans(t *testing.T) {
	if !lp.CBCAvailable() {
		t.Skip("cbc not installed (apt-get install coinor-cbc): cannot compare LP backends")
	}
	for i, sc := range PaperScenarios() {
		in := scenarioInstance(t, sc, 60+40*i, uint64(i+1))
		for _, algo := range []string{AlgoGRID, AlgoGRIDPaths} {
			e, err := Solve(context.Background(), in, algo, Options{Seed: 1, LP: lp.Embedded})
			if err != nil {
				t.Fatal(err)
			}
			c, err := Solve(context.Background(), in, algo, Options{Seed: 1, LP: lp.CBC})
			if err != nil {
				t.Fatal(err)
			}
			if algo == AlgoGRID && !approx(*e.BoundGbps, *c.BoundGbps) {
				t.Errorf("%s %s: LP bound embedded %g, cbc %g", sc.Name, algo, *e.BoundGbps, *c.BoundGbps)
			}
			if algo == AlgoGRIDPaths && !approx(*e.RelaxationGbps, *c.RelaxationGbps) {
				t.Errorf("%s %s: LP relaxation embedded %g, cbc %g", sc.Name, algo, *e.RelaxationGbps, *c.RelaxationGbps)
			}
			// R-GRIA's tie-break stage makes its rounding independent of the
			// backend. grid-paths' class LP has optima that differ by less
			// than CBC's tolerance, so its roundings may differ; the plans it
			// ends with must still be equally good.
			e.LPBackend, c.LPBackend = "", ""
			if algo == AlgoGRID && planJSON(t, e) != planJSON(t, c) {
				t.Errorf("%s %s: the plan depends on the LP backend (lambda %g embedded, %g cbc)", sc.Name, algo, e.LambdaGbps, c.LambdaGbps)
			}
			if !approx(e.LambdaGbps, c.LambdaGbps) {
				t.Errorf("%s %s: lambda %g with the embedded backend, %g with cbc", sc.Name, algo, e.LambdaGbps, c.LambdaGbps)
			}
		}
	}
}

func TestExactOptimumNeverExceedsTheLPBound(t *testing.T) {
	cases := map[string]*Instance{"fig1": fig1(t), "testbed": instanceOf(t, topo.Testbed())}
	for i, sc := range PaperScenarios() {
		cases[sc.Name] = scenarioInstance(t, sc, 30+50*i, uint64(10+i))
	}
	for name, in := range cases {
		g, err := Solve(context.Background(), in, AlgoGRID, Options{Seed: 1, LP: lp.Embedded})
		if err != nil {
			t.Fatal(err)
		}
		x, err := Solve(context.Background(), in, AlgoGRIDExact, Options{LP: lp.Embedded})
		if err != nil {
			t.Fatal(err)
		}
		if *x.BoundGbps > *g.BoundGbps*(1+1e-9) {
			t.Errorf("%s: exact %g above the LP bound %g", name, *x.BoundGbps, *g.BoundGbps)
		}
		if x.LambdaGbps > *x.BoundGbps*(1+1e-9) {
			t.Errorf("%s: evaluated lambda %g above the exact optimum %g", name, x.LambdaGbps, *x.BoundGbps)
		}
	}
}

func TestDefaultAlgorithmReachesNinetyPercentOfExactInThePapersModel(t *testing.T) {
	for i, sc := range PaperScenarios() {
		for _, n := range []int{24, 120} {
			in := scenarioInstance(t, sc, n, uint64(20+i)).WithoutLinkLimits()
			x, err := Solve(context.Background(), in, AlgoGRIDExact, Options{LP: lp.Embedded})
			if err != nil {
				t.Fatal(err)
			}
			d, err := Solve(context.Background(), in, DefaultAlgorithm, Options{Seed: 1, LP: lp.Embedded})
			if err != nil {
				t.Fatal(err)
			}
			if d.LambdaGbps < 0.9**x.BoundGbps {
				t.Errorf("%s, %d workers: %s reaches %g Gbps, under 90%% of the exact %g", sc.Name, n, DefaultAlgorithm, d.LambdaGbps, *x.BoundGbps)
			}
		}
	}
}

func planJSON(t *testing.T, p *Plan) string {
	t.Helper()
	p.SolveSeconds = 0
	var b bytes.Buffer
	if err := p.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestSeedsReproduceRoundedPlans(t *testing.T) {
	in := scenarioInstance(t, PaperScenarios()[1], 60, 5)
	for _, algo := range []string{AlgoGRID, AlgoGRIDPaths} {
		p1, _ := Solve(context.Background(), in, algo, Options{Seed: 7, LP: lp.Embedded})
		p2, _ := Solve(context.Background(), in, algo, Options{Seed: 7, LP: lp.Embedded})
		if planJSON(t, p1) != planJSON(t, p2) {
			t.Errorf("%s: seed 7 gave two different plans", algo)
		}
	}
	a, _ := Solve(context.Background(), in, AlgoGRID, Options{Seed: 7, LP: lp.Embedded})
	b, _ := Solve(context.Background(), in, AlgoGRID, Options{Seed: 8, LP: lp.Embedded})
	if planJSON(t, a) == planJSON(t, b) {
		t.Error("seeds 7 and 8 gave the same R-GRIA rounding of 60 workers")
	}
}

func TestRGRIAReportsTheViolationsOfItsRounding(t *testing.T) {
	p, err := Solve(context.Background(), fig1(t), AlgoGRID, Options{Seed: 1, LP: lp.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	if p.IntendedLambdaGbps == nil || !approx(*p.IntendedLambdaGbps, *p.BoundGbps) {
		t.Fatalf("intended lambda %v, want the LP bound %g", p.IntendedLambdaGbps, *p.BoundGbps)
	}
	if len(p.Violations) == 0 || p.MaxViolation() <= 1 {
		t.Fatalf("rounding at the LP rates on Fig. 1 must overload something; got %+v", p.Violations)
	}
	if p.LambdaGbps > *p.IntendedLambdaGbps {
		t.Errorf("evaluated lambda %g above the intended %g despite violations", p.LambdaGbps, *p.IntendedLambdaGbps)
	}
	var b bytes.Buffer
	if err := p.Explain(&b); err != nil || !strings.Contains(b.String(), "violation at intended rates") {
		t.Errorf("--explain does not show the violations:\n%s", b.String())
	}
}

func TestFig1ExactPlanJSONHasFanInsAndAnS1WorkerDetouringToS2(t *testing.T) {
	p, err := Solve(context.Background(), fig1(t), AlgoGRIDExact, Options{LP: lp.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	var decoded Plan
	if err := json.Unmarshal([]byte(planJSON(t, p)), &decoded); err != nil {
		t.Fatal(err)
	}
	fan := map[string]int{}
	for _, s := range decoded.Switches {
		for _, a := range s.Aggregate {
			fan[s.Name] = a.FanIn
		}
	}
	if fmt.Sprint(fan) != "map[s1:3 s2:3 s3:2]" {
		t.Errorf("fan-ins %v, want s1:3 s2:3 s3:2", fan)
	}
	// The worker s1 cannot take goes s1 -> s2 (s1's port towards s2, the L2 trunk).
	l2 := topo.PaperFig1().Link("s1", "s2")
	s1port := l2.A.Port
	if l2.A.Node != "s1" {
		s1port = l2.B.Port
	}
	found := false
	for _, s := range decoded.Switches {
		for _, f := range s.Forward {
			if s.Name == "s1" && f.Node == "s2" && f.OutPort == s1port && f.NodeID == 2 {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no forward rule at s1 sending a worker to s2 on port %d: %+v", s1port, decoded.Switches[0].Forward)
	}
}

func TestBadInputGivesClearErrors(t *testing.T) {
	tp := topo.PaperFig1()
	if _, err := NewInstance(tp, []workload.Job{{Name: "j", PS: "ps", Workers: []string{"w1", "ghost"}}}); err == nil || !strings.Contains(err.Error(), `worker "ghost" is not a host`) {
		t.Errorf("unknown worker: %v", err)
	}
	if _, err := NewInstance(tp, []workload.Job{{Name: "j", PS: "nobody", Workers: []string{"w1"}}}); err == nil || !strings.Contains(err.Error(), `PS "nobody"`) {
		t.Errorf("unknown PS: %v", err)
	}
	zero := topo.PaperFig1()
	zero.Node("s2").Capacity = 0
	if _, err := NewInstance(zero, []workload.Job{{Name: "j", PS: "ps", Workers: []string{"w1"}}}); err == nil || !strings.Contains(err.Error(), "programmable switch s2 has no processing capacity") {
		t.Errorf("zero capacity: %v", err)
	}
	// Two islands: w1-sA and ps-sB with no link between the switches.
	island := &topo.Topology{Name: "islands", Nodes: []*topo.Node{
		{Name: "sA", Kind: topo.KindSwitch, ID: 1}, {Name: "sB", Kind: topo.KindSwitch, ID: 2},
		{Name: "w1", Kind: topo.KindHost, ID: 1, Role: topo.RoleWorker}, {Name: "ps", Kind: topo.KindHost, ID: 2, Role: topo.RolePS, Ingress: 10 * topo.Gbps},
	}, Links: []*topo.Link{
		{A: topo.Endpoint{Node: "sA", Port: 1}, B: topo.Endpoint{Node: "w1"}, Bandwidth: topo.Gbps},
		{A: topo.Endpoint{Node: "sB", Port: 1}, B: topo.Endpoint{Node: "ps"}, Bandwidth: topo.Gbps},
	}}
	if _, err := NewInstance(island, []workload.Job{{Name: "j", PS: "ps", Workers: []string{"w1"}}}); err == nil || !strings.Contains(err.Error(), "worker w1 cannot reach its PS ps") {
		t.Errorf("unreachable PS: %v", err)
	}
	if _, err := Solve(context.Background(), fig1(t), "magic", Options{}); err == nil || !strings.Contains(err.Error(), `unknown algorithm "magic"`) {
		t.Errorf("unknown algorithm: %v", err)
	}
}

func TestTwoJobsShareSwitchCapacity(t *testing.T) {
	tp := topo.PaperFig1()
	jobs := []workload.Job{
		{Name: "a", PS: "ps", Workers: []string{"w1", "w2", "w5"}},
		{Name: "b", PS: "w8", Workers: []string{"w3", "w4", "w6", "w7"}},
	}
	in, err := NewInstance(tp, jobs)
	if err != nil {
		t.Fatal(err)
	}
	for _, algo := range Algorithms() {
		// 7 workers: small enough for the embedded branch and bound of the link-aware MILP.
		p, err := Solve(context.Background(), in, algo, Options{Seed: 1, LP: lp.Embedded, MILPLimit: 100})
		if err != nil {
			t.Fatalf("%s: %v", algo, err)
		}
		if len(p.Jobs) != 2 || p.LambdaGbps <= 0 {
			t.Errorf("%s: %d jobs, lambda %g", algo, len(p.Jobs), p.LambdaGbps)
		}
		for _, s := range p.Switches {
			if s.CapacityGbps > 0 && s.LoadGbps > s.CapacityGbps*(1+1e-9) {
				t.Errorf("%s: switch %s load %g over capacity %g", algo, s.Name, s.LoadGbps, s.CapacityGbps)
			}
		}
	}
}

func TestLinkAwareExactSolvesMILPsForTwoJobsOnFig1OnEachBackend(t *testing.T) {
	jobs, err := workload.Load("../../workloads/jobs/fig1-two-jobs.yaml", topo.PaperFig1())
	if err != nil {
		t.Fatal(err)
	}
	in, err := NewInstance(topo.PaperFig1(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	backends := []lp.Backend{lp.Embedded}
	if lp.CBCAvailable() {
		backends = append(backends, lp.CBC)
	}
	for _, be := range backends {
		p, err := Solve(context.Background(), in, AlgoGRIDExact, Options{LP: be})
		if err != nil {
			t.Fatal(err)
		}
		// Both jobs' results cross L1 (s3->s1, 3 Gbps) to reach w1-w4, so no
		// rate above 1.5 Gbps fits; grid-paths reaches it, the bound proves it.
		if p.Model != "links" || !approx(*p.BoundGbps, 1.5) || !approx(p.LambdaGbps, 1.5) {
			t.Errorf("%s: model %s, optimum %v, evaluated %g; want the link-aware 1.5 Gbps", be, p.Model, *p.BoundGbps, p.LambdaGbps)
		}
		if p.Exact == nil || !*p.Exact {
			t.Errorf("%s: the optimum is proved but the plan does not say exact: %v", be, p.Notes)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the golden plan files in testdata")

// The Fig. 1 plan of grid-exact, as the experiment runner reads it, is kept
// as a golden file: testdata/fig1-grid-exact.plan.json (go test -update rewrites it).
func TestFig1PlanJSONMatchesGoldenFile(t *testing.T) {
	p, err := Solve(context.Background(), fig1(t), AlgoGRIDExact, Options{LP: lp.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	p.LPBackend = "" // the golden file must not depend on which backend ran
	got := planJSON(t, p)
	golden := filepath.Join("testdata", "fig1-grid-exact.plan.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("plan differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
}

func TestATPLeavesNoCrumbsOfTheRateSearchInItsPlan(t *testing.T) {
	tp, err := topo.Load(filepath.Join(repo.RootOrFail(t), "topologies", "testbed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := workload.Default(tp)
	if err != nil {
		t.Fatal(err)
	}
	in, err := NewInstance(tp, jobs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Solve(context.Background(), in, AlgoATP, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// On the testbed every switch has room for its rack, so each worker is
	// aggregated whole at its own switch and s1's fan-in counts w1 and w2 only.
	for _, w := range p.Jobs[0].Workers {
		if len(w.Shares) != 1 || w.Shares[0].Fraction != 1 {
			t.Errorf("worker %s has shares %+v, want one whole share", w.Host, w.Shares)
		}
	}
	for _, s := range p.Switches {
		if s.Name == "s1" && (len(s.Aggregate) != 1 || s.Aggregate[0].FanIn != 2) {
			t.Errorf("s1 aggregates %+v, want fan-in 2 (w1, w2)", s.Aggregate)
		}
	}
}
