package topo

import (
	"fmt"
	"slices"
)

// The accessors scan Nodes and Links on every call instead of keeping an
// index: topologies here have at most a few thousand elements, callers may
// edit Nodes and Links (an experiment turning switches programmable), and an
// index would go stale or need locking for concurrent readers.

// Node returns the node with the given name, or nil.
func (t *Topology) Node(name string) *Node {
	if i := t.nodeIndex(name); i >= 0 {
		return t.Nodes[i]
	}
	return nil
}

func (t *Topology) nodeIndex(name string) int {
	return slices.IndexFunc(t.Nodes, func(n *Node) bool { return n.Name == name })
}

func (t *Topology) filter(keep func(*Node) bool) []*Node {
	var out []*Node
	for _, n := range t.Nodes {
		if keep(n) {
			out = append(out, n)
		}
	}
	return out
}

// Hosts returns the hosts in node order.
func (t *Topology) Hosts() []*Node { return t.filter(func(n *Node) bool { return n.Kind == KindHost }) }

// Switches returns the switches in node order.
func (t *Topology) Switches() []*Node {
	return t.filter(func(n *Node) bool { return n.Kind == KindSwitch })
}

// Workers returns the hosts with role worker, in node order.
func (t *Topology) Workers() []*Node {
	return t.filter(func(n *Node) bool { return n.Kind == KindHost && n.Role == RoleWorker })
}

// PSs returns the parameter servers, in node order.
func (t *Topology) PSs() []*Node {
	return t.filter(func(n *Node) bool { return n.Kind == KindHost && n.Role == RolePS })
}

// LinksOf returns the links that end at the named node, in link order.
func (t *Topology) LinksOf(name string) []*Link {
	var out []*Link
	for _, l := range t.Links {
		if l.A.Node == name || l.B.Node == name {
			out = append(out, l)
		}
	}
	return out
}

// Link returns the link joining nodes a and b (in either direction), or nil.
func (t *Topology) Link(a, b string) *Link {
	for _, l := range t.Links {
		if l.A.Node == a && l.B.Node == b || l.A.Node == b && l.B.Node == a {
			return l
		}
	}
	return nil
}

// Adjacent is one neighbour of a node: the local port, the far end and the link between.
type Adjacent struct {
	Port int      // the node's own port (switch) or interface index (host)
	Peer Endpoint // the neighbour and its port
	Link *Link
}

// Neighbors returns the node's neighbours ordered by its own port number.
func (t *Topology) Neighbors(name string) []Adjacent {
	var out []Adjacent
	for _, l := range t.Links {
		if l.A.Node == name || l.B.Node == name {
			out = append(out, adjacentVia(l, name))
		}
	}
	sortByPort(out)
	return out
}

// adjacency is Neighbors for every node at once, for callers that visit all nodes.
func (t *Topology) adjacency() map[string][]Adjacent {
	adj := make(map[string][]Adjacent, len(t.Nodes))
	for _, l := range t.Links {
		adj[l.A.Node] = append(adj[l.A.Node], adjacentVia(l, l.A.Node))
		adj[l.B.Node] = append(adj[l.B.Node], adjacentVia(l, l.B.Node))
	}
	for _, list := range adj {
		sortByPort(list)
	}
	return adj
}

// adjacentVia is the far side of link l seen from the named end.
func adjacentVia(l *Link, name string) Adjacent {
	if l.B.Node == name {
		return Adjacent{Port: l.B.Port, Peer: l.A, Link: l}
	}
	return Adjacent{Port: l.A.Port, Peer: l.B, Link: l}
}

func sortByPort(list []Adjacent) {
	slices.SortFunc(list, func(x, y Adjacent) int { return x.Port - y.Port })
}

// Peer returns the endpoint across the link from the named node; ok is false
// when the link does not end at that node.
func (l *Link) Peer(node string) (peer Endpoint, ok bool) {
	switch node {
	case l.A.Node:
		return l.B, true
	case l.B.Node:
		return l.A, true
	}
	return Endpoint{}, false
}

// EffectiveMTU is the link's MTU, DefaultMTU when unset.
func (l *Link) EffectiveMTU() int {
	if l.MTU == 0 {
		return DefaultMTU
	}
	return l.MTU
}

// Ingress returns a host's ingress bandwidth: Node.Ingress when set, else the
// sum of its link bandwidths (0, unlimited, if any of them is unlimited).
func (t *Topology) Ingress(host string) Bandwidth {
	n := t.Node(host)
	if n == nil {
		return 0
	}
	if n.Ingress > 0 {
		return n.Ingress
	}
	var sum Bandwidth
	for _, l := range t.LinksOf(host) {
		if l.Bandwidth == 0 {
			return 0
		}
		sum += l.Bandwidth
	}
	return sum
}

// EndpointString writes an endpoint as in topology files: "s1:p3" for a
// switch port, "h1:eth0" for a host interface.
func (t *Topology) EndpointString(e Endpoint) string {
	kind := KindSwitch
	if n := t.Node(e.Node); n != nil {
		kind = n.Kind
	}
	return e.Format(kind)
}

// Format writes e as topology files do for a node of the given kind:
// "h1:eth0" for a host, "s1:p3" otherwise.
func (e Endpoint) Format(kind Kind) string {
	if kind == KindHost {
		return fmt.Sprintf("%s:eth%d", e.Node, e.Port)
	}
	return fmt.Sprintf("%s:p%d", e.Node, e.Port)
}

// LinkString writes a link's endpoints, "s1:p3--h1:eth0".
func (t *Topology) LinkString(l *Link) string {
	return t.EndpointString(l.A) + "--" + t.EndpointString(l.B)
}
