// Package controllertest holds the test helpers of the packages that run
// the aggregator on switch processes of a fabric run (controller, runner):
// the skip without the privileges to build namespaces, the compiled
// aggregator and solved plans of a topology's default job.
package controllertest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// NeedFabric skips the test unless this process can build network
// namespaces (root; CI runs the tests as root).
func NeedFabric(t testing.TB) {
	t.Helper()
	if err := fabric.CanBuild(); err != nil {
		t.Skipf("needs root to build network namespaces and run switches in them (CI runs as root): %v", err)
	}
}

var program = sync.OnceValues(func() (*p4c.Result, error) {
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	return aggregator.Compile(filepath.Join(root, "p4", "aggregator", "aggregator.p4"), aggregator.Build{})
})

// Program is the aggregator (p4/aggregator/aggregator.p4, default build),
// compiled once per test process.
func Program(t testing.TB) *p4c.Result {
	t.Helper()
	prog, err := program()
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// Solve solves tp's default job (its PS and all its workers) with algo.
func Solve(t testing.TB, tp *topo.Topology, algo string) *solver.Plan {
	t.Helper()
	jobs, err := workload.Default(tp)
	if err != nil {
		t.Fatal(err)
	}
	return SolveJobs(t, tp, jobs, algo)
}

// SolveJobs solves jobs on tp with algo.
func SolveJobs(t testing.TB, tp *topo.Topology, jobs []workload.Job, algo string) *solver.Plan {
	t.Helper()
	in, err := solver.NewInstance(tp, jobs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := solver.Solve(context.Background(), in, algo, solver.Options{Seed: 1, LP: lp.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
