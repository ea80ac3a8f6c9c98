package topo

import (
	"fmt"
	"strings"
	"testing"
)

func countTiers(t *Topology) map[Tier]int {
	out := map[Tier]int{}
	for _, n := range t.Switches() {
		out[n.Tier]++
	}
	return out
}

func TestFatTreeK4HasTwentySwitchesSixteenHostsFortyEightLinks(t *testing.T) {
	ft, err := FatTree(4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(ft.Switches()); got != 20 {
		t.Errorf("switches = %d, want 20", got)
	}
	if got := len(ft.Hosts()); got != 16 {
		t.Errorf("hosts = %d, want 16", got)
	}
	if got := len(ft.Links); got != 48 {
		t.Errorf("links = %d, want 48", got)
	}
	tiers := countTiers(ft)
	if tiers[TierCore] != 4 || tiers[TierAgg] != 8 || tiers[TierEdge] != 8 {
		t.Errorf("tiers = %v, want 4 core, 8 agg, 8 edge", tiers)
	}
	if ft.Name != "fattree-k4" {
		t.Errorf("name = %q", ft.Name)
	}
}

func TestFatTreeK8WithSixHostsPerEdgeMatchesPaperSimulation(t *testing.T) {
	ft, err := FatTree(8, 6)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(ft.Switches()); got != 80 {
		t.Errorf("switches = %d, want 80", got)
	}
	if got := len(ft.Hosts()); got != 192 {
		t.Errorf("hosts = %d, want 192", got)
	}
	// 128 core-agg + 128 agg-edge + 192 edge-host.
	if got := len(ft.Links); got != 448 {
		t.Errorf("links = %d, want 448", got)
	}
	if got := len(ft.PSs()); got != 1 || ft.PSs()[0].Name != "h192" {
		t.Errorf("PSs = %v, want only h192", ft.PSs())
	}
	if got := len(ft.Workers()); got != 191 {
		t.Errorf("workers = %d, want 191", got)
	}
}

func TestFatTreePortsFollowAlFaresLayout(t *testing.T) {
	ft, err := FatTree(4, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Edge e1 (pod 0): hosts h1, h2 on p1, p2; aggregation a1, a2 on p3, p4.
	want := map[int]string{1: "h1", 2: "h2", 3: "a1", 4: "a2"}
	for _, adj := range ft.Neighbors("e1") {
		if want[adj.Port] != adj.Peer.Node {
			t.Errorf("e1:p%d -> %s, want %s", adj.Port, adj.Peer.Node, want[adj.Port])
		}
	}
	// Aggregation a2 (pod 0, index 1) reaches cores c3, c4 on p3, p4; core c3 has pod q on p(q+1).
	if l := ft.Link("a2", "c3"); l == nil || l.A != (Endpoint{"c3", 1}) || l.B != (Endpoint{"a2", 3}) {
		t.Errorf("a2-c3 link = %+v", l)
	}
	if l := ft.Link("a8", "c4"); l == nil || l.A != (Endpoint{"c4", 4}) || l.B != (Endpoint{"a8", 4}) {
		t.Errorf("a8-c4 link = %+v", l)
	}
	for _, c := range []string{"c1", "c2", "c3", "c4"} {
		if got := len(ft.Neighbors(c)); got != 4 {
			t.Errorf("%s has %d neighbours, want k=4", c, got)
		}
	}
}

func TestGeneratorsRejectBadParametersNamingTheParameter(t *testing.T) {
	for _, c := range []struct {
		name string
		gen  func() (*Topology, error)
		want string
	}{
		{"odd k", func() (*Topology, error) { return FatTree(3, 0) }, "fat-tree: k: must be even and at least 2, got 3"},
		{"k 0", func() (*Topology, error) { return FatTree(0, 0) }, "fat-tree: k: must be even and at least 2, got 0"},
		{"negative k", func() (*Topology, error) { return FatTree(-2, 0) }, "fat-tree: k: must be even and at least 2, got -2"},
		{"k 1", func() (*Topology, error) { return FatTree(1, 0) }, "fat-tree: k: must be even and at least 2, got 1"},
		{"k beyond switch ports", func() (*Topology, error) { return FatTree(512, 1) }, "fat-tree: k: k=512 gives every core and aggregation switch 512 ports, more than the 510"},
		{"negative hosts per edge", func() (*Topology, error) { return FatTree(4, -1) }, "fat-tree: hosts-per-edge: must be positive (0 for k/2), got -1"},
		{"edge beyond switch ports", func() (*Topology, error) { return FatTree(4, MaxSwitchPort) }, "fat-tree: hosts-per-edge: 510 hosts per edge switch and 2 uplinks need 512 ports"},
		{"default hosts beyond the plan", func() (*Topology, error) { return FatTree(200, 0) }, "fat-tree: k: k=200 with 100 hosts per edge switch has 2000000 hosts, more than the 16383"},
		{"given hosts beyond the plan", func() (*Topology, error) { return FatTree(40, 30) }, "fat-tree: hosts-per-edge: k=40 with 30 hosts per edge switch has 24000 hosts"},
		{"no spines", func() (*Topology, error) { return LeafSpine(0, 2, 3) }, "leaf-spine: spines: must be at least 1, got 0"},
		{"no leaves", func() (*Topology, error) { return LeafSpine(2, 0, 3) }, "leaf-spine: leaves: must be at least 1, got 0"},
		{"no hosts", func() (*Topology, error) { return LeafSpine(2, 2, -1) }, "leaf-spine: hosts: must be at least 1, got -1"},
		{"a PS and no worker", func() (*Topology, error) { return LeafSpine(1, 1, 1) }, "leaf-spine: hosts: must be at least 2, got 1: the last host is the PS and the others workers"},
		{"leaves beyond spine ports", func() (*Topology, error) { return LeafSpine(2, 600, 600) }, "leaf-spine: leaves: 600 leaves give every spine 600 ports"},
		{"hosts beyond the plan", func() (*Topology, error) { return LeafSpine(2, 2, 20000) }, "leaf-spine: hosts: 20000 hosts are more than the 16383"},
		{"hosts beyond leaf ports", func() (*Topology, error) { return LeafSpine(10, 2, 1100) }, "leaf-spine: hosts: up to 550 hosts per leaf and 10 uplinks need 560 ports"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tp, err := c.gen()
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to start with %q", err, c.want)
			}
			if tp != nil {
				t.Error("a topology came back with the error")
			}
		})
	}
}

