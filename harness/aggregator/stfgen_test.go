package aggregator

import (
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/stf"
)

// The STF regression tests in p4/aggregator/tests are generated here: each
// case drives the Go reference model (harness/gradproto) and writes the
// packets it sends and the packets the model says come out, so expected
// bytes never come from running the P4 program itself.
//
//	go test ./harness/aggregator -run TestSTFFilesAreCurrent -update

// stfBuilder accumulates one STF file.
type stfBuilder struct {
	t     *testing.T
	build Build
	star  *gradproto.Star
	sw    *gradproto.Switch
	clock time.Time
	lines []string
}

func newBuilder(t *testing.T, b Build, star *gradproto.Star) *stfBuilder {
	t.Helper()
	sw, err := gradproto.NewSwitch(star.Config, b.ValueCount(), b.UnitCount())
	if err != nil {
		t.Fatal(err)
	}
	sb := &stfBuilder{t: t, build: b, star: star, sw: sw, clock: time.Unix(0, 0)}
	// The engine target's clock starts with the switch and advances 1 µs
	// per packet and by advance_clock; so does the model's. A real-time
	// target (bmv2, grid switch) takes milliseconds per packet instead, so
	// a case may depend on time only through advance_clock, with margins
	// far above a packet's real time.
	sw.Now, sw.Start = func() time.Time { return sb.clock }, sb.clock
	setup, err := Entries(star.Config)
	if err != nil {
		t.Fatal(err)
	}
	if defs := b.Defines(); len(defs) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(defs)) {
			parts = append(parts, k+"="+defs[k])
		}
		sb.lines = append(sb.lines, stf.BuildPrefix+" "+strings.Join(parts, " "))
	}
	sb.lines = append(sb.lines, "", "# Control plane (harness/aggregator.Entries)")
	sb.lines = append(sb.lines, setup.STF()...)
	return sb
}

func (b *stfBuilder) note(format string, args ...any) {
	b.lines = append(b.lines, "", "# "+fmt.Sprintf(format, args...))
}

// frameHex splits a frame at its headers for readability.
func frameHex(f []byte) string {
	cuts := []int{gradproto.EthernetLen, gradproto.EthernetLen + gradproto.IPv4Len, gradproto.FrameOverhead, gradproto.FrameOverhead + gradproto.HeaderLen}
	var parts []string
	prev := 0
	for _, c := range cuts {
		if c > len(f) {
			break
		}
		parts = append(parts, hex.EncodeToString(f[prev:c]))
		prev = c
	}
	if prev < len(f) {
		parts = append(parts, hex.EncodeToString(f[prev:]))
	}
	return strings.ToUpper(strings.Join(parts, " "))
}

// send injects a frame and expects what the model emits.
func (b *stfBuilder) send(port uint16, frame []byte) []gradproto.Output {
	b.clock = b.clock.Add(time.Microsecond)
	outs := b.sw.Process(port, frame)
	b.lines = append(b.lines, fmt.Sprintf("packet %d %s", port, frameHex(frame)))
	for _, o := range outs {
		b.lines = append(b.lines, fmt.Sprintf("expect %d %s $", o.Port, frameHex(o.Frame)))
	}
	return outs
}

// advance moves the clock forward by d: the model's, and the switch's with
// an advance_clock line (a real-time target sleeps that long).
func (b *stfBuilder) advance(d time.Duration) {
	if d%time.Millisecond != 0 {
		b.t.Fatalf("advance %v: the cases advance whole milliseconds", d)
	}
	b.clock = b.clock.Add(d)
	b.lines = append(b.lines, fmt.Sprintf("advance_clock %dms", d/time.Millisecond))
}

// frag is member m's fragment with values vals(i).
func (b *stfBuilder) frag(plan *gradproto.Plan, m int, frag uint32, flags uint8, vals func(i int) int32) []byte {
	mem := plan.Members[m]
	p := &gradproto.Packet{
		DstMAC: plan.Gateway, SrcMAC: mem.MAC, SrcIP: mem.IP, DstIP: plan.PSIP, TTL: 64,
		SrcPort: gradproto.UDPPort, DstPort: gradproto.UDPPort,
		Header: gradproto.Header{Version: gradproto.Version, Flags: flags, Job: plan.Job, Node: mem.Node, Count: 1, Frag: frag, Bitmap: 1 << mem.Slot},
		Values: make([]int32, plan.Values),
	}
	for i := range p.Values {
		p.Values[i] = vals(i)
	}
	return p.Marshal()
}

