package controller

import (
	"context"
	"testing"

	"github.com/grid-ina/grid/harness/controller/controllertest"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
)

// BenchmarkStartAndInstallOnTheTestbed measures the control plane's part
// of an experiment on a built testbed fabric: starting the three switch
// processes, connecting, loading the aggregator, installing grid-paths'
// plan, and stopping them.
func BenchmarkStartAndInstallOnTheTestbed(b *testing.B) {
	controllertest.NeedFabric(b)
	tp := topo.Testbed()
	d := deploy(b, tp, solver.AlgoGRIDPaths)
	st := upRun(b, tp)
	opts := startOptions(b)
	ctx := context.Background()
	for b.Loop() {
		ctl, err := Start(ctx, st, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := ctl.Install(ctx, d); err != nil {
			b.Fatal(err)
		}
		if err := ctl.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
