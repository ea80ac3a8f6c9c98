package topo

import "fmt"

// Defaults of the generators, after the paper's simulation (Sec. 6.3): 100 Gbps
// links and PS. Every generated switch is programmable with DefaultCapacity,
// the low end of the paper's 100 Gbps-3.2 Tbps range; experiments that need
// other capacities or only some programmable switches (the paper's ToR-only
// and random-20% scenarios) edit the returned topology. In the structured
// generators the last host is the PS and all others are workers, so one job
// spans the whole network by default.
const (
	DefaultLinkBandwidth = 100 * Gbps
	DefaultCapacity      = 100 * Gbps
)

// builder adds nodes with sequential IDs per kind and links with explicit ports.
type builder struct {
	t      *Topology
	nextID map[Kind]int
}

func newBuilder(name, description string) *builder {
	return &builder{t: &Topology{Name: name, Description: description}, nextID: map[Kind]int{KindHost: 1, KindSwitch: 1}}
}

func (b *builder) node(n *Node) string {
	n.ID = b.nextID[n.Kind]
	b.nextID[n.Kind]++
	b.t.Nodes = append(b.t.Nodes, n)
	return n.Name
}

func (b *builder) switchNode(name string, tier Tier, capacity Bandwidth) string {
	return b.node(&Node{Name: name, Kind: KindSwitch, Tier: tier, Programmable: true, Capacity: capacity})
}

func (b *builder) host(name string, role Role) string {
	return b.node(&Node{Name: name, Kind: KindHost, Role: role})
}

func (b *builder) link(a string, aPort int, z string, zPort int, bw Bandwidth) {
	b.t.Links = append(b.t.Links, &Link{A: Endpoint{a, aPort}, B: Endpoint{z, zPort}, Bandwidth: bw})
}

// done validates the generated topology, which catches sizes beyond the
// model's limits (host IDs, switch ports).
func (b *builder) done() (*Topology, error) {
	if err := b.t.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", b.t.Name, err)
	}
	return b.t, nil
}

// paramError rejects a generator parameter. Field holds the parameter's name,
// which is also the name of the grid topo flag that sets it; Source names the
// generator, as it would name a file.
func paramError(generator, param, format string, args ...any) error {
	return &Error{Source: generator, Field: param, Msg: fmt.Sprintf(format, args...)}
}

// hostRole makes the last of total hosts the PS and the others workers.
func hostRole(i, total int) Role {
	if i == total-1 {
		return RolePS
	}
	return RoleWorker
}

// FatTree builds Al-Fares' k-ary fat-tree: (k/2)^2 core switches c1.., k pods
// of k/2 aggregation (a1..) and k/2 edge (e1..) switches, and hostsPerEdge
// hosts h1.. under every edge switch (k/2 when hostsPerEdge is 0). Ports: an
// edge switch has its hosts on p1..pH and aggregation switch i of its pod on
// p(H+1+i); aggregation switch i has edge switch j on p(1+j) and core switch
// i*k/2+c on p(k/2+1+c); a core switch has pod q on p(1+q). Every link is
// DefaultLinkBandwidth.
func FatTree(k, hostsPerEdge int) (*Topology, error) {
	if k < 2 || k%2 != 0 {
		return nil, paramError("fat-tree", "k", "must be even and at least 2, got %d", k)
	}
	if k > MaxSwitchPort {
		return nil, paramError("fat-tree", "k", "k=%d gives every core and aggregation switch %d ports, more than the %d a switch can have", k, k, MaxSwitchPort)
	}
	if hostsPerEdge < 0 {
		return nil, paramError("fat-tree", "hosts-per-edge", "must be positive (0 for k/2), got %d", hostsPerEdge)
	}
	half := k / 2
	name := fmt.Sprintf("fattree-k%d", k)
	hostsParam := "hosts-per-edge"
	if hostsPerEdge == 0 {
		hostsPerEdge = half
		hostsParam = "k"
	} else if hostsPerEdge != half {
		name = fmt.Sprintf("fattree-k%d-h%d", k, hostsPerEdge)
	}
	if ports := hostsPerEdge + half; ports > MaxSwitchPort {
		return nil, paramError("fat-tree", hostsParam, "%d hosts per edge switch and %d uplinks need %d ports, more than the %d a switch can have", hostsPerEdge, half, ports, MaxSwitchPort)
	}
	// Checked before anything is allocated; the switch count stays far below
	// MaxSwitchID whenever the hosts fit.
	nHosts := k * half * hostsPerEdge
	if nHosts > MaxHostID {
		return nil, paramError("fat-tree", hostsParam, "k=%d with %d hosts per edge switch has %d hosts, more than the %d the addressing plan numbers", k, hostsPerEdge, nHosts, MaxHostID)
	}
	b := newBuilder(name, fmt.Sprintf("Al-Fares k=%d fat-tree: %d core, %d aggregation and %d edge switches, %d hosts per edge switch; every switch programmable at %v; the last host is the PS, the others workers",
		k, half*half, k*half, k*half, hostsPerEdge, DefaultCapacity))
	core := make([]string, half*half)
	for c := range core {
		core[c] = b.switchNode(fmt.Sprintf("c%d", c+1), TierCore, DefaultCapacity)
	}
	agg := make([]string, k*half)
	for i := range agg {
		agg[i] = b.switchNode(fmt.Sprintf("a%d", i+1), TierAgg, DefaultCapacity)
	}
	edge := make([]string, k*half)
	for i := range edge {
		edge[i] = b.switchNode(fmt.Sprintf("e%d", i+1), TierEdge, DefaultCapacity)
	}
	hosts := make([]string, nHosts)
	for i := range hosts {
		hosts[i] = b.host(fmt.Sprintf("h%d", i+1), hostRole(i, nHosts))
	}
	for pod := range k {
		for i := range half {
			a := agg[pod*half+i]
			for c := range half {
				b.link(core[i*half+c], pod+1, a, half+1+c, DefaultLinkBandwidth)
			}
		}
	}
	for pod := range k {
		for i := range half {
			for j := range half {
				b.link(agg[pod*half+i], 1+j, edge[pod*half+j], hostsPerEdge+1+i, DefaultLinkBandwidth)
			}
		}
	}
	for e, sw := range edge {
		for m := range hostsPerEdge {
			b.link(sw, m+1, hosts[e*hostsPerEdge+m], 0, DefaultLinkBandwidth)
		}
	}
	return b.done()
}