// result is the PS's result packet for frag with values vals(i).
func (b *stfBuilder) result(plan *gradproto.Plan, frag uint32, vals func(i int) int32) []byte {
	return b.resultTo(plan, gradproto.Broadcast, frag, vals)
}

// resultTo is the PS's result of frag addressed to dst: 255.255.255.255
// for every worker, a worker's address for it alone.
func (b *stfBuilder) resultTo(plan *gradproto.Plan, dst netip.Addr, frag uint32, vals func(i int) int32) []byte {
	p := &gradproto.Packet{
		DstMAC: plan.Gateway, SrcMAC: gradproto.HostMAC(0), SrcIP: plan.PSIP, DstIP: dst, TTL: 64,
		SrcPort: gradproto.UDPPort, DstPort: gradproto.UDPPort,
		Header: gradproto.Header{Version: gradproto.Version, Flags: gradproto.FlagResult, Job: plan.Job, Node: plan.PSNode, Count: uint16(len(plan.Members)), Frag: frag},
		Values: make([]int32, plan.Values),
	}
	for i := range p.Values {
		p.Values[i] = vals(i)
	}
	return p.Marshal()
}

// checkStats asserts every job_stats cell of job that the model counted.
func (b *stfBuilder) checkStats(job uint16) {
	st := b.sw.Stats[job]
	if st == nil {
		b.t.Fatalf("model counted nothing for job %d", job)
	}
	b.note("Per-job statistics of job %d (received, absorbed, emitted, collision, duplicate, overflow, capacity, passed, reclaimed)", job)
	for ev := gradproto.Event(0); ev < gradproto.NumEvents; ev++ {
		b.lines = append(b.lines, fmt.Sprintf("check_counter %s(%d) packets == %d", CounterJobStat, StatIndex(job, ev), st[ev]))
	}
}

// checkPorts asserts the per-port packet counters port_rx and port_tx of
// ports, as the model counted them.
func (b *stfBuilder) checkPorts(ports ...uint16) {
	b.note("Per-port packet counters (port_rx, port_tx)")
	for _, p := range ports {
		b.lines = append(b.lines,
			fmt.Sprintf("check_counter %s(%d) packets == %d", CounterPortRx, p, b.sw.PortRx[p]),
			fmt.Sprintf("check_counter %s(%d) packets == %d", CounterPortTx, p, b.sw.PortTx[p]))
	}
}

// checkUnit asserts the state of the unit (job, frag) maps to.
func (b *stfBuilder) checkUnit(job uint16, frag uint32, wantState uint16) {
	b.checkUnitAfter(job, frag, 0, wantState)
}

// checkUnitAfter asserts the state of the unit offset units after the one
// (job, frag) maps to (aggregate_alias).
func (b *stfBuilder) checkUnitAfter(job uint16, frag uint32, offset int, wantState uint16) {
	units := len(b.sw.Units())
	idx := (gradproto.UnitIndex(job, frag, units) + offset) % units
	u := b.sw.Units()[idx]
	if u.State != wantState {
		b.t.Fatalf("model: unit %d of job %d fragment %d in state %d, case expects %d", idx, job, frag, u.State, wantState)
	}
	b.lines = append(b.lines, fmt.Sprintf("check_register %s(%d) == 0x%016x", RegisterUnitTag, idx, u.Tag()))
}

func (b *stfBuilder) text(doc string) string {
	var out strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(doc), "\n") {
		out.WriteString("# " + strings.TrimSpace(l) + "\n")
	}
	out.WriteString("# Generated by harness/aggregator from the Go reference model (go test ./harness/aggregator -run TestSTFFilesAreCurrent -update).\n")
	for _, l := range b.lines {
		out.WriteString(l + "\n")
	}
	return out.String()
}

