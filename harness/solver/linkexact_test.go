package solver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// smallFatTree is a k=4 fat-tree shaped like the paper's scenarios: ToR or
// random-20% programmable switches with capacities uniform in 10-320 Gbps,
// 10 Gbps links and PS (the paper's numbers scaled by 1/10), and the given
// number of random workers.
func smallFatTree(t *testing.T, torOnly bool, workers int, seed uint64) *Instance {
	t.Helper()
	tp, err := topo.FatTree(4, 0)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	for _, l := range tp.Links {
		l.Bandwidth = 10 * topo.Gbps
	}
	sws := tp.Switches()
	for _, s := range sws {
		s.Programmable, s.Capacity = false, 0
	}
	for i, s := range sws {
		if torOnly && s.Tier == topo.TierEdge || !torOnly && rng.IntN(5) == 0 || !torOnly && i == 0 {
			s.Programmable = true
			s.Capacity = topo.Bandwidth(10+310*rng.Float64()) * topo.Gbps
		}
	}
	ps := tp.PSs()[0].Name
	var hosts []string
	for _, h := range tp.Hosts() {
		if h.Name != ps {
			hosts = append(hosts, h.Name)
		}
	}
	perm := rng.Perm(len(hosts))
	job := workload.Job{Name: "job1", PS: ps}
	for _, i := range perm[:workers] {
		job.Workers = append(job.Workers, hosts[i])
	}
	in, err := NewInstance(tp, []workload.Job{job})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestGridPathsReachesNinetyPercentOfTheLinkAwareOptimumOnSmallFabrics(t *testing.T) {
	if !lp.CBCAvailable() {
		t.Skip("cbc not installed (apt-get install coinor-cbc): the link-aware exact MILPs of these fabrics need it")
	}
	for seed := uint64(1); seed <= 4; seed++ {
		for _, tor := range []bool{true, false} {
			in := smallFatTree(t, tor, 8+int(seed), seed)
			name := fmt.Sprintf("seed %d tor-only %v", seed, tor)
			x, err := Solve(context.Background(), in, AlgoGRIDExact, Options{LP: lp.CBC})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if x.Model != "links" {
				t.Fatalf("%s: grid-exact used the %s model, want the link-aware MILP", name, x.Model)
			}
			p, err := Solve(context.Background(), in, AlgoGRIDPaths, Options{Seed: 1, LP: lp.Embedded})
			if err != nil {
				t.Fatal(err)
			}
			if !approx(x.LambdaGbps, *x.BoundGbps) {
				t.Errorf("%s: exact plan evaluates to %g, its optimum is %g", name, x.LambdaGbps, *x.BoundGbps)
			}
			if p.LambdaGbps < 0.9*x.LambdaGbps || p.LambdaGbps > x.LambdaGbps*(1+1e-9) {
				t.Errorf("%s: grid-paths %g Gbps against the link-aware optimum %g", name, p.LambdaGbps, x.LambdaGbps)
			}
			t.Logf("%s: grid-paths %.4g, exact %.4g, paper-model bound %.4g", name, p.LambdaGbps, x.LambdaGbps, func() float64 { l, _ := in.paperExact(0); return l }())
		}
	}
}
