package runner

import (
	"context"
	"testing"

	"github.com/grid-ina/grid/harness/solver"
)

// BenchmarkTestbedExperiment measures a whole experiment: build the
// testbed, start its switches, install grid-paths' plan, run eight workers
// of 64 fragments × 32 values and the PS, collect, tear down. It reports
// the slowest worker's seconds from its start to its last result.
func BenchmarkTestbedExperiment(b *testing.B) {
	cfg := testConfig(b, solver.AlgoGRIDPaths)
	var slowest float64
	for b.Loop() {
		cfg.Name = runName()
		exp, err := Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := exp.Failure(); err != nil {
			b.Fatal(err)
		}
		for _, r := range exp.Outcomes[0].Jobs[0].Workers {
			slowest = max(slowest, r.Seconds)
		}
	}
	b.ReportMetric(slowest, "slowest-worker-s")
}
