package endpoint

import (
	"context"
	"testing"
	"time"
)

// benchmarkJob runs b.N jobs of frags fragments per worker over run and
// reports the workers' mean goodput in fragments per second.
func benchmarkJob(b *testing.B, spec *Spec, run func(*Spec) (*Report, []*Report)) {
	var perWorker float64
	var resent int
	for i := 0; b.Loop(); i++ {
		// New fragment ids every job: the switch drops fragments it
		// remembers as finished.
		spec.FirstFragment = uint32(i * spec.Fragments)
		ps, workers := run(spec)
		if err := ps.Failure(); err != nil {
			b.Fatal(err)
		}
		for _, w := range workers {
			if err := w.Failure(); err != nil {
				b.Fatal(err)
			}
			perWorker += w.FragmentsPerSecond / float64(len(workers))
			resent += w.Resent
		}
	}
	b.ReportMetric(perWorker/float64(b.N), "fragments/s/worker")
	b.ReportMetric(float64(resent)/float64(b.N), "resends/job")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkWorkersThroughTheAggregatorSwitch: three workers, two
// aggregated at the embedded switch (compiled aggregator on the engine
// behind AF_PACKET veth ports) and one at the PS, 2000 fragments each.
func BenchmarkWorkersThroughTheAggregatorSwitch(b *testing.B) {
	n := newStarNet(b, 2, 1, 0, nil)
	spec := n.spec(2000, Window{Initial: 16, Max: 128}, 100*time.Millisecond)
	benchmarkJob(b, spec, func(s *Spec) (*Report, []*Report) { return n.run(b, s) })
}

// BenchmarkWorkersOverLoopback: the endpoints alone, three workers and a PS
// that aggregates them on loopback, for comparison.
func BenchmarkWorkersOverLoopback(b *testing.B) {
	spec := loopbackSpec(3, 2000)
	spec.Window = Window{Initial: 16, Max: 128}
	benchmarkJob(b, spec, func(s *Spec) (*Report, []*Report) {
		ps, workers := runJob(b, context.Background(), s)
		return ps, workers
	})
}

// BenchmarkWorkersThroughAGridSwitchProcess: the same job through a `grid
// switch` process configured over P4Runtime, as in an experiment.
func BenchmarkWorkersThroughAGridSwitchProcess(b *testing.B) {
	n := newGridSwitchStar(b, 2, 1, 0)
	spec := n.spec(2000, Window{Initial: 16, Max: 128}, 100*time.Millisecond)
	benchmarkJob(b, spec, func(s *Spec) (*Report, []*Report) { return n.run(b, s) })
}
