package results

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// leafSpineExperiment is an experiment of leaf-spine-60's size
// (topologies/leafspine-60.yaml): 30 spines, 30 leaves, 500 hosts (499
// workers and a PS), 1400 links, sampled every interval for seconds
// seconds by one algorithm, as grid run records it.
func leafSpineExperiment(seconds int, interval time.Duration) *Experiment {
	const spines, leaves, hosts = 30, 30, 500
	e := &Experiment{Name: "leafspine-60-20261201T120000Z", Run: "ls60", Topology: "leafspine-30-30-500",
		Hosts: hosts, Switches: spines + leaves, Fragments: 1024, Values: 32, Scale: 1e-6,
		Began: t0, Ended: t0.Add(time.Duration(seconds+2) * time.Second), Events: events}
	for h := 1; h <= hosts; h++ {
		leaf := (h-1)%leaves + 1
		e.Links = append(e.Links, Link{A: fmt.Sprintf("l%d:p%d", leaf, (h-1)/leaves+1), B: fmt.Sprintf("h%d:eth0", h),
			NodeA: fmt.Sprintf("l%d", leaf), NodeB: fmt.Sprintf("h%d", h), RateBits: 1e5})
	}
	for l := 1; l <= leaves; l++ {
		for s := 1; s <= spines; s++ {
			e.Links = append(e.Links, Link{A: fmt.Sprintf("l%d:p%d", l, 20+s), B: fmt.Sprintf("sp%d:p%d", s, l),
				NodeA: fmt.Sprintf("l%d", l), NodeB: fmt.Sprintf("sp%d", s), RateBits: 1e5})
		}
	}
	start := t0.Add(time.Second)
	end := start.Add(time.Duration(seconds) * time.Second)
	a := AlgorithmRun{Algorithm: "grid-paths", Began: start, Ended: end, PredictedLambdaGbps: 0.05}
	job := Job{Name: "job1", ID: 1, PS: &Endpoint{Role: "ps", Job: 1, Host: fmt.Sprintf("h%d", hosts), Fragments: 1024,
		Completed: 1024, Verified: true, Start: start, Done: end, End: end, Seconds: float64(seconds)}}
	for h := 1; h < hosts; h++ {
		index := h - 1
		job.Workers = append(job.Workers, &Endpoint{Role: "worker", Job: 1, Index: &index, Host: fmt.Sprintf("h%d", h),
			Fragments: 1024, Completed: 1024, Sent: 1030, Resent: 6, Verified: true, Start: start, Done: end, End: end,
			Seconds: float64(seconds)})
	}
	a.Jobs = []Job{job}
	for t := start; !t.After(end); t = t.Add(interval) {
		n := uint64(t.Sub(start) / (100 * time.Millisecond))
		for i := range e.Links {
			a.Traffic = append(a.Traffic, LinkSample{Time: t, Link: i,
				AB: Count{Bytes: 190 * 6 * n, Packets: 6 * n}, BA: Count{Bytes: 190 * 6 * n, Packets: 6 * n}})
		}
	}
	for _, l := range e.Links {
		a.PredictedLinks = append(a.PredictedLinks, PredictedLink{From: l.A, To: l.B, Bits: 5e7, PacketsPerFragment: 1},
			PredictedLink{From: l.B, To: l.A, Bits: 5e7, PacketsPerFragment: 1})
	}
	for s := 1; s <= spines+leaves; s++ {
		sc := SwitchCounters{Switch: fmt.Sprintf("s%d", s), Jobs: map[uint16][]uint64{1: make([]uint64, len(events))}}
		for p := 1; p <= 47; p++ {
			sc.Ports = append(sc.Ports, PortCount{Port: p, Rx: Count{Bytes: 190 * 1024, Packets: 1024}, Tx: Count{Bytes: 190 * 1024, Packets: 1024}})
		}
		a.Switches = append(a.Switches, sc)
	}
	e.Algorithms = []AlgorithmRun{a}
	return e
}

// BenchmarkWriteLeafSpine60 writes the results folder of a leaf-spine-60
// run: the summary, its fidelity of 499 workers and 2800 link directions,
// traffic.csv and the plots. A 60 s run sampled every 100 ms has 840,000
// link samples, a 300 s run at the default interval for 1400 links (700
// ms) 600,000, and at 100 ms 4.2 million. It reports the folder's MB and
// the most heap in use above the records' own (sampled every 10 ms),
// beside -benchmem's allocations.
func BenchmarkWriteLeafSpine60(b *testing.B) {
	for _, c := range []struct {
		seconds  int
		interval time.Duration
	}{{60, 100 * time.Millisecond}, {300, 700 * time.Millisecond}, {300, 100 * time.Millisecond}} {
		b.Run(fmt.Sprintf("%ds-every-%v", c.seconds, c.interval), func(b *testing.B) {
			benchmarkWrite(b, leafSpineExperiment(c.seconds, c.interval))
		})
	}
}

func benchmarkWrite(b *testing.B, e *Experiment) {
	root := b.TempDir()
	var peak uint64
	for i := 0; b.Loop(); i++ {
		e.Name = fmt.Sprintf("leafspine-60-%d", i)
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		stop := make(chan struct{})
		done := make(chan uint64)
		go func() {
			var m runtime.MemStats
			high := uint64(0)
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				runtime.ReadMemStats(&m)
				high = max(high, m.HeapInuse)
				select {
				case <-stop:
					done <- high
					return
				case <-tick.C:
				}
			}
		}()
		dir, err := Write(root, e)
		close(stop)
		high := <-done
		if err != nil {
			b.Fatal(err)
		}
		peak = max(peak, high-min(high, base.HeapInuse))
		var size int64
		filepath.Walk(dir, func(_ string, info os.FileInfo, _ error) error {
			if info != nil && !info.IsDir() {
				size += info.Size()
			}
			return nil
		})
		b.ReportMetric(float64(size)/1e6, "folder-MB")
		os.RemoveAll(dir)
	}
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}