func TestGeneratorsAcceptSwitchesWithEveryPortUsed(t *testing.T) {
	ft, err := FatTree(4, MaxSwitchPort-2)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(ft.Neighbors("e1")); got != MaxSwitchPort {
		t.Errorf("edge switch e1 has %d links, want %d", got, MaxSwitchPort)
	}
	ls, err := LeafSpine(10, 2, 2*(MaxSwitchPort-10))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(ls.Neighbors("lf1")); got != MaxSwitchPort {
		t.Errorf("leaf lf1 has %d links, want %d", got, MaxSwitchPort)
	}
}

func TestLeafSpineSpreadsHostsEvenly(t *testing.T) {
	ls, err := LeafSpine(30, 30, 500)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(ls.Switches()); got != 60 {
		t.Errorf("switches = %d, want 60", got)
	}
	if got := len(ls.Hosts()); got != 500 {
		t.Errorf("hosts = %d, want 500", got)
	}
	if got := len(ls.Links); got != 30*30+500 {
		t.Errorf("links = %d, want 1400", got)
	}
	perLeaf := map[int]int{}
	for i := 1; i <= 30; i++ {
		hosts := 0
		for _, adj := range ls.Neighbors(fmt.Sprintf("lf%d", i)) {
			if ls.Node(adj.Peer.Node).Kind == KindHost {
				hosts++
			}
		}
		perLeaf[hosts]++
	}
	// 500 = 20*17 + 10*16.
	if perLeaf[17] != 20 || perLeaf[16] != 10 {
		t.Errorf("leaves by host count = %v, want 20 with 17 and 10 with 16", perLeaf)
	}
	// Uplinks sit on the same ports on every leaf: p18..p47.
	if l := ls.Link("lf30", "sp1"); l == nil || l.B != (Endpoint{"lf30", 18}) {
		t.Errorf("lf30-sp1 = %+v, want lf30 port 18", l)
	}
}

func TestTestbedIsThePapersTriangle(t *testing.T) {
	tb := Testbed()
	racks := map[string][]string{"s1": {"w1", "w2", "ps"}, "s2": {"w3", "w4", "w7"}, "s3": {"w5", "w6", "w8"}}
	for sw, hosts := range racks {
		for _, h := range hosts {
			l := tb.Link(sw, h)
			if l == nil || l.Bandwidth != 100*Gbps {
				t.Errorf("link %s-%s = %+v, want 100Gbps", sw, h, l)
			}
		}
	}
	for _, pair := range [][2]string{{"s1", "s2"}, {"s1", "s3"}, {"s2", "s3"}} {
		if tb.Link(pair[0], pair[1]) == nil {
			t.Errorf("no link %s-%s", pair[0], pair[1])
		}
	}
	if len(tb.Links) != 12 || len(tb.Workers()) != 8 || len(tb.PSs()) != 1 {
		t.Errorf("links %d workers %d PSs %d, want 12, 8, 1", len(tb.Links), len(tb.Workers()), len(tb.PSs()))
	}
}

func TestPaperFig1HasThePapersLinksAndCapacities(t *testing.T) {
	f := PaperFig1()
	// L1 = s1-s3, L2 = s1-s2, L3 = s2-s3, in that order after the host links.
	trunks := f.Links[len(f.Links)-3:]
	want := [][2]string{{"s1", "s3"}, {"s1", "s2"}, {"s2", "s3"}}
	for i, l := range trunks {
		if l.A.Node != want[i][0] || l.B.Node != want[i][1] || l.Bandwidth != 3*Gbps {
			t.Errorf("L%d = %s %v, want %s-%s 3Gbps", i+1, f.LinkString(l), l.Bandwidth, want[i][0], want[i][1])
		}
	}
	if got := f.Ingress("ps"); got != 9*Gbps {
		t.Errorf("PS ingress = %v, want 9Gbps", got)
	}
	for _, s := range f.Switches() {
		if !s.Programmable || s.Capacity != 9*Gbps {
			t.Errorf("%s programmable=%v capacity=%v, want 9Gbps", s.Name, s.Programmable, s.Capacity)
		}
	}
	racks := map[string][]string{"s1": {"w1", "w2", "w3", "w4"}, "s2": {"w5", "w6"}, "s3": {"w7", "w8", "ps"}}
	for sw, hosts := range racks {
		for _, h := range hosts {
			if f.Link(sw, h) == nil {
				t.Errorf("%s not under %s", h, sw)
			}
		}
	}
}
