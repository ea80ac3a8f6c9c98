package fabric

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/topo"
)

// benchmarkUpDown builds and removes the k-ary fat-tree (hostsPerEdge as in
// topo.FatTree) b.N times and reports the speed-up over Mininet's
// build+start+stop of a fat-tree, mininetSeconds, measured on this kind of
// machine (Linux bridges with STP, no controller; issue 2). Down returns once
// the namespaces are unmounted; the kernel frees them in the background, and
// that work slows the next iteration's Up, so it is counted too.
func benchmarkUpDown(b *testing.B, k, hostsPerEdge int, mininetSeconds float64) {
	if err := CanBuild(); err != nil {
		b.Skipf("cannot build network namespaces here: %v", err)
	}
	tp, err := topo.FatTree(k, hostsPerEdge)
	if err != nil {
		b.Fatal(err)
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
	b.ReportMetric(mininetSeconds/((up+down).Seconds()/n), "x-mininet")
}

// Mininet: 4.2 s for k=4 (16 hosts).
func BenchmarkUpDownFatTreeK4(b *testing.B) { benchmarkUpDown(b, 4, 0, 4.2) }

// Mininet: 12.4 s for k=6 (54 hosts).
func BenchmarkUpDownFatTreeK6(b *testing.B) { benchmarkUpDown(b, 6, 0, 12.4) }

// Mininet: 28.4 s for k=8 with 128 hosts, the same topology.
func BenchmarkUpDownFatTreeK8Hosts128(b *testing.B) { benchmarkUpDown(b, 8, 0, 28.4) }

// The paper's simulation layout the target names: 80 switches and 192
// hosts (6 per edge switch), against Mininet's 28.4 s for only 128 hosts, so
// the ratio understates the speed-up.
func BenchmarkUpDownFatTreeK8Hosts192(b *testing.B) { benchmarkUpDown(b, 8, 6, 28.4) }
