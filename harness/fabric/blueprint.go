package fabric

import (
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"sort"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/grid-ina/grid/harness/topo"
)

// Every veth end gets a fixed ifindex at creation, ifindexBase plus its
// ordinal in the run, which saves a lookup per interface. Starting at 100
// stays clear of lo (1) and of the fallback tunnel devices (tunl0, sit0, ...)
// that some kernels add to every new namespace. The two ends of a link must
// differ: the kernel brings a veth whose index equals its peer's into service
// only in its once-a-second link-watch run, not at once.
const ifindexBase = 100

// blueprint is a topology resolved into kernel objects: namespace and
// interface names, ifindexes, MACs and addresses, plus the handles the build
// opens on them.
type blueprint struct {
	run    string
	tag    string
	topo   *topo.Topology
	nodes  []*nodePlan
	links  []*linkPlan
	ifaces int // interfaces so far, numbering their ifindexes
	opts   Options
}

type nodePlan struct {
	node   *topo.Node
	ns     string // namespace name
	ifaces []*ifacePlan

	// Open while building; closed before the build returns.
	handle netns.NsHandle  // the namespace
	nl     *netlink.Handle // rtnetlink socket inside the namespace
	sock   int             // AF_INET socket inside a host's namespace, for ethtool ioctls; -1 if none
}

type ifacePlan struct {
	node  *nodePlan
	name  string
	port  int
	index int
	mac   net.HardwareAddr
	mtu   int
	host  *topo.HostInterface // nil on a switch
	link  *linkPlan
	// linux: a host interface addressed by Options.HostAddresses, with ARP.
	linux bool
}

type linkPlan struct {
	link *topo.Link
	a, b *ifacePlan
}

// newBlueprint resolves t for run, whose interfaces carry tag. t must be
// valid, as plan (t.Plan validates it) proves: node names are unique and fit
// topo.NamePattern, a subset of what a file under NetnsDir may be called, and
// links join known nodes on unshared ports. The errors left are
// inconsistencies between t and plan.
func newBlueprint(run, tag string, t *topo.Topology, plan *topo.AddressPlan, opts Options) (*blueprint, error) {
	bp := &blueprint{run: run, tag: tag, topo: t, opts: opts}
	byName := make(map[string]*nodePlan, len(t.Nodes))
	for _, n := range t.Nodes {
		np := &nodePlan{node: n, ns: NamespaceName(run, n.Name), handle: -1, sock: -1}
		byName[n.Name] = np
		bp.nodes = append(bp.nodes, np)
	}
	for _, l := range t.Links {
		lp := &linkPlan{link: l}
		var err error
		if lp.a, err = bp.iface(byName, plan, l, l.A); err != nil {
			return nil, err
		}
		if lp.b, err = bp.iface(byName, plan, l, l.B); err != nil {
			return nil, err
		}
		lp.a.link, lp.b.link = lp, lp
		bp.links = append(bp.links, lp)
	}
	for _, np := range bp.nodes {
		sort.Slice(np.ifaces, func(i, j int) bool { return np.ifaces[i].port < np.ifaces[j].port })
	}
	return bp, nil
}

func (bp *blueprint) iface(byName map[string]*nodePlan, plan *topo.AddressPlan, l *topo.Link, ep topo.Endpoint) (*ifacePlan, error) {
	np := byName[ep.Node]
	name, err := ifaceName(bp.tag, np.node.Kind, np.node.ID, ep.Port)
	if bp.opts.MininetNames && np.node.Kind == topo.KindSwitch {
		name = fmt.Sprintf("%s-eth%d", np.node.Name, ep.Port)
		if len(name) > maxIfname {
			err = fmt.Errorf("interface name %q of switch %s port %d exceeds Linux's %d characters", name, np.node.Name, ep.Port, maxIfname)
		}
	}
	if err != nil {
		return nil, err
	}
	bp.ifaces++
	ip := &ifacePlan{node: np, name: name, port: ep.Port, index: ifindexBase + bp.ifaces, mtu: l.EffectiveMTU()}
	if np.node.Kind == topo.KindSwitch {
		sp, ok := plan.Port(ep.Node, ep.Port)
		if !ok {
			return nil, fmt.Errorf("addressing plan has no entry for switch %s port %d", ep.Node, ep.Port)
		}
		ip.mac = sp.MAC
	} else {
		hi, ok := plan.Interface(ep.Node, ep.Port)
		if !ok {
			return nil, fmt.Errorf("addressing plan has no entry for host %s interface %d", ep.Node, ep.Port)
		}
		if a, ok := bp.opts.HostAddresses[ep]; ok {
			hi.IP, hi.MAC, hi.Gateway, hi.GatewayMAC = a.IP, a.MAC, netip.Addr{}, nil
			ip.linux = true
		}
		ip.mac = hi.MAC
		ip.host = &hi
	}
	if len(ip.mac) != 6 {
		return nil, fmt.Errorf("addressing plan gives %s:%d no 6-byte MAC", ep.Node, ep.Port)
	}
	np.ifaces = append(np.ifaces, ip)
	return ip, nil
}

// state is the run's record for the blueprint, before anything is built.
func (bp *blueprint) state() *State {
	s := &State{Run: bp.run, Tag: bp.tag, TopologyName: bp.topo.Name, Status: StatusBuilding}
	if bp.topo.Source != "" {
		if abs, err := filepath.Abs(bp.topo.Source); err == nil {
			s.TopologyFile = abs
		} else {
			s.TopologyFile = bp.topo.Source
		}
	}
	for _, np := range bp.nodes {
		n := Node{Name: np.node.Name, Kind: np.node.Kind, ID: np.node.ID, Namespace: np.ns}
		for _, ip := range np.ifaces {
			peer := ip.link.b
			if peer == ip {
				peer = ip.link.a
			}
			i := Interface{
				Name: ip.name, Port: ip.port, Index: ip.index, MAC: ip.mac.String(), MTU: ip.mtu,
				Peer:     topo.Endpoint{Node: peer.node.node.Name, Port: peer.port},
				RateBits: float64(ip.link.link.Bandwidth),
			}
			if ip.host != nil {
				i.IP = ip.host.IP.String()
				if ip.host.Gateway.IsValid() {
					i.Gateway = ip.host.Gateway.String()
					i.GatewayMAC = ip.host.GatewayMAC.String()
				}
			}
			n.Interfaces = append(n.Interfaces, i)
		}
		s.Nodes = append(s.Nodes, n)
	}
	for _, lp := range bp.links {
		s.Links = append(s.Links, Link{
			A: lp.link.A, B: lp.link.B, IfA: lp.a.name, IfB: lp.b.name,
			RateBits: float64(lp.link.Bandwidth), Delay: lp.link.Delay, Loss: lp.link.Loss,
		})
	}
	return s
}

// closeHandles releases every handle the build opened, so that removing the
// namespaces lets the kernel free them.
func (bp *blueprint) closeHandles() {
	for _, np := range bp.nodes {
		if np.nl != nil {
			np.nl.Close()
			np.nl = nil
		}
		if np.sock >= 0 {
			closeFD(np.sock)
			np.sock = -1
		}
		if np.handle >= 0 {
			np.handle.Close()
			np.handle = -1
		}
	}
}
