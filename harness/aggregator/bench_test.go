package aggregator

import (
	"encoding/binary"
	"sync/atomic"
	"testing"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/gradproto"
)

// benchSwitch is an engine switch aggregating job 1 of a star with fanIn
// workers, built for values values per packet.
func benchSwitch(b *testing.B, fanIn, values int) (*gradproto.Star, *engine.Switch) {
	st, err := gradproto.NewStar(1, fanIn, 0, values)
	if err != nil {
		b.Fatal(err)
	}
	setup, err := Entries(st.Config)
	if err != nil {
		b.Fatal(err)
	}
	sw := engine.NewSwitch(compileForEngine(b, Build{Values: values}), engine.Config{})
	if err := setup.Install(sw); err != nil {
		b.Fatal(err)
	}
	return st, sw
}

// BenchmarkAggregatedValuesPerSecond pushes fragments of 8 workers through
// one aggregator switch on the embedded engine: every 8th packet completes a
// unit and leaves for the PS. It reports gradient values aggregated per
// second (values/s) on one core.
func BenchmarkAggregatedValuesPerSecond(b *testing.B) {
	for _, values := range []int{32, 64} {
		b.Run(map[int]string{32: "values=32", 64: "values=64"}[values], func(b *testing.B) {
			const fanIn = 8
			st, sw := benchSwitch(b, fanIn, values)
			frames := make([][]byte, fanIn)
			for m := range frames {
				w := gradproto.NewWorker(&st.Plan, m, map[uint32][]int32{0: make([]int32, values)})
				p := w.Originals()[0]
				for i := range p.Values {
					p.Values[i] = int32(m*values + i)
				}
				frames[m] = p.Marshal()
			}
			fragOff := gradproto.FrameOverhead + 8
			emitted := 0
			emit := func(engine.Output) { emitted++ }
			b.SetBytes(int64(len(frames[0])))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m := i % fanIn
				f := frames[m]
				binary.BigEndian.PutUint32(f[fragOff:], uint32(i/fanIn))
				if err := sw.Process(uint32(st.WorkerPort(m)), f, emit); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if want := b.N / fanIn; emitted != want {
				b.Fatalf("%d partial sums for %d packets of fan-in %d, want %d", emitted, b.N, fanIn, want)
			}
			b.ReportMetric(float64(b.N)*float64(values)/b.Elapsed().Seconds(), "values/s")
		})
	}
}

// BenchmarkAggregatedValuesPerSecondParallel is the same load from one
// goroutine per core, each with its own fragment ids, on one shared switch.
func BenchmarkAggregatedValuesPerSecondParallel(b *testing.B) {
	const fanIn, values = 8, 32
	st, sw := benchSwitch(b, fanIn, values)
	var next atomic.Uint32
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		base := next.Add(1) << 24
		frames := make([][]byte, fanIn)
		for m := range frames {
			w := gradproto.NewWorker(&st.Plan, m, map[uint32][]int32{0: make([]int32, values)})
			frames[m] = w.Originals()[0].Marshal()
		}
		emit := func(engine.Output) {}
		for i := 0; pb.Next(); i++ {
			m := i % fanIn
			binary.BigEndian.PutUint32(frames[m][gradproto.FrameOverhead+8:], base|uint32(i/fanIn))
			if err := sw.Process(uint32(st.WorkerPort(m)), frames[m], emit); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)*values/b.Elapsed().Seconds(), "values/s")
}

// BenchmarkReferenceModelValuesPerSecond is the same load on the Go
// reference model, a baseline for the engine's figure.
func BenchmarkReferenceModelValuesPerSecond(b *testing.B) {
	const fanIn, values = 8, 32
	st, err := gradproto.NewStar(1, fanIn, 0, values)
	if err != nil {
		b.Fatal(err)
	}
	sw, err := gradproto.NewSwitch(st.Config, values, gradproto.DefaultUnits)
	if err != nil {
		b.Fatal(err)
	}
	frames := make([][]byte, fanIn)
	for m := range frames {
		w := gradproto.NewWorker(&st.Plan, m, map[uint32][]int32{0: make([]int32, values)})
		frames[m] = w.Originals()[0].Marshal()
	}
	fragOff := gradproto.FrameOverhead + 8
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := i % fanIn
		binary.BigEndian.PutUint32(frames[m][fragOff:], uint32(i/fanIn))
		sw.Process(st.WorkerPort(m), frames[m])
	}
	b.ReportMetric(float64(b.N)*values/b.Elapsed().Seconds(), "values/s")
}
