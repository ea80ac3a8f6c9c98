package p4test_test

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/p4test"
	"github.com/grid-ina/grid/harness/p4test/targettest"
)

// The benchmarks below measure grid against real bmv2 and p4c side by
// side, both in the same benchmark run, so the ratios hold on a loaded
// machine where the absolute figures do not: each sub-benchmark reports
// grid's figure, bmv2's (or p4c's) and their ratio. Both switches load the
// same JSON (grid's compilation of p4/examples/basic_ipv4.p4, which passes
// on both) on veth ports in a private namespace, driven over P4Runtime:
//
//	sudo scripts/setup.sh   # once: the p4tools bundle on PATH
//	go test -run '^$' -bench SideBySide -benchtime 3x ./harness/p4test   # medians of 3 (means for times)

// sideBySide are the two switches.
var sideBySide = []p4test.TargetKind{p4test.GridSwitch, p4test.Bmv2}

// benchProgram is basic_ipv4 as grid compiles it, with its forwarding
// entry for 10.0.1.0/24 out of port 2.
func benchProgram(b *testing.B) p4test.Program {
	b.Helper()
	prog, err := p4test.CompileEmbedded(filepath.Join(repo.RootOrFail(b), "p4", "examples", "basic_ipv4.p4"), p4test.CompileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return prog
}

// startBench starts a switch of kind with basic_ipv4 and its route.
func startBench(b *testing.B, kind p4test.TargetKind, prog p4test.Program) *p4test.Remote {
	b.Helper()
	cfg := p4test.RemoteConfig{Kind: kind, Ports: 3, Grace: time.Nanosecond, Quiet: 500 * time.Millisecond, PacketTimeout: 20 * time.Second}
	if kind == p4test.GridSwitch {
		cfg.Switch = targettest.GridBinary(b)
	}
	r, err := p4test.StartRemote(context.Background(), cfg, prog)
	if err != nil {
		b.Fatal(err)
	}
	_, err = r.AddEntry("MyIngress.ipv4_lpm", engine.Entry{Match: []engine.Match{{Value: []byte{10, 0, 1, 0}, PrefixLen: 24}},
		Action: "MyIngress.ipv4_forward", Args: [][]byte{{0, 0, 0, 0, 1, 2}, {0, 2}}})
	if err != nil {
		r.Close()
		b.Fatal(err)
	}
	return r
}

// benchFrame is an IPv4/UDP frame of size bytes to 10.0.1.5.
func benchFrame(b *testing.B, size int) []byte {
	b.Helper()
	frame, err := p4test.Serialize(
		&layers.Ethernet{SrcMAC: net.HardwareAddr{0, 0, 0, 0, 0, 0xaa}, DstMAC: net.HardwareAddr{0, 0, 0, 0, 0, 1}, EthernetType: layers.EthernetTypeIPv4},
		&layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 1, 5}},
		gopacket.Payload(make([]byte, size-14-20)))
	if err != nil {
		b.Fatal(err)
	}
	return frame
}

// needBoth skips unless both switches can run here.
func needBoth(b *testing.B) {
	b.Helper()
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	targettest.Bmv2OrSkip(b)
}

// cpuSeconds is the CPU time (user and system) process pid has used.
func cpuSeconds(b *testing.B, pid int) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name in parentheses: utime and stime are
	// the 12th and 13th of them.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// forwarding is one measurement of a switch forwarding frames from port 0
// to port 2.
type forwarding struct {
	pps        float64 // frames out per second
	loss       float64 // fraction of frames sent that never came out
	cpuPerPkt  float64 // the switch's CPU seconds per frame out
	sent, recv int
}

// forward sends n frames into r. With window > 0 at most window frames
// are in flight at once (closed loop: nothing is lost, so the rate is
// what the switch forwards without loss); with window 0 they go out as
// fast as the sender can (open loop: the switch is overloaded and drops
// what it cannot take).
func forward(b *testing.B, r *p4test.Remote, frame []byte, n, window int) forwarding {
	b.Helper()
	ctx := context.Background()
	cpu0 := cpuSeconds(b, r.PID())
	begin := time.Now()
	recv := 0
	for sent := 0; sent < n; sent++ {
		if window > 0 && sent-recv >= window {
			out, err := r.Settle(ctx, recv+1)
			if err != nil {
				b.Fatal(err)
			}
			if len(out) == 0 {
				b.Fatalf("nothing came out with %d frames in flight", sent-recv)
			}
			recv += len(out)
		}
		if _, err := r.Send(0, frame); err != nil {
			b.Fatal(err)
		}
	}
	out, err := r.Settle(ctx, n)
	if err != nil {
		b.Fatal(err)
	}
	recv += len(out)
	took := time.Since(begin)
	// Settle waited for the quiet period after the last frame when some
	// never came: that time is not forwarding.
	if recv < n {
		took -= 500 * time.Millisecond
	}
	cpu := cpuSeconds(b, r.PID()) - cpu0
	return forwarding{pps: float64(recv) / took.Seconds(), loss: 1 - float64(recv)/float64(n), cpuPerPkt: cpu / float64(max(recv, 1)), sent: n, recv: recv}
}

// medianForwarding is the run with the median rate (with -benchtime Nx
// each switch runs N times, alternately).
func medianForwarding(runs []forwarding) forwarding {
	slices.SortFunc(runs, func(a, b forwarding) int { return cmp.Compare(a.pps, b.pps) })
	return runs[len(runs)/2]
}