func mustStar(t *testing.T, job uint16, fanIn, direct, values int) *gradproto.Star {
	t.Helper()
	st, err := gradproto.NewStar(job, fanIn, direct, values)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// val gives worker m's i-th value: distinct, some negative.
func val(m int) func(i int) int32 {
	return func(i int) int32 { return int32((m+1)*1000 + i*(1-2*(i%2))) }
}

type stfCase struct {
	name string
	doc  string
	gen  func(t *testing.T) *stfBuilder
}

var stfCases = []stfCase{
	{"aggregate_fanin4", `Four workers send fragment 5 of job 1 to this switch (node 1, fan-in 4):
		the first three are absorbed, the fourth completes the unit and exactly one packet with
		the exact sums, count 4 and bitmap 0xf goes to the PS; the unit is then done.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 4, 0, 32)
			b := newBuilder(t, Build{}, st)
			for m := 0; m < 4; m++ {
				b.note("worker %d", m)
				b.send(st.WorkerPort(m), b.frag(&st.Plan, m, 5, 0, val(m)))
			}
			b.checkUnit(1, 5, gradproto.UnitDone)
			b.checkStats(1)
			b.checkPorts(0, 1, 2, 3, 4)
			return b
		}},
	{"aggregate_fanin64", `Sixty-four workers (the widest bitmap) aggregate fragment 77 of job 3:
		one packet with count 64 and bitmap 0xffffffffffffffff reaches the PS.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 3, 64, 0, 32)
			b := newBuilder(t, Build{}, st)
			for m := 0; m < 64; m++ {
				b.send(st.WorkerPort(m), b.frag(&st.Plan, m, 77, 0, val(m)))
			}
			b.checkUnit(3, 77, gradproto.UnitDone)
			b.checkStats(3)
			return b
		}},
	{"aggregate_alias", `Two sets of workers of one fragment at one switch (a bitmap has 64 slots):
		workers 0 and 1 aggregate under the switch's node 1 (fan-in 2), workers 2 and 3 under its
		further node id 5 (aggregate_alias, fan-in 2, unit offset 1). Their fragments 5 arrive
		interleaved and never meet: each set fills its own unit, the one after the hash's for node 5,
		and sends its own partial sum (count 2, bitmap 0x3, its node id) to the PS. A fragment of
		node 5 whose hash names the last unit wraps around to unit 0.`,
		func(t *testing.T) *stfBuilder {
			const alias = 5
			st := mustStar(t, 1, 4, 0, 32)
			st.Config.Aggregations = []gradproto.Aggregation{{Job: 1, Node: st.SwitchNode, FanIn: 2}, {Job: 1, Node: alias, FanIn: 2, UnitOffset: 1}}
			for m := 2; m < 4; m++ {
				st.Plan.Members[m].Node, st.Plan.Members[m].Slot = alias, uint8(m-2)
			}
			b := newBuilder(t, Build{}, st)
			for _, m := range []int{0, 2, 1, 3} {
				b.note("worker %d (node %d)", m, st.Plan.Members[m].Node)
				b.send(st.WorkerPort(m), b.frag(&st.Plan, m, 5, 0, val(m)))
			}
			b.checkUnit(1, 5, gradproto.UnitDone)
			b.checkUnitAfter(1, 5, 1, gradproto.UnitDone)
			last := uint32(6)
			for gradproto.UnitIndex(1, last, gradproto.DefaultUnits) != gradproto.DefaultUnits-1 {
				last++
			}
			b.note("fragment %d hashes to the last unit; node %d's take unit 0", last, alias)
			b.send(st.WorkerPort(2), b.frag(&st.Plan, 2, last, 0, val(2)))
			b.checkUnitAfter(1, last, 1, gradproto.UnitActive)
			b.send(st.WorkerPort(3), b.frag(&st.Plan, 3, last, 0, val(3)))
			b.checkUnitAfter(1, last, 1, gradproto.UnitDone)
			b.checkStats(1)
			b.checkPorts(0, 1, 2, 3, 4)
			return b
		}},
	{"aggregate_values64", `The 64-value build (GRID_VALUES_64): three workers, 64 int32 values each.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 3, 0, 64)
			b := newBuilder(t, Build{Values: 64}, st)
			for m := 0; m < 3; m++ {
				b.send(st.WorkerPort(m), b.frag(&st.Plan, m, 9, 0, val(m)))
			}
			b.checkStats(1)
			return b
		}},
	{"forward_other_node", `Fragments for other aggregation nodes are forwarded unchanged except
		for the MAC addresses, TTL and IPv4 checksum: worker 0's for node 2 follows its grad_route entry
		out port 9 (off the shortest path to the PS), worker 1's for node 2 has no entry (routes are per
		worker) and goes by IPv4, one for the PS node goes by IPv4 to the PS, plain
		UDP goes by IPv4, a packet without a route and a non-IPv4 frame are dropped. A fragment for
		this switch's node with 64 values (the other build's UDP length) is not aggregated, nor its
		first 32 values added: it goes by IPv4 to the PS.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 2, 1, 32)
			st.Config.GradRoutes = []gradproto.GradRoute{{Job: 1, Node: 2, Src: st.Plan.Members[0].IP, Port: 9, NextHop: gradproto.HostMAC(900)}}
			st.Config.Ports = append(st.Config.Ports, gradproto.PortMAC{Port: 9, MAC: gradproto.SwitchPortMAC(9)})
			b := newBuilder(t, Build{}, st)
			other := st.Plan
			other.Members = append([]gradproto.Member(nil), st.Plan.Members...)
			other.Members[0].Node = 2
			b.note("worker 0's fragment for node 2: its grad_route entry")
			b.send(st.WorkerPort(0), b.frag(&other, 0, 4, 0, val(0)))
			b.note("worker 1's fragment for node 2: no entry for worker 1, IPv4 to the PS")
			other.Members[1].Node = 2
			b.send(st.WorkerPort(1), b.frag(&other, 1, 4, 0, val(1)))
			b.note("fragment for the PS node: IPv4 to the PS")
			b.send(st.WorkerPort(2), b.frag(&st.Plan, 2, 4, 0, val(2)))
			b.note("plain UDP to port 53")
			plain := b.frag(&st.Plan, 1, 4, 0, val(1))
			plain[gradproto.EthernetLen+gradproto.IPv4Len+2] = 0
			plain[gradproto.EthernetLen+gradproto.IPv4Len+3] = 53
			b.send(st.WorkerPort(1), plain)
			b.note("no route for 192.0.2.1: dropped")
			noRoute := b.frag(&st.Plan, 1, 4, 0, val(1))
			copy(noRoute[gradproto.EthernetLen+16:], []byte{192, 0, 2, 1})
			gradproto.SetIPv4Checksum(noRoute[gradproto.EthernetLen : gradproto.EthernetLen+gradproto.IPv4Len])
			noRoute[gradproto.EthernetLen+gradproto.IPv4Len+2] = 0
			b.send(st.WorkerPort(1), noRoute)
			b.note("64 values into the 32-value build: forwarded, not aggregated")
			wide := st.Plan
			wide.Values = 64
			b.send(st.WorkerPort(1), b.frag(&wide, 1, 4, 0, val(1)))
			b.note("ARP: dropped")
			arp := make([]byte, 42)
			copy(arp, plain[:12])
			arp[12], arp[13] = 0x08, 0x06
			b.send(st.WorkerPort(1), arp)
			return b
		}},
	{"collision", `Fragment 1 of job 1 occupies its unit; worker 1's fragment of another
		fragment id that hashes to the same unit collides: it is dropped and a control packet
		(flag 0x40, ECN CE, no values, addresses swapped) goes back to worker 1.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 3, 0, 32)
			b := newBuilder(t, Build{}, st)
			other := gradproto.CollidingFragment(1, 1, 1, gradproto.DefaultUnits)
			b.note("fragment 1 from worker 0 takes unit %d", gradproto.UnitIndex(1, 1, gradproto.DefaultUnits))
			b.send(st.WorkerPort(0), b.frag(&st.Plan, 0, 1, 0, val(0)))
			b.note("fragment %d from worker 1 maps to the same unit", other)
			b.send(st.WorkerPort(1), b.frag(&st.Plan, 1, other, 0, val(1)))
			b.checkUnit(1, 1, gradproto.UnitActive)
			b.checkStats(1)
			return b
		}},
	{"duplicate", `A retransmitted copy of worker 0's fragment is ignored while the unit
		is active and after it completed: the sums count worker 0 once.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 2, 0, 32)
			b := newBuilder(t, Build{}, st)
			f0 := b.frag(&st.Plan, 0, 6, 0, val(0))
			b.send(st.WorkerPort(0), f0)
			b.note("duplicate while active: dropped")
			b.send(st.WorkerPort(0), f0)
			b.send(st.WorkerPort(1), b.frag(&st.Plan, 1, 6, 0, val(1)))
			b.note("duplicate after completion: dropped")
			b.send(st.WorkerPort(0), f0)
			b.checkUnit(1, 6, gradproto.UnitDone)
			b.checkStats(1)
			return b
		}},
	{"unit_reuse", `After fragment 1 completes, its unit is free for reuse: another fragment
		that maps to the same unit aggregates there without a collision.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 2, 0, 32)
			b := newBuilder(t, Build{}, st)
			other := gradproto.CollidingFragment(1, 1, 1, gradproto.DefaultUnits)
			for m := 0; m < 2; m++ {
				b.send(st.WorkerPort(m), b.frag(&st.Plan, m, 1, 0, val(m)))
			}
			b.note("fragment %d maps to the freed unit", other)
			for m := 0; m < 2; m++ {
				b.send(st.WorkerPort(m), b.frag(&st.Plan, m, other, 0, val(m+5)))
			}
			b.checkUnit(1, other, gradproto.UnitDone)
			b.checkStats(1)
			return b
		}},
	{"two_jobs", `Jobs 1 and 2 share the switch and the workers and use the same fragment
		ids; their fragments interleave and each job gets its own exact sums.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 2, 0, 32)
			plan2 := st.Plan
			plan2.Job = 2
			st.Config.Aggregations = append(st.Config.Aggregations, gradproto.Aggregation{Job: 2, Node: st.SwitchNode, FanIn: 2})
			b := newBuilder(t, Build{}, st)
			for _, f := range []uint32{10, 11} {
				b.send(st.WorkerPort(0), b.frag(&st.Plan, 0, f, 0, val(0)))
				b.send(st.WorkerPort(0), b.frag(&plan2, 0, f, 0, val(7)))
			}
			for _, f := range []uint32{11, 10} {
				b.send(st.WorkerPort(1), b.frag(&plan2, 1, f, 0, val(8)))
				b.send(st.WorkerPort(1), b.frag(&st.Plan, 1, f, 0, val(1)))
			}
			for _, job := range []uint16{1, 2} {
				for _, f := range []uint32{10, 11} {
					b.checkUnit(job, f, gradproto.UnitDone)
				}
			}
			b.checkStats(1)
			b.checkStats(2)
			return b
		}},
	{"overflow", `Adding worker 1's values to worker 0's would overflow int32: the switch
		sends worker 0's partial sum on (flags 0x18: aggregated + overflow) and restarts the unit's
		sum with worker 1's values; worker 2 completes the unit with the remaining sum of two.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 3, 0, 32)
			b := newBuilder(t, Build{}, st)
			big := func(i int) int32 { return math.MaxInt32 - int32(i) }
			neg := func(i int) int32 { return math.MinInt32 + int32(i) }
			b.send(st.WorkerPort(0), b.frag(&st.Plan, 0, 2, 0, big))
			b.note("lane 0 would overflow")
			b.send(st.WorkerPort(1), b.frag(&st.Plan, 1, 2, 0, func(i int) int32 {
				if i == 0 {
					return 1
				}
				return 0
			}))
			b.send(st.WorkerPort(2), b.frag(&st.Plan, 2, 2, 0, neg))
			b.checkUnit(1, 2, gradproto.UnitDone)
			b.checkStats(1)
			return b
		}},
	{"reclaim_idle_unit", `Fragment 1 of job 1 takes a unit and its other workers never come (say,
		a late duplicate after the fragment finished). The plan's reclaim time is 500 ms: worker 1's
		fragment that maps to the same unit collides at first, but once the unit has been idle for
		longer than that (advance_clock 800ms: the engine moves its virtual clock, a real switch
		sleeps) it takes the unit over (event reclaimed). Packets take 1 µs each on the engine and
		a few ms on a real switch, far below the reclaim time.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 3, 0, 32)
			st.Config.SetReclaim(500 * time.Millisecond)
			b := newBuilder(t, Build{}, st)
			other := gradproto.CollidingFragment(1, 1, 1, gradproto.DefaultUnits)
			b.note("fragment 1 takes the unit")
			b.send(st.WorkerPort(0), b.frag(&st.Plan, 0, 1, 0, val(0)))
			b.note("idle for less than the reclaim time: collision")
			b.send(st.WorkerPort(1), b.frag(&st.Plan, 1, other, 0, val(1)))
			b.note("the PS's results for other fragments pass by")
			for f := uint32(100); f < 103; f++ {
				b.send(gradproto.StarPSPort, b.result(&st.Plan, f, val(9)))
			}
			b.note("800 ms later the unit has been idle for longer than the reclaim time: worker 1 takes it over")
			b.advance(800 * time.Millisecond)
			b.send(st.WorkerPort(1), b.frag(&st.Plan, 1, other, 0, val(1)))
			b.checkUnit(1, other, gradproto.UnitActive)
			b.checkStats(1)
			return b
		}},
	{"meter_excess", `The capacity meter (C_s = 1 fragment/s, burst 2) admits two fragments;
		the third exceeds the switch's processing capacity and is answered like a collision,
		with a control packet. The three arrive within milliseconds on any target, far less than
		the second the meter takes to earn a fragment back.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 4, 0, 32)
			st.Config.Capacity = &gradproto.Capacity{PacketsPerSecond: 1, Burst: 2}
			b := newBuilder(t, Build{}, st)
			for m := 0; m < 3; m++ {
				b.send(st.WorkerPort(m), b.frag(&st.Plan, m, 3, 0, val(m)))
			}
			b.checkStats(1)
			return b
		}},
	{"result_multicast", `The PS's result for job 1 is replicated to the three worker ports of
		job 1's group for port 0 (not to port 4, which serves another job) with each worker's MAC and
		IP. Groups are per arrival port: a result of job 1 coming back in on port 4 (as from another
		switch on the way back) goes to port 2 only; one arriving on port 3, where job 1 has no group,
		is routed by IPv4, and 255.255.255.255 has no route: dropped. A result the PS addresses to
		worker 1 (its answer to a resend) is routed by IPv4 to worker 1's port alone.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 3, 1, 32)
			st.Config.ResultGroups[0].Ports = st.Config.ResultGroups[0].Ports[:3]
			st.Config.ResultGroups = append(st.Config.ResultGroups, gradproto.ResultGroup{Job: 1, InPort: 4, Group: 7, Ports: []uint16{2}})
			st.Config.ResultHosts = st.Config.ResultHosts[:3]
			b := newBuilder(t, Build{}, st)
			b.note("from the PS on port 0")
			b.send(gradproto.StarPSPort, b.result(&st.Plan, 5, val(9)))
			b.note("back in on port 4")
			b.send(4, b.result(&st.Plan, 6, val(9)))
			b.note("in on port 3: no group")
			b.send(3, b.result(&st.Plan, 7, val(9)))
			b.note("from the PS on port 0, addressed to worker 1")
			b.send(gradproto.StarPSPort, b.resultTo(&st.Plan, st.Plan.Members[1].IP, 8, val(9)))
			b.checkPorts(0, 1, 2, 3, 4)
			return b
		}},
	{"loss_fragment", `Loss of a fragment: worker 2's original is lost. Workers 0 and 1 are
		absorbed; worker 2's timeout resend (flag 0x20) completes the unit, which sends the full sum.
		Worker 0's own timeout resend then finds the unit done and passes to the PS alone (the PS
		ignores it: worker 0 is already in the sum).`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 3, 0, 32)
			b := newBuilder(t, Build{}, st)
			b.send(st.WorkerPort(0), b.frag(&st.Plan, 0, 8, 0, val(0)))
			b.send(st.WorkerPort(1), b.frag(&st.Plan, 1, 8, 0, val(1)))
			b.note("worker 2's original is lost; its resend:")
			b.send(st.WorkerPort(2), b.frag(&st.Plan, 2, 8, gradproto.FlagResend, val(2)))
			b.note("worker 0's resend:")
			b.send(st.WorkerPort(0), b.frag(&st.Plan, 0, 8, gradproto.FlagResend, val(0)))
			b.checkUnit(1, 8, gradproto.UnitDone)
			b.checkStats(1)
			return b
		}},
	{"loss_partial", `Loss of the partial sum: the unit completes and its packet to the PS is
		lost. Every worker times out and resends; the unit is done, so each resend passes to the PS
		alone and the PS adds the three.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 3, 0, 32)
			b := newBuilder(t, Build{}, st)
			for m := 0; m < 3; m++ {
				b.send(st.WorkerPort(m), b.frag(&st.Plan, m, 8, 0, val(m)))
			}
			b.note("the partial sum above is lost; the resends:")
			for m := 0; m < 3; m++ {
				b.send(st.WorkerPort(m), b.frag(&st.Plan, m, 8, gradproto.FlagResend, val(m)))
			}
			b.checkUnit(1, 8, gradproto.UnitDone)
			b.checkStats(1)
			return b
		}},
	{"loss_result", `Loss of a result: the PS's result reaches worker 0 but not worker 1.
		Worker 1 resends; its resend passes to the PS, which answers with the result again,
		addressed to worker 1: the switch routes it to worker 1 alone.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 2, 0, 32)
			b := newBuilder(t, Build{}, st)
			for m := 0; m < 2; m++ {
				b.send(st.WorkerPort(m), b.frag(&st.Plan, m, 8, 0, val(m)))
			}
			sum := func(i int) int32 { return val(0)(i) + val(1)(i) }
			b.send(gradproto.StarPSPort, b.result(&st.Plan, 8, sum))
			b.note("the copy to worker 1 is lost; worker 1 resends:")
			b.send(st.WorkerPort(1), b.frag(&st.Plan, 1, 8, gradproto.FlagResend, val(1)))
			b.note("the PS sends the result again, to worker 1")
			b.send(gradproto.StarPSPort, b.resultTo(&st.Plan, st.Plan.Members[1].IP, 8, sum))
			b.checkUnit(1, 8, gradproto.UnitDone)
			b.checkStats(1)
			return b
		}},
	{"loss_control", `Loss of a control packet: worker 1's fragment collides and the control
		packet is lost. Worker 1 times out and resends; the unit still holds the other fragment, so
		the resend passes to the PS without touching it.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 2, 0, 32)
			b := newBuilder(t, Build{}, st)
			other := gradproto.CollidingFragment(1, 1, 1, gradproto.DefaultUnits)
			b.send(st.WorkerPort(0), b.frag(&st.Plan, 0, 1, 0, val(0)))
			b.send(st.WorkerPort(1), b.frag(&st.Plan, 1, other, 0, val(1)))
			b.note("the control packet above is lost; worker 1's resend:")
			b.send(st.WorkerPort(1), b.frag(&st.Plan, 1, other, gradproto.FlagResend, val(1)))
			b.checkUnit(1, 1, gradproto.UnitActive)
			b.note("worker 1's fragment 1 completes the unit")
			b.send(st.WorkerPort(1), b.frag(&st.Plan, 1, 1, 0, val(1)))
			b.checkUnit(1, 1, gradproto.UnitDone)
			b.checkStats(1)
			return b
		}},
	{"loss_flush", `A unit waiting for a lost fragment is released by a resend: worker 1's
		original is lost, worker 0 (already in the unit) times out and resends, so the switch sends
		what the unit holds to the PS and marks it done. Worker 2's late original then passes to the
		PS alone, and so does worker 1's resend: the PS has all three and no unit stays active.`,
		func(t *testing.T) *stfBuilder {
			st := mustStar(t, 1, 3, 0, 32)
			b := newBuilder(t, Build{}, st)
			b.send(st.WorkerPort(0), b.frag(&st.Plan, 0, 8, 0, val(0)))
			b.note("worker 1's original is lost; worker 0's resend flushes the unit:")
			b.send(st.WorkerPort(0), b.frag(&st.Plan, 0, 8, gradproto.FlagResend, val(0)))
			b.send(st.WorkerPort(2), b.frag(&st.Plan, 2, 8, 0, val(2)))
			b.send(st.WorkerPort(1), b.frag(&st.Plan, 1, 8, gradproto.FlagResend, val(1)))
			b.checkUnit(1, 8, gradproto.UnitDone)
			b.checkStats(1)
			return b
		}},
}

func TestSTFFilesAreCurrent(t *testing.T) {
	dir := filepath.Join(programDir(t), "tests")
	for _, c := range stfCases {
		t.Run(c.name, func(t *testing.T) {
			checkGenerated(t, filepath.Join(dir, c.name+".stf"), c.gen(t).text(c.doc), "the reference model")
		})
	}
}
