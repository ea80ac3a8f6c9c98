package topo

import (
	"fmt"
	"regexp"
)

// Limits of the model. Host IDs and interface indices are bounded by the
// addressing plan, switch ports by bmv2's v1model (9-bit ports; 511 drops).
const (
	MaxHostID         = 16383
	MaxSwitchID       = 65535
	MaxSwitchPort     = 510
	MaxHostInterfaces = 4 // eth0..eth3
	MinMTU            = 576
	MaxMTU            = 9216
	DefaultMTU        = 1500
)

// The link rates the fabric can shape. tbf keeps a link's burst as a time
// in 32-bit scheduler ticks (1/15.625 µs): below about 540 bit/s the burst
// a 9216-byte MTU needs overflows it, and above about 20 Pbit/s one tick
// holds more than the whole burst, which the kernel refuses. A fabric test
// adds tbf at both bounds with the smallest and largest MTU.
const (
	MinLinkBandwidth = Kbps
	MaxLinkBandwidth = 100 * Tbps
)

// CheckLinkBandwidth refuses a link rate the fabric cannot shape.
func CheckLinkBandwidth(b Bandwidth) error {
	if b < MinLinkBandwidth || b > MaxLinkBandwidth {
		return fmt.Errorf("%v is outside the %v..%v the kernel's tbf can shape", b, MinLinkBandwidth, MaxLinkBandwidth)
	}
	return nil
}

// NamePattern is the grammar of node names: they become parts of namespace
// and interface names, so they stay short and plain.
const NamePattern = `^[A-Za-z][A-Za-z0-9_-]{0,31}$`

var nameRE = regexp.MustCompile(NamePattern)

