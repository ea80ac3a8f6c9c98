package monitor

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/monitor/monitortest"
	"github.com/grid-ina/grid/harness/topo"
)

// benchmarkSample measures one sample of every interface of a k-ary
// fat-tree. When iftop is installed it also runs `iftop -t -s 1` once on one
// host interface (100 datagrams a second) and reports its CPU time, and the
// ratios of that to one sample of all interfaces here and to one
// interface's share of a sample: iftop watches one interface per process
// (pcap, cost growing with traffic), while a sample reads counters the kernel
// keeps anyway.
func benchmarkSample(b *testing.B, k int) {
	monitortest.NeedRoot(b)
	tp, err := topo.FatTree(k, 0)
	if err != nil {
		b.Fatal(err)
	}
	st := monitortest.UpTopology(b, tp)
	m, err := New(st, Options{Keep: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	iftopCPU := iftopOnce(b, st.Node("h1"))
	b.ResetTimer()
	for b.Loop() {
		if err := m.Sample(); err != nil {
			b.Fatal(err)
		}
	}
	perSample := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(perSample*1e6, "µs/sample")
	b.ReportMetric(float64(len(m.Interfaces())), "interfaces")
	if iftopCPU > 0 {
		b.ReportMetric(iftopCPU.Seconds()*1e6, "µs-cpu-iftop-1-iface")
		b.ReportMetric(iftopCPU.Seconds()/perSample, "x-iftop-1-iface")
		// Per interface: iftop on one against this sample's share of one.
		b.ReportMetric(iftopCPU.Seconds()/(perSample/float64(len(m.Interfaces()))), "x-iftop-per-iface")
	}
}

// iftopOnce runs `iftop -t -s 1` on a host's eth0 inside its namespace and
// returns the CPU time it used, or 0 when iftop is not installed. iftop
// checks its timer only when an IP packet arrives, so the host sends a UDP
// datagram every 10 ms meanwhile (its gateway takes it and drops it).
func iftopOnce(b *testing.B, host *fabric.Node) time.Duration {
	path, err := exec.LookPath("iftop")
	if err != nil {
		b.Logf("iftop not installed (scripts/setup.sh installs it): no comparison")
		return 0
	}
	fd := -1
	if err := host.Do(func() (err error) {
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fd)
	to := &unix.SockaddrInet4{Port: 9, Addr: [4]byte{10, 255, 255, 1}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-t", "-s", "1", "-n", "-N", "-P", "-i", "eth0")
	if err := host.Do(cmd.Start); err != nil {
		b.Fatalf("start iftop: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	payload := make([]byte, 100)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			if err != nil {
				b.Logf("iftop failed (%v): no comparison", err)
				return 0
			}
			return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		case <-tick.C:
			if err := unix.Sendto(fd, payload, 0, to); err != nil {
				b.Fatal(err)
			}
		}
	}
}
func BenchmarkSampleFatTreeK4(b *testing.B) { benchmarkSample(b, 4) }
func BenchmarkSampleFatTreeK8(b *testing.B) { benchmarkSample(b, 8) }
