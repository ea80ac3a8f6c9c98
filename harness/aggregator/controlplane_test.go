package aggregator

import (
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/gradproto"
)

func TestEntriesRejectsABadPlanNamingTheEntry(t *testing.T) {
	for _, tc := range []struct {
		cfg  gradproto.SwitchConfig
		want string
	}{
		{gradproto.SwitchConfig{Aggregations: []gradproto.Aggregation{{Job: 1, Node: 1, FanIn: 65}}}, "aggregations[0]: fan-in 65"},
		{gradproto.SwitchConfig{Routes: []gradproto.Route{{Prefix: netip.MustParsePrefix("10.0.0.0/8"), Port: 600}}}, "routes[0]: port 600"},
		{gradproto.SwitchConfig{ResultGroups: []gradproto.ResultGroup{{Job: 1, Group: 0}}}, "result_groups[0]: multicast group 0"},
		{gradproto.SwitchConfig{Capacity: &gradproto.Capacity{PacketsPerSecond: 0, Burst: 4}}, "capacity: rate 0"},
		{gradproto.SwitchConfig{GradRoutes: []gradproto.GradRoute{{Job: 1, Node: 2, Src: netip.AddrFrom4([4]byte{10, 0, 1, 1}), Port: 1}, {Job: 1, Node: 2, Src: netip.AddrFrom4([4]byte{10, 0, 1, 1}), Port: 2}}},
			"grad_routes[1]: job 1 node 2 worker 10.0.1.1 already in grad_routes[0]"},
		{gradproto.SwitchConfig{GradRoutes: []gradproto.GradRoute{{Job: 1, Node: 2, Port: 1}}}, "grad_routes[0]: worker address invalid IP is not an IPv4 address"},
		{gradproto.SwitchConfig{Routes: []gradproto.Route{{Prefix: netip.MustParsePrefix("10.0.0.0/8")}, {Prefix: netip.MustParsePrefix("10.1.0.0/8")}}},
			"routes[1]: prefix 10.0.0.0/8 already in routes[0]"},
	} {
		_, err := Entries(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Entries(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}

func TestEntryRendersAsSTF(t *testing.T) {
	e := TableEntry{Table: TableIPv4LPM,
		Keys:   []Field{{Name: "hdr.ipv4.dstAddr", Value: 0x0a000000, Bits: 32, PrefixLen: 8}},
		Action: ActionForward, Params: []Field{exact("dmac", 0x020000000001, 48), exact("port", 3, 9)}}
	const want = "add GridIngress.ipv4_lpm hdr.ipv4.dstAddr:0x0a000000/8 GridIngress.forward(dmac:0x020000000001, port:0x003)"
	if got := e.STF(); got != want {
		t.Fatalf("STF %q, want %q", got, want)
	}
}

// TestP4InfoHasEveryObjectTheControlPlaneNames keeps the names in
// controlplane.go in step with the program, so a P4Runtime controller finds
// the same objects.
func TestP4InfoHasEveryObjectTheControlPlaneNames(t *testing.T) {
	res, err := Compile(filepath.Join(programDir(t), "aggregator.p4"), Build{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	info := res.P4Info
	for _, x := range info.Tables {
		names[x.Preamble.Name] = true
	}
	for _, x := range info.Actions {
		names[x.Preamble.Name] = true
	}
	for _, x := range info.Counters {
		names[x.Preamble.Name] = true
		if x.Preamble.Name == CounterJobStat && x.Size != gradproto.StatsJobs*gradproto.StatsStride {
			t.Errorf("job_stats has %d cells, want %d", x.Size, gradproto.StatsJobs*gradproto.StatsStride)
		}
	}
	for _, x := range info.DirectCounters {
		names[x.Preamble.Name] = true
	}
	for _, x := range info.Meters {
		names[x.Preamble.Name] = true
		if x.Spec.Unit != p4configv1.MeterSpec_PACKETS {
			t.Errorf("meter %s counts %v, want packets", x.Preamble.Name, x.Spec.Unit)
		}
	}
	for _, x := range info.Registers {
		names[x.Preamble.Name] = true
	}
	want := []string{TableIPv4LPM, TableGradRoute, TableAggConfig, TableJobMcast, TableResultHost, TablePortMAC,
		ActionForward, ActionAggregate, ActionAggregateAlias, ActionMulticast, ActionToHost, ActionSetSrcMAC,
		MeterCapacity, CounterJobStat, CounterPortRx, CounterPortTx, CounterGradRoute}
	want = append(want, unitRegisters...)
	for _, n := range want {
		if !names[n] {
			t.Errorf("P4Info has no %s", n)
		}
	}
}

func TestResetUnitsFreesAnActiveUnit(t *testing.T) {
	st, err := gradproto.NewStar(1, 2, 0, 32)
	if err != nil {
		t.Fatal(err)
	}
	setup, err := Entries(st.Config)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngineFabric(compileForEngine(t, Build{Units: 8}), engine.Config{}, setup)
	if err != nil {
		t.Fatal(err)
	}
	w := gradproto.NewWorker(&st.Plan, 0, map[uint32][]int32{3: make([]int32, 32)})
	frame := w.Originals()[0].Marshal()
	if out, err := eng.Process(st.WorkerPort(0), frame); err != nil || len(out) != 0 {
		t.Fatalf("first fragment: %v %v", out, err)
	}
	idx := gradproto.UnitIndex(1, 3, 8)
	tags, _ := eng.UnitTags()
	if tags[idx]>>48 != gradproto.UnitActive {
		t.Fatalf("unit %d tag %#x, want active", idx, tags[idx])
	}
	if err := ResetUnits(eng.Switch); err != nil {
		t.Fatal(err)
	}
	tags, _ = eng.UnitTags()
	if tags[idx] != 0 {
		t.Fatalf("unit %d tag %#x after reset", idx, tags[idx])
	}
	// The same worker's fragment is no longer a duplicate: it starts afresh.
	if out, err := eng.Process(st.WorkerPort(0), frame); err != nil || len(out) != 0 {
		t.Fatalf("after reset: %v %v", out, err)
	}
	if st, _ := eng.JobStats(1); st[gradproto.EvAbsorbed] != 2 || st[gradproto.EvDuplicate] != 0 {
		t.Fatalf("stats after reset %v", st)
	}
}
