package aggbench

import (
	"fmt"
	"testing"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/internal/cputime"
)

// forwardWorkers is how many workers' fragments the forwarding benchmark's
// switch passes on, as a fabric switch on the path of a job's workers.
const forwardWorkers = 47

// BenchmarkForwardedFragment is one fragment-hop of the fragment-hops
// benchmark (harness/controller) without the kernel: a fragment crossing a
// switch that does not aggregate it (Geryon's plan), as the switch host
// runs it: the aggregator program on engine switches that take one packet
// at a time, with the data plane's egress queue model. The fragment misses
// agg_config, hits grad_route (its worker's path to the PS) and port_mac,
// is counted twice and gets a fresh IPv4 checksum. ns/op is per fragment.
// With switches=80 the fragments go round the switches of a k=8 fat-tree
// (one program, each switch its own tables and state), so that, as in the
// switch host, a switch's state is seldom still in the CPU's caches when
// its next fragment comes. In the switch host the kernel's work between
// two fragments of a switch (sockets, qdiscs, veths) leaves even less of
// it there; switches=800 goes round ten times as many switches, more
// state than the CPU's caches hold, so that what a fragment reads of its
// switch mostly comes from memory.
//
//	go test -run '^$' -bench ForwardedFragment ./harness/engine/aggbench
func BenchmarkForwardedFragment(b *testing.B) {
	for _, n := range []int{1, 80, 800} {
		b.Run(fmt.Sprintf("switches=%d", n), func(b *testing.B) { benchForwarded(b, n) })
	}
}

func benchForwarded(b *testing.B, switches int) {
	const values = 32
	st, err := gradproto.NewStar(1, 0, forwardWorkers, values)
	if err != nil {
		b.Fatal(err)
	}
	// Every worker's fragments follow its path to the PS, and the switch
	// aggregates another job's.
	for i, m := range st.Plan.Members {
		st.Config.GradRoutes = append(st.Config.GradRoutes, gradproto.GradRoute{Job: st.Plan.Job, Node: st.Plan.PSNode,
			Src: m.IP, Port: gradproto.StarPSPort, NextHop: gradproto.HostMAC(0)})
		st.Config.Aggregations = append(st.Config.Aggregations, gradproto.Aggregation{Job: st.Plan.Job + 1, Node: uint16(i + 1), FanIn: 2})
	}
	setup, err := aggregator.Entries(st.Config)
	if err != nil {
		b.Fatal(err)
	}
	var ports []dataplane.PortSpec
	for _, p := range st.Config.Ports {
		ports = append(ports, dataplane.PortSpec{Port: uint32(p.Port), Interface: "unused"})
	}
	sws := make([]*engine.Switch, switches)
	for i := range sws {
		queues, err := dataplane.NewQueues(ports, 1)
		if err != nil {
			b.Fatal(err)
		}
		sws[i] = engine.NewSwitch(aggregatorProgram(b, values), engine.Config{Serial: true, Queues: queues})
		if err := setup.Install(sws[i]); err != nil {
			b.Fatal(err)
		}
	}
	frames := make([][]byte, forwardWorkers)
	for m := range frames {
		w := gradproto.NewWorker(&st.Plan, m, map[uint32][]int32{0: make([]int32, values)})
		frames[m] = w.Originals()[0].Marshal()
	}
	sent := 0
	emit := func(o engine.Output) {
		if o.Port == gradproto.StarPSPort && o.Wait == 0 {
			sent++
		}
	}
	b.SetBytes(int64(len(frames[0])))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Used()
	for i := range b.N {
		m := i % forwardWorkers
		if err := sws[i%switches].Process(uint32(st.WorkerPort(m)), frames[m], emit); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportRates(b, cpu0)
	if sent != b.N {
		b.Fatalf("%d of %d fragments left for the PS at once", sent, b.N)
	}
}