// BenchmarkForwardingSideBySideWithBmv2 measures frames per second from
// port 0 to port 2 through basic_ipv4, 64- and 300-byte frames, lossless
// (at most 8 frames in flight) and overloaded (20000 frames sent as fast
// as one packet socket can), and the switch's CPU time per frame, on
// grid switch and on simple_switch_grpc.
func BenchmarkForwardingSideBySideWithBmv2(b *testing.B) {
	needBoth(b)
	prog := benchProgram(b)
	for _, size := range []int{64, 300} {
		for _, mode := range []struct {
			name      string
			n, window int
		}{{"lossless", 4000, 8}, {"overloaded", 20000, 0}} {
			b.Run(fmt.Sprintf("%dB-%s", size, mode.name), func(b *testing.B) {
				frame := benchFrame(b, size)
				got := map[p4test.TargetKind][]forwarding{}
				for range b.N {
					for _, kind := range sideBySide {
						r := startBench(b, kind, prog)
						got[kind] = append(got[kind], forward(b, r, frame, mode.n, mode.window))
						r.Close()
					}
				}
				g, m := medianForwarding(got[p4test.GridSwitch]), medianForwarding(got[p4test.Bmv2])
				b.ReportMetric(g.pps, "grid-pps")
				b.ReportMetric(m.pps, "bmv2-pps")
				b.ReportMetric(g.pps/m.pps, "x-bmv2-pps")
				b.ReportMetric(g.cpuPerPkt*1e6, "grid-cpu-us/pkt")
				b.ReportMetric(m.cpuPerPkt*1e6, "bmv2-cpu-us/pkt")
				b.ReportMetric(g.loss*100, "grid-loss-%")
				b.ReportMetric(m.loss*100, "bmv2-loss-%")
			})
		}
	}
}

// BenchmarkStartAndLoadSideBySideWithBmv2 measures starting a switch on 3
// veth ports in a fresh namespace (the same for both), until its
// P4Runtime server answers, plus loading the program and one entry.
func BenchmarkStartAndLoadSideBySideWithBmv2(b *testing.B) {
	needBoth(b)
	prog := benchProgram(b)
	took := map[p4test.TargetKind]time.Duration{}
	for range b.N {
		for _, kind := range sideBySide {
			begin := time.Now()
			r := startBench(b, kind, prog)
			took[kind] += time.Since(begin)
			r.Close()
		}
	}
	g, m := took[p4test.GridSwitch].Seconds()/float64(b.N), took[p4test.Bmv2].Seconds()/float64(b.N)
	b.ReportMetric(g*1e3, "grid-ms")
	b.ReportMetric(m*1e3, "bmv2-ms")
	b.ReportMetric(m/g, "x-faster-than-bmv2")
}

// BenchmarkP4RuntimeWritesSideBySideWithBmv2 measures table inserts over
// P4Runtime, one Write per entry, 1000 /32 routes (the table holds 1024).
func BenchmarkP4RuntimeWritesSideBySideWithBmv2(b *testing.B) {
	needBoth(b)
	prog := benchProgram(b)
	const entries = 1000
	rates := map[p4test.TargetKind][]float64{}
	for range b.N {
		for _, kind := range sideBySide {
			r := startBench(b, kind, prog)
			begin := time.Now()
			for i := range entries {
				_, err := r.AddEntry("MyIngress.ipv4_lpm", engine.Entry{Match: []engine.Match{{Value: []byte{10, 2, byte(i >> 8), byte(i)}, PrefixLen: 32}},
					Action: "MyIngress.ipv4_forward", Args: [][]byte{{0, 0, 0, 0, 1, 2}, {0, 2}}})
				if err != nil {
					b.Fatal(err)
				}
			}
			rates[kind] = append(rates[kind], entries/time.Since(begin).Seconds())
			r.Close()
		}
	}
	median := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	g, m := median(rates[p4test.GridSwitch]), median(rates[p4test.Bmv2])
	b.ReportMetric(g, "grid-writes/s")
	b.ReportMetric(m, "bmv2-writes/s")
	b.ReportMetric(g/m, "x-bmv2")
}

// BenchmarkCompileSideBySideWithP4c compiles the aggregator with `grid
// p4c` and with p4c-bm2-ss, each as a process of its own: wall time and
// peak resident memory.
func BenchmarkCompileSideBySideWithP4c(b *testing.B) {
	needBoth(b)
	src := filepath.Join(repo.RootOrFail(b), "p4", "aggregator", "aggregator.p4")
	out := b.TempDir()
	commands := map[string][]string{
		"grid": {targettest.GridBinary(b), "p4c", src, "-o", out},
		"p4c":  {p4test.P4cCompiler, "--p4v", "16", "-o", filepath.Join(out, "p4c.json"), "--p4runtime-files", filepath.Join(out, "p4c.p4info.txtpb"), src},
	}
	took, rss := map[string]time.Duration{}, map[string]int64{}
	for range b.N {
		for _, name := range []string{"grid", "p4c"} {
			cmd := exec.Command(commands[name][0], commands[name][1:]...)
			begin := time.Now()
			if outp, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%s: %v\n%s", name, err, outp)
			}
			took[name] += time.Since(begin)
			rss[name] = max(rss[name], cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
		}
	}
	g, p := took["grid"].Seconds()/float64(b.N), took["p4c"].Seconds()/float64(b.N)
	b.ReportMetric(g*1e3, "grid-ms")
	b.ReportMetric(p*1e3, "p4c-ms")
	b.ReportMetric(p/g, "x-faster-than-p4c")
	b.ReportMetric(float64(rss["grid"])/1024, "grid-peak-MB")
	b.ReportMetric(float64(rss["p4c"])/1024, "p4c-peak-MB")
	b.ReportMetric(float64(rss["p4c"])/float64(rss["grid"]), "x-less-memory-than-p4c")
}
