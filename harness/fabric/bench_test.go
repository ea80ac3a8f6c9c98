package fabric

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/topo"
)

// Mininet's build+start+stop times for the same fat-trees on this kind of
// machine (Linux bridges, no controller), from issue 2.
var mininetSeconds = map[string]float64{
	"k4": 4.2,  // 16 hosts
	"k8": 28.4, // 128 hosts; our k=8 has 192, so the ratio understates the speed-up
}

// benchmarkUpDown builds and removes the topology b.N times and reports the
// speed-up over Mininet.
func benchmarkUpDown(b *testing.B, tp *topo.Topology, peer string) {
	if err := CanBuild(); err != nil {
		b.Skipf("cannot build network namespaces here: %v", err)
	}
	base := fmt.Sprintf("gb%x", time.Now().UnixNano()&0xffffff)
	var up, down time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run := fmt.Sprintf("%s-%d", base, i)
		t0 := time.Now()
		st, err := Up(context.Background(), tp, Options{Name: run})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := Down(st.Run); err != nil {
			Clean(run)
			b.Fatal(err)
		}
		up += t1.Sub(t0)
		down += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(up.Seconds()/n*1e3, "ms-up/op")
	b.ReportMetric(down.Seconds()/n*1e3, "ms-down/op")
	b.ReportMetric(mininetSeconds[peer]/((up+down).Seconds()/n), "x-mininet")
}

func BenchmarkUpDownFatTreeK4(b *testing.B) {
	tp, err := topo.FatTree(4, 0)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkUpDown(b, tp, "k4")
}

// BenchmarkUpDownFatTreeK8 is the paper's simulation layout: 80 switches and
// 192 hosts (6 per edge switch).
func BenchmarkUpDownFatTreeK8(b *testing.B) {
	tp, err := topo.FatTree(8, 6)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkUpDown(b, tp, "k8")
}
