package solver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// TestGridExactNeverReadsAStoppedMILPAsInfeasible gives every feasibility
// MILP no time at all: grid-exact must then not call its plan exact, and its
// bound must stay an upper bound (a stopped MILP read as infeasible once
// printed 7.887 Gbps "exact" under a bound of 7.874 on a k=16 fat-tree).
func TestGridExactNeverReadsAStoppedMILPAsInfeasible(t *testing.T) {
	defer func(d time.Duration) { milpDeadline = d }(milpDeadline)
	milpDeadline = time.Nanosecond
	tp, err := topo.FatTree(4, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Only host links limited: the paper's model, several jobs, counting MILPs.
	for _, l := range tp.Links {
		if tp.Node(l.A.Node).Kind == topo.KindSwitch && tp.Node(l.B.Node).Kind == topo.KindSwitch {
			l.Bandwidth = 0
		}
	}
	hosts := tp.Hosts()
	var jobs []workload.Job
	for j := 0; j < 2; j++ {
		job := workload.Job{Name: []string{"a", "b"}[j], PS: hosts[8*j].Name}
		for _, h := range hosts[8*j+1 : 8*j+8] {
			job.Workers = append(job.Workers, h.Name)
		}
		jobs = append(jobs, job)
	}
	in, err := NewInstance(tp, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if !in.linksCannotLimit() {
		t.Fatal("the fabric's links can limit rates; the test needs the paper's model")
	}
	p, err := Solve(context.Background(), in, AlgoGRIDExact, Options{LP: lp.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	if p.Exact == nil || *p.Exact && p.LambdaGbps < *p.BoundGbps*(1-1e-9) {
		t.Errorf("plan at %g Gbps with bound %g says exact %v, but no MILP was decided: %v", p.LambdaGbps, *p.BoundGbps, p.Exact, p.Notes)
	}
	if *p.BoundGbps < p.LambdaGbps*(1-1e-9) {
		t.Errorf("bound %g Gbps below the plan's own %g", *p.BoundGbps, p.LambdaGbps)
	}
	milpDeadline = time.Minute
	q, err := Solve(context.Background(), in, AlgoGRIDExact, Options{LP: lp.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	if q.Exact == nil || !*q.Exact || q.Model != "paper" {
		t.Errorf("with time for its MILPs grid-exact says exact %v in model %s: %v", q.Exact, q.Model, q.Notes)
	}
	if q.LambdaGbps < p.LambdaGbps*(1-1e-9) {
		t.Errorf("the proved optimum %g is below the undecided search's %g", q.LambdaGbps, p.LambdaGbps)
	}
}

// TestGridExactIsNeverBelowGridPathsWithLinks solves the paper's scenarios
// with their 100 Gbps links at 40 workers, where the link-aware MILP is too
// big: grid-exact used to place the paper model's solution nearest first
// and score 4.76 Gbps where grid-paths found 33.3. It must be at least as
// good as grid-paths, its bound at least its rate, and exact only when the
// rate reaches the bound.
func TestGridExactIsNeverBelowGridPathsWithLinks(t *testing.T) {
	for _, sc := range PaperScenarios() {
		in := scenarioInstance(t, sc, 40, 1)
		x, err := Solve(context.Background(), in, AlgoGRIDExact, Options{Seed: 1, MILPLimit: 1200})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Solve(context.Background(), in, AlgoGRIDPaths, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if x.LambdaGbps < p.LambdaGbps*(1-1e-9) {
			t.Errorf("%s: grid-exact %.4g Gbps below grid-paths' %.4g", sc.Name, x.LambdaGbps, p.LambdaGbps)
		}
		if *x.BoundGbps < x.LambdaGbps*(1-1e-9) {
			t.Errorf("%s: grid-exact's bound %.4g below its own %.4g", sc.Name, *x.BoundGbps, x.LambdaGbps)
		}
		if *x.Exact != (x.LambdaGbps >= *x.BoundGbps*(1-1e-9)) {
			t.Errorf("%s: exact %v at %.4g Gbps under a bound of %.4g", sc.Name, *x.Exact, x.LambdaGbps, *x.BoundGbps)
		}
	}
}

// TestEverySolverPathStopsWithTheContext cancels each LP-based algorithm
// shortly after it starts on a k=16 fat-tree with four jobs, with the
// embedded LP (which once ran 16 minutes after SIGTERM there), and gives
// each a deadline: every one returns the context's error.
func TestEverySolverPathStopsWithTheContext(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a k=16 fat-tree")
	}
	tp, err := topo.FatTree(16, 0)
	if err != nil {
		t.Fatal(err)
	}
	one, err := workload.Default(tp)
	if err != nil {
		t.Fatal(err)
	}
	hosts := one[0].Workers
	var jobs []workload.Job
	for j := 0; j < 4; j++ {
		jobs = append(jobs, workload.Job{Name: []string{"a", "b", "c", "d"}[j], PS: hosts[j*256], Workers: hosts[j*256+1 : min(len(hosts), (j+1)*256)]})
	}
	in, err := NewInstance(tp, jobs)
	if err != nil {
		t.Fatal(err)
	}
	for _, algo := range []string{AlgoGRID, AlgoGRIDPaths, AlgoGRIDExact} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(5*time.Millisecond, cancel)
		if _, err := Solve(ctx, in, algo, Options{LP: lp.Embedded}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s cancelled: %v, want context.Canceled", algo, err)
		}
		cancel()
		ctx, cancel = context.WithTimeout(context.Background(), 5*time.Millisecond)
		if _, err := Solve(ctx, in, algo, Options{LP: lp.Embedded}); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s past its deadline: %v, want context.DeadlineExceeded", algo, err)
		}
		cancel()
	}
}

// With CBC grid-exact proves the link-aware optimum of a paper-scale
// fabric (k=8 fat-tree, ToR switches programmable, 100 Gbps links).
func TestGridExactProvesAPaperScaleLinkAwareOptimumWithCBC(t *testing.T) {
	if !lp.CBCAvailable() {
		t.Skip("cbc not installed (apt-get install coinor-cbc)")
	}
	in := scenarioInstance(t, PaperScenarios()[0], 16, 1)
	x, err := Solve(context.Background(), in, AlgoGRIDExact, Options{Seed: 1, LP: lp.CBC})
	if err != nil {
		t.Fatal(err)
	}
	if x.Model != "links" || x.Exact == nil || !*x.Exact || !approx(x.LambdaGbps, *x.BoundGbps) {
		t.Errorf("model %s, lambda %g, bound %v, exact %v: %v", x.Model, x.LambdaGbps, *x.BoundGbps, x.Exact, x.Notes)
	}
}