// LeafSpine builds a two-tier Clos: spines sp1.., leaves lf1.., every leaf
// linked to every spine, and hosts h1.. spread over the leaves as evenly as
// possible (the first hosts%leaves leaves get one more). Ports: a leaf has its
// hosts on p1.. and spine s on p(M+1+s), M being the most hosts any leaf has,
// so uplinks sit on the same ports everywhere; spine s has leaf l on p(1+l).
func LeafSpine(spines, leaves, hosts int) (*Topology, error) {
	for _, p := range []struct {
		name  string
		value int
	}{{"spines", spines}, {"leaves", leaves}, {"hosts", hosts}} {
		if p.value < 1 {
			return nil, paramError("leaf-spine", p.name, "must be at least 1, got %d", p.value)
		}
	}
	if hosts < 2 {
		return nil, paramError("leaf-spine", "hosts", "must be at least 2, got %d: the last host is the PS and the others workers", hosts)
	}
	if leaves > MaxSwitchPort {
		return nil, paramError("leaf-spine", "leaves", "%d leaves give every spine %d ports, more than the %d a switch can have", leaves, leaves, MaxSwitchPort)
	}
	if hosts > MaxHostID {
		return nil, paramError("leaf-spine", "hosts", "%d hosts are more than the %d the addressing plan numbers", hosts, MaxHostID)
	}
	maxPerLeaf := (hosts + leaves - 1) / leaves
	if ports := maxPerLeaf + spines; ports > MaxSwitchPort {
		return nil, paramError("leaf-spine", "hosts", "up to %d hosts per leaf and %d uplinks need %d ports, more than the %d a switch can have: use more leaves", maxPerLeaf, spines, ports, MaxSwitchPort)
	}
	b := newBuilder(fmt.Sprintf("leafspine-%d-%d-%d", spines, leaves, hosts),
		fmt.Sprintf("Leaf-spine: %d spine and %d leaf switches, %d hosts spread evenly over the leaves; every switch programmable at %v; the last host is the PS, the others workers",
			spines, leaves, hosts, DefaultCapacity))
	spine := make([]string, spines)
	for s := range spine {
		spine[s] = b.switchNode(fmt.Sprintf("sp%d", s+1), TierSpine, DefaultCapacity)
	}
	leaf := make([]string, leaves)
	for l := range leaf {
		leaf[l] = b.switchNode(fmt.Sprintf("lf%d", l+1), TierLeaf, DefaultCapacity)
	}
	for l, lf := range leaf {
		for s, sp := range spine {
			b.link(sp, l+1, lf, maxPerLeaf+1+s, DefaultLinkBandwidth)
		}
	}
	h := 0
	for l, lf := range leaf {
		n := hosts / leaves
		if l < hosts%leaves {
			n++
		}
		for m := range n {
			name := b.host(fmt.Sprintf("h%d", h+1), hostRole(h, hosts))
			b.link(lf, m+1, name, 0, DefaultLinkBandwidth)
			h++
		}
	}
	return b.done()
}

