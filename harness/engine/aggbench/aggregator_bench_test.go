package aggbench

import (
	"encoding/binary"
	"path/filepath"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/internal/cputime"
	"github.com/grid-ina/grid/harness/internal/repo"
)

// aggregatorLoad is the aggregator benchmark's traffic: fragments of fanIn
// workers of job 1 of a star, fragment ids counting up so that every fanIn
// packets complete one unit, which leaves for the PS.
type aggregatorLoad struct {
	star   *gradproto.Star
	frames [][]byte // one per worker; its fragment id is rewritten per packet
}

const aggregatorFanIn = 8

func newAggregatorLoad(b *testing.B, values int) *aggregatorLoad {
	st, err := gradproto.NewStar(1, aggregatorFanIn, 0, values)
	if err != nil {
		b.Fatal(err)
	}
	l := &aggregatorLoad{star: st, frames: make([][]byte, aggregatorFanIn)}
	for m := range l.frames {
		w := gradproto.NewWorker(&st.Plan, m, map[uint32][]int32{0: make([]int32, values)})
		p := w.Originals()[0]
		for i := range p.Values {
			p.Values[i] = int32(m*values + i)
		}
		l.frames[m] = p.Marshal()
	}
	return l
}

// packet returns the worker port and frame of the i-th packet.
func (l *aggregatorLoad) packet(i int) (uint16, []byte) {
	m := i % aggregatorFanIn
	binary.BigEndian.PutUint32(l.frames[m][gradproto.FrameOverhead+8:], uint32(i/aggregatorFanIn))
	return l.star.WorkerPort(m), l.frames[m]
}

// aggregatorPrograms caches the compiled aggregator per values per packet:
// the benchmark function runs several times with growing b.N.
var aggregatorPrograms = map[int]*engine.Program{}

func aggregatorProgram(b *testing.B, values int) *engine.Program {
	if p := aggregatorPrograms[values]; p != nil {
		return p
	}
	res, err := aggregator.Compile(filepath.Join(repo.RootOrFail(b), "p4", "aggregator", "aggregator.p4"), aggregator.Build{Values: values})
	if err != nil {
		b.Fatal(err)
	}
	prog, err := engine.Load(res.JSON)
	if err != nil {
		b.Fatal(err)
	}
	aggregatorPrograms[values] = prog
	return prog
}

// BenchmarkAggregator runs GRID's aggregator program (p4/aggregator,
// compiled by harness/p4c) on the engine, one core, and the same traffic
// through the Go reference model (gradproto.Switch), the peer for
// the aggregator's speed: ns/op is per packet in both.
func BenchmarkAggregator(b *testing.B) {
	for _, values := range []int{32, 64} {
		name := map[int]string{32: "values=32", 64: "values=64"}[values]
		b.Run("engine/"+name, func(b *testing.B) {
			prog := aggregatorProgram(b, values)
			l := newAggregatorLoad(b, values)
			setup, err := aggregator.Entries(l.star.Config)
			if err != nil {
				b.Fatal(err)
			}
			sw := engine.NewSwitch(prog, engine.Config{})
			if err := setup.Install(sw); err != nil {
				b.Fatal(err)
			}
			sums := 0
			emit := func(engine.Output) { sums++ }
			b.SetBytes(int64(len(l.frames[0])))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.Used()
			for i := range b.N {
				port, frame := l.packet(i)
				if err := sw.Process(uint32(port), frame, emit); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportRates(b, cpu0)
			checkSums(b, sums)
		})
		b.Run("reference/"+name, func(b *testing.B) {
			l := newAggregatorLoad(b, values)
			sw, err := gradproto.NewSwitch(l.star.Config, values, gradproto.DefaultUnits)
			if err != nil {
				b.Fatal(err)
			}
			sums := 0
			b.SetBytes(int64(len(l.frames[0])))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.Used()
			for i := range b.N {
				port, frame := l.packet(i)
				sums += len(sw.Process(port, frame))
			}
			b.StopTimer()
			reportRates(b, cpu0)
			checkSums(b, sums)
		})
	}
}

// checkSums fails the benchmark unless every unit was completed and sent
// on: one partial sum per fan-in packets.
func checkSums(b *testing.B, sums int) {
	if want := b.N / aggregatorFanIn; sums != want {
		b.Fatalf("%d partial sums for %d packets of fan-in %d, want %d", sums, b.N, aggregatorFanIn, want)
	}
}

// reportRates adds CPU time per packet and packets per CPU second.
func reportRates(b *testing.B, cpu0 time.Duration) {
	if cpu := cputime.Used() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(b.N)/cpu.Seconds()/1e6, "Mpps/cpu")
	}
}