// Validate checks the topology and returns the first problem, located by file
// line when the topology was read from a file. It checks: node names
// (NamePattern, unique), kinds, IDs (unique per kind, in range), that host
// fields (role, ingress) sit on hosts and switch fields (tier, programmable,
// capacity) on switches, that capacity is given only for programmable
// switches (a plain switch aggregates nothing, so a capacity there is a
// mistake) and required for programmable ones (GRID's C_s), that ingress is
// given only for a PS, and that links join known
// nodes on valid, unshared ports, connect hosts only to switches, join two
// switches at most once, and carry sane bandwidth, delay, loss and MTU. Every
// host must have a link and the whole graph must be connected and not empty.
func (t *Topology) Validate() error {
	errAt := func(line int, field, format string, args ...any) error {
		return &Error{Source: t.Source, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if len(t.Nodes) == 0 {
		return errAt(0, "nodes", "the topology has no nodes")
	}
	byName := make(map[string]*Node, len(t.Nodes))
	ids := map[Kind]map[int]*Node{KindHost: {}, KindSwitch: {}}
	for i, n := range t.Nodes {
		f := func(field string) string { return fmt.Sprintf("nodes[%d].%s", i, field) }
		if !nameRE.MatchString(n.Name) {
			return errAt(n.Line, f("name"), "%q is not a node name (a letter, then up to 31 letters, digits, _ or -)", n.Name)
		}
		if first, dup := byName[n.Name]; dup {
			return errAt(n.Line, f("name"), "duplicate node name %q (first defined%s)", n.Name, t.at(first.Line))
		}
		byName[n.Name] = n
		maxID := MaxHostID
		switch n.Kind {
		case KindHost:
			switch n.Role {
			case RoleWorker, RolePS, RoleHost:
			default:
				return errAt(n.Line, f("role"), "unknown role %q of host %s (worker or ps; omit for a plain host)", n.Role, n.Name)
			}
			if n.Ingress < 0 {
				return errAt(n.Line, f("ingress"), "negative ingress of %s", n.Name)
			}
			if n.Ingress > 0 && n.Role != RolePS {
				return errAt(n.Line, f("ingress"), "%s is not a PS: ingress is the bandwidth of a parameter server", n.Name)
			}
			if n.Tier != "" || n.Programmable || n.Capacity != 0 {
				return errAt(n.Line, f(hostMisfit(n)), "%s is a host: tier, programmable and capacity belong to switches", n.Name)
			}
		case KindSwitch:
			maxID = MaxSwitchID
			switch n.Tier {
			case "", TierEdge, TierAgg, TierCore, TierLeaf, TierSpine:
			default:
				return errAt(n.Line, f("tier"), "unknown tier %q of switch %s (edge, agg, core, leaf or spine; omit for none)", n.Tier, n.Name)
			}
			if n.Role != RoleHost || n.Ingress != 0 {
				field := "role"
				if n.Role == RoleHost {
					field = "ingress"
				}
				return errAt(n.Line, f(field), "%s is a switch: role and ingress belong to hosts", n.Name)
			}
			if n.Capacity < 0 {
				return errAt(n.Line, f("capacity"), "negative capacity of %s", n.Name)
			}
			if n.Programmable && n.Capacity == 0 {
				return errAt(n.Line, f("capacity"), "programmable switch %s needs a capacity, the rate it can aggregate (GRID's C_s), e.g. capacity: 100Gbps", n.Name)
			}
			if n.Capacity > 0 && !n.Programmable {
				return errAt(n.Line, f("capacity"), "switch %s is not programmable: only programmable switches have an aggregation capacity (add programmable: true or drop capacity)", n.Name)
			}
		default:
			return errAt(n.Line, f("kind"), "unknown kind %q of node %s (host or switch)", n.Kind, n.Name)
		}
		if n.ID < 1 || n.ID > maxID {
			return errAt(n.Line, f("id"), "id %d of %s out of range 1..%d", n.ID, n.Name, maxID)
		}
		if other, dup := ids[n.Kind][n.ID]; dup {
			return errAt(n.Line, f("id"), "%s id %d already belongs to %s%s", n.Kind, n.ID, other.Name, t.at(other.Line))
		}
		ids[n.Kind][n.ID] = n
	}

	type nodePort struct {
		node string
		port int
	}
	portUser := map[nodePort]*Link{}
	pairs := map[[2]string]*Link{}
	linked := map[string]bool{}
	for i, l := range t.Links {
		field := func(name string) string { return fmt.Sprintf("links[%d].%s", i, name) }
		var kinds [2]Kind
		for j, e := range [2]Endpoint{l.A, l.B} {
			n := byName[e.Node]
			if n == nil {
				return errAt(l.Line, field("endpoints"), "unknown node %q", e.Node)
			}
			kinds[j] = n.Kind
			if n.Kind == KindSwitch && (e.Port < 1 || e.Port > MaxSwitchPort) {
				return errAt(l.Line, field("endpoints"), "port %d of switch %s out of range 1..%d", e.Port, e.Node, MaxSwitchPort)
			}
			if n.Kind == KindHost && (e.Port < 0 || e.Port >= MaxHostInterfaces) {
				return errAt(l.Line, field("endpoints"), "interface eth%d of host %s out of range eth0..eth%d", e.Port, e.Node, MaxHostInterfaces-1)
			}
			key := nodePort{e.Node, e.Port}
			if other := portUser[key]; other != nil {
				return errAt(l.Line, field("endpoints"), "port clash: %s is already used by the link %s%s", t.EndpointString(e), t.LinkString(other), t.at(other.Line))
			}
			portUser[key] = l
			linked[e.Node] = true
		}
		if l.A.Node == l.B.Node {
			return errAt(l.Line, field("endpoints"), "link from %s to itself", l.A.Node)
		}
		if kinds[0] == KindHost && kinds[1] == KindHost {
			return errAt(l.Line, field("endpoints"), "hosts %s and %s linked directly: hosts connect to switches", l.A.Node, l.B.Node)
		}
		pair := [2]string{l.A.Node, l.B.Node}
		if pair[0] > pair[1] {
			pair[0], pair[1] = pair[1], pair[0]
		}
		if other := pairs[pair]; other != nil {
			return errAt(l.Line, field("endpoints"), "second link between %s and %s (the first is %s%s); parallel links are not modelled", pair[0], pair[1], t.LinkString(other), t.at(other.Line))
		}
		pairs[pair] = l
		if l.Bandwidth < 0 {
			return errAt(l.Line, field("bandwidth"), "negative bandwidth")
		}
		if l.Bandwidth != 0 {
			if err := CheckLinkBandwidth(l.Bandwidth); err != nil {
				return errAt(l.Line, field("bandwidth"), "%v", err)
			}
		}
		if l.Delay < 0 {
			return errAt(l.Line, field("delay"), "negative delay")
		}
		if l.Loss < 0 || l.Loss > 100 {
			return errAt(l.Line, field("loss"), "loss %v%% out of range 0..100%%", l.Loss)
		}
		if l.MTU != 0 && (l.MTU < MinMTU || l.MTU > MaxMTU) {
			return errAt(l.Line, field("mtu"), "MTU %d out of range %d..%d", l.MTU, MinMTU, MaxMTU)
		}
	}
	for i, n := range t.Nodes {
		if n.Kind == KindHost && !linked[n.Name] {
			return errAt(n.Line, fmt.Sprintf("nodes[%d]", i), "host %s has no link", n.Name)
		}
	}
	if n := t.unreachable(); n != nil {
		return errAt(n.Line, fmt.Sprintf("nodes[%d]", t.nodeIndex(n.Name)), "%s is not connected to %s: the topology falls apart", n.Name, t.Nodes[0].Name)
	}
	return nil
}

// hostMisfit names the switch-only field a host carries, for the error's field path.
func hostMisfit(n *Node) string {
	switch {
	case n.Tier != "":
		return "tier"
	case n.Programmable:
		return "programmable"
	default:
		return "capacity"
	}
}

// at is " at line N" for topologies read from files, "" otherwise.
func (t *Topology) at(line int) string {
	if line <= 0 {
		return ""
	}
	return fmt.Sprintf(" at line %d", line)
}

// unreachable returns a node not connected to the first node, or nil.
func (t *Topology) unreachable() *Node {
	if len(t.Nodes) == 0 {
		return nil
	}
	adj := map[string][]string{}
	for _, l := range t.Links {
		adj[l.A.Node] = append(adj[l.A.Node], l.B.Node)
		adj[l.B.Node] = append(adj[l.B.Node], l.A.Node)
	}
	seen := map[string]bool{t.Nodes[0].Name: true}
	queue := []string{t.Nodes[0].Name}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, next := range adj[cur] {
			if !seen[next] {
				seen[next] = true
				queue = append(queue, next)
			}
		}
	}
	for _, n := range t.Nodes {
		if !seen[n.Name] {
			return n
		}
	}
	return nil
}