// triangle builds three tierless switches s1, s2, s3 with the given hosts under
// each (hosts on p1.. in the order given, then the inter-switch links in the
// order of trunks), one link bandwidth for everything except the PS's link.
func triangle(b *builder, rack [3][]string, trunks [3][2]int, linkBW, psBW, capacity Bandwidth) {
	sw := [3]string{}
	for i := range sw {
		sw[i] = b.switchNode(fmt.Sprintf("s%d", i+1), "", capacity)
	}
	total := 0
	for _, names := range rack {
		total += len(names)
	}
	// The racks name workers w1..w(total-1) and the PS ps; they are numbered in that order.
	for i := 1; i < total; i++ {
		b.host(fmt.Sprintf("w%d", i), RoleWorker)
	}
	b.host("ps", RolePS)
	nextPort := [3]int{}
	for s, names := range rack {
		for _, h := range names {
			nextPort[s]++
			bw := linkBW
			if h == "ps" {
				bw = psBW
			}
			b.link(sw[s], nextPort[s], h, 0, bw)
		}
	}
	for _, tr := range trunks {
		nextPort[tr[0]]++
		nextPort[tr[1]]++
		b.link(sw[tr[0]], nextPort[tr[0]], sw[tr[1]], nextPort[tr[1]], linkBW)
	}
}

// Testbed is the paper's testbed (Fig. 3): switches s1, s2, s3 in a triangle;
// s1 holds w1, w2 and the PS, s2 holds w3, w4, w7, s3 holds w5, w6, w8;
// 100 Gbps links; every switch programmable at DefaultCapacity. Each switch
// has its hosts on p1..p3, then p4 and p5 towards the other two switches in
// the order s1-s2, s1-s3, s2-s3.
func Testbed() *Topology {
	b := newBuilder("testbed", "The GRID paper's testbed (Fig. 3): switches s1, s2, s3 in a triangle; s1 holds w1, w2 and the PS, s2 w3, w4, w7, s3 w5, w6, w8; 100Gbps links")
	triangle(b, [3][]string{{"w1", "w2", "ps"}, {"w3", "w4", "w7"}, {"w5", "w6", "w8"}},
		[3][2]int{{0, 1}, {0, 2}, {1, 2}}, DefaultLinkBandwidth, DefaultLinkBandwidth, DefaultCapacity)
	return mustValid(b)
}

// PaperFig1 is the paper's motivating example (Fig. 1): switches s1, s2, s3
// with links L1 = s1-s3, L2 = s1-s2, L3 = s2-s3; s1 holds w1-w4, s2 holds w5,
// w6, s3 holds w7, w8 and the PS; every link 3 Gbps, PS ingress 9 Gbps, switch
// capacity 9 Gbps. The PS's own link is 9 Gbps, its ingress: the paper's
// model bounds the PS by its ingress alone, and its known answer (GRID: three
// aggregated 3 Gbps streams reach the PS) needs that link to carry 9 Gbps.
// Hosts are on p1.., then the trunks in the order L1, L2, L3.
func PaperFig1() *Topology {
	b := newBuilder("paper-fig1", "The GRID paper's motivating example (Fig. 1): L1 = s1-s3, L2 = s1-s2, L3 = s2-s3; s1 holds w1-w4, s2 w5, w6, s3 w7, w8 and the PS; links 3Gbps, PS link and ingress 9Gbps, switch capacity 9Gbps. Known minimum worker rates: Geryon 1Gbps, ATP 2.43Gbps, GRID 3Gbps")
	triangle(b, [3][]string{{"w1", "w2", "w3", "w4"}, {"w5", "w6"}, {"w7", "w8", "ps"}},
		[3][2]int{{0, 2}, {0, 1}, {1, 2}}, 3*Gbps, 9*Gbps, 9*Gbps)
	b.t.Node("ps").Ingress = 9 * Gbps
	return mustValid(b)
}

// mustValid is for the fixed topologies, whose validity the tests establish.
func mustValid(b *builder) *Topology {
	t, err := b.done()
	if err != nil {
		panic(err)
	}
	return t
}
