package aggregator

import (
	"encoding/binary"
	"sync/atomic"
	"testing"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/gradproto"
)

// benchSwitch is an engine switch aggregating job 1 of a star with fanIn
// workers, built for values values per packet. It takes one packet at a
// time, as simple_switch's ingress thread and grid switch do: a unit's
// read-modify-write spans many actions.
func benchSwitch(b *testing.B, fanIn, values int) (*gradproto.Star, *engine.Switch) {
	st, err := gradproto.NewStar(1, fanIn, 0, values)
	if err != nil {
		b.Fatal(err)
	}
	setup, err := Entries(st.Config)
	if err != nil {
		b.Fatal(err)
	}
	sw := engine.NewSwitch(compileForEngine(b, Build{Values: values}), engine.Config{Serial: true})
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
// goroutine per core on one shared switch, as grid switch's data plane runs
// one receiver per port: the goroutines take packets from one sequence, so
// the packets of one fragment come from several goroutines at once. Every
// complete fragment must reach the PS with all workers counted and the
// exact sum.
func BenchmarkAggregatedValuesPerSecondParallel(b *testing.B) {
	const fanIn, values = 8, 32
	st, sw := benchSwitch(b, fanIn, values)
	frags := b.N / fanIn // complete ones; the rest of the last stays in its unit
	counts := make([]atomic.Int64, frags+1)
	sums := make([]atomic.Int64, frags+1) // of value 0; every worker sends 1
	emit := func(o engine.Output) {
		grid := o.Data[gradproto.FrameOverhead:]
		if o.Port != gradproto.StarPSPort || len(grid) <= gradproto.HeaderLen {
			return // a collision's control packet
		}
		frag := binary.BigEndian.Uint32(grid[8:])
		counts[frag].Add(int64(binary.BigEndian.Uint16(grid[6:])))
		sums[frag].Add(int64(int32(binary.BigEndian.Uint32(grid[gradproto.HeaderLen:]))))
	}
	var next atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		frames := make([][]byte, fanIn)
		for m := range frames {
			w := gradproto.NewWorker(&st.Plan, m, map[uint32][]int32{0: make([]int32, values)})
			p := w.Originals()[0]
			for i := range p.Values {
				p.Values[i] = 1
			}
			frames[m] = p.Marshal()
		}
		for pb.Next() {
			i := next.Add(1) - 1
			m := i % fanIn
			binary.BigEndian.PutUint32(frames[m][gradproto.FrameOverhead+8:], uint32(i/fanIn))
			if err := sw.Process(uint32(st.WorkerPort(int(m))), frames[m], emit); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	wrong := 0
	for frag := range frags {
		if counts[frag].Load() != fanIn || sums[frag].Load() != fanIn {
			wrong++
		}
	}
	if wrong > 0 {
		b.Fatalf("%d of %d fragments reached the PS without all %d workers counted or with a wrong sum", wrong, frags, fanIn)
	}
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
