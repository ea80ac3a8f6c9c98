package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/internal/cputime"
)

// reportRates adds packets per second by wall clock and per CPU second.
func reportRates(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpps")
	if cpu := cputime.Used() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(b.N)/cpu.Seconds()/1e6, "Mpps/cpu")
	}
}

// benchIPv4 forwards frames of the given size through the IPv4 LPM program
// with 256 routes of mixed prefix lengths, and reports packets per second.
func benchIPv4(b *testing.B, size int) {
	sw := ipv4Switch(b)
	for i := range 256 {
		plen := 16 + i%17
		_, err := sw.AddEntry("ipv4_lpm", Entry{Match: []Match{LPM([]byte{172, byte(i), byte(i * 7), 0}, plen)},
			Action: "forward", Args: [][]byte{{byte(i % 8)}, {2, 0, 0, 0, 0, byte(i)}}})
		if err != nil {
			b.Fatal(err) // the second octet differs: no two prefixes collide
		}
	}
	frame := ipv4Frame([4]byte{10, 1, 2, 3}, 64, size-34)
	n := 0
	emit := func(o Output) { n += len(o.Data) }
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	b.ResetTimer()
	cpu0 := cputime.Used()
	for range b.N {
		if err := sw.Process(1, frame, emit); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportRates(b, cpu0)
	if n != b.N*len(frame) {
		b.Fatalf("forwarded %d bytes, want %d", n, b.N*len(frame))
	}
}

func BenchmarkIPv4LPM64B(b *testing.B)  { benchIPv4(b, 64) }
func BenchmarkIPv4LPM300B(b *testing.B) { benchIPv4(b, 300) }

// BenchmarkIPv4LPMParallel processes on all cores at once, as packets
// arriving on several ports would.
func BenchmarkIPv4LPMParallel(b *testing.B) {
	sw := ipv4Switch(b)
	frame := ipv4Frame([4]byte{10, 1, 2, 3}, 64, 64-34)
	b.ReportAllocs()
	cpu0 := cputime.Used()
	b.RunParallel(func(pb *testing.PB) {
		emit := func(Output) {}
		for pb.Next() {
			if err := sw.Process(1, frame, emit); err != nil {
				panic(fmt.Sprint(err))
			}
		}
	})
	reportRates(b, cpu0)
}
