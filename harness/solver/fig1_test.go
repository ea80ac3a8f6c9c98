package solver

import (
	"context"
	"math"
	"testing"

	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/topo"
)

func fig1(t *testing.T) *Instance { return instanceOf(t, topo.PaperFig1()) }

// handPlan builds an assignment from node-name paths: for worker i, path[i]
// from the worker to its aggregation node with fraction 1.
func handPlan(t *testing.T, in *Instance, paths map[string][]string) *assignment {
	t.Helper()
	a := in.newAssignment()
	for w, wi := range in.jobs[0].workers {
		names := paths[in.names[wi]]
		var p []int
		for _, n := range names {
			p = append(p, in.index[n])
		}
		a.shares[0][w] = []share{{node: p[len(p)-1], frac: 1, path: p}}
	}
	in.completeStreams(a, distCache{}, nil)
	return a
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func TestFig1GeryonHandPlanGivesOneGbps(t *testing.T) {
	in := fig1(t)
	a := handPlan(t, in, map[string][]string{
		"w1": {"w1", "s1", "s3", "ps"}, "w2": {"w2", "s1", "s3", "ps"}, "w3": {"w3", "s1", "s3", "ps"},
		"w4": {"w4", "s1", "s2", "s3", "ps"}, "w5": {"w5", "s2", "s3", "ps"}, "w6": {"w6", "s2", "s3", "ps"},
		"w7": {"w7", "s3", "ps"}, "w8": {"w8", "s3", "ps"},
	})
	if ev := in.evaluate(a); !approx(ev.lambda, 1) {
		t.Fatalf("Geryon's Fig. 1 routing gives lambda %g, want 1 Gbps", ev.lambda)
	}
}

func TestFig1GRIDHandPlanGivesThreeGbps(t *testing.T) {
	in := fig1(t)
	a := handPlan(t, in, map[string][]string{
		"w1": {"w1", "s1"}, "w2": {"w2", "s1"}, "w3": {"w3", "s1"},
		"w4": {"w4", "s1", "s2"}, "w5": {"w5", "s2"}, "w6": {"w6", "s2"},
		"w7": {"w7", "s3"}, "w8": {"w8", "s3"},
	})
	ev := in.evaluate(a)
	if !approx(ev.lambda, 3) || !approx(ev.psLoad[in.index["ps"]], 9) {
		t.Fatalf("GRID's Fig. 1 plan gives lambda %g, PS load %g; want 3 and 9 Gbps", ev.lambda, ev.psLoad[in.index["ps"]])
	}
}

func TestFig1ATPHandPlanGivesTwoPointFourThreeSevenFive(t *testing.T) {
	in := fig1(t)
	// S1 aggregates 2.25 of each of w1-w4's 2.4375 Gbps; S3 the remaining 0.1875.
	f := 2.25 / 2.4375
	a := handPlan(t, in, map[string][]string{
		"w1": {"w1", "s1"}, "w2": {"w2", "s1"}, "w3": {"w3", "s1"}, "w4": {"w4", "s1"},
		"w5": {"w5", "s2"}, "w6": {"w6", "s2"}, "w7": {"w7", "s3"}, "w8": {"w8", "s3"},
	})
	for w := 0; w < 4; w++ {
		p := a.shares[0][w][0].path
		a.shares[0][w] = []share{{node: p[1], frac: f, path: p}, {node: in.index["s3"], frac: 1 - f, path: append(append([]int(nil), p...), in.index["s3"])}}
	}
	in.completeStreams(a, distCache{}, nil)
	if ev := in.evaluate(a); !approx(ev.lambda, 2.4375) {
		t.Fatalf("ATP's Fig. 1 split gives lambda %g, want 2.4375 Gbps", ev.lambda)
	}
}

func TestFig1AlgorithmsReachThePapersRates(t *testing.T) {
	in := fig1(t)
	want := map[string]float64{AlgoGeryon: 1, AlgoATP: 2.4375, AlgoGRIDExact: 3, AlgoGRIDPaths: 3}
	for algo, lam := range want {
		p, err := Solve(context.Background(), in, algo, Options{Seed: 1, LP: lp.Embedded})
		if err != nil {
			t.Fatalf("%s: %v", algo, err)
		}
		if !approx(p.LambdaGbps, lam) {
			t.Errorf("%s: lambda %g Gbps, want %g", algo, p.LambdaGbps, lam)
		}
	}
}
