package topo

import (
	"fmt"
	"net"
	"net/netip"
)

// HostNetwork holds every host address of the plan; hosts route it via their gateway.
var HostNetwork = netip.MustParsePrefix("10.0.0.0/8")

// HostPrefixLen is the prefix length of every host interface address: each
// interface is alone in its /24 together with its gateway address.
const HostPrefixLen = 24

// AddressPlan is the addressing of every host interface and switch port; see
// the package documentation for the scheme.
type AddressPlan struct {
	Hosts []HostInterface // by host in node order, then by interface index
	Ports []SwitchPort    // by switch in node order, then by port number

	hostIndex map[Endpoint]int
	portIndex map[Endpoint]int
	ipIndex   map[netip.Addr]int
}

// HostAddr is the address of interface iface of the host with the given ID.
func HostAddr(id, iface int) netip.Addr {
	hi := byte(64*iface + id>>8)
	return netip.AddrFrom4([4]byte{10, hi, byte(id), 1})
}

// GatewayAddr is the gateway a host interface routes through (see the package documentation).
func GatewayAddr(id, iface int) netip.Addr {
	a := HostAddr(id, iface).As4()
	a[3] = 254
	return netip.AddrFrom4(a)
}

// HostMAC is the MAC address of interface iface of the host with the given ID.
func HostMAC(id, iface int) net.HardwareAddr {
	return net.HardwareAddr{0x02, 0x00, 0x00, byte(iface), byte(id >> 8), byte(id)}
}

// SwitchPortMAC is the MAC address of port p of the switch with the given ID.
func SwitchPortMAC(id, port int) net.HardwareAddr {
	return net.HardwareAddr{0x02, 0x01, byte(id >> 8), byte(id), byte(port >> 8), byte(port)}
}

// Plan derives the addressing plan. It fails on topologies Validate rejects.
func (t *Topology) Plan() (*AddressPlan, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("addressing plan: %w", err)
	}
	p := &AddressPlan{
		hostIndex: map[Endpoint]int{},
		portIndex: map[Endpoint]int{},
		ipIndex:   map[netip.Addr]int{},
	}
	byName := make(map[string]*Node, len(t.Nodes))
	for _, n := range t.Nodes {
		byName[n.Name] = n
	}
	adjacency := t.adjacency()
	for _, n := range t.Nodes {
		for _, adj := range adjacency[n.Name] {
			peer := byName[adj.Peer.Node]
			here := Endpoint{Node: n.Name, Port: adj.Port}
			switch n.Kind {
			case KindHost:
				// Validate guarantees hosts link only to switches.
				hi := HostInterface{
					Host:       n.Name,
					Name:       fmt.Sprintf("eth%d", adj.Port),
					Port:       adj.Port,
					IP:         netip.PrefixFrom(HostAddr(n.ID, adj.Port), HostPrefixLen),
					MAC:        HostMAC(n.ID, adj.Port),
					Gateway:    GatewayAddr(n.ID, adj.Port),
					GatewayMAC: SwitchPortMAC(peer.ID, adj.Peer.Port),
					Peer:       adj.Peer,
				}
				p.hostIndex[here] = len(p.Hosts)
				p.ipIndex[hi.IP.Addr()] = len(p.Hosts)
				p.Hosts = append(p.Hosts, hi)
			case KindSwitch:
				p.portIndex[here] = len(p.Ports)
				p.Ports = append(p.Ports, SwitchPort{Switch: n.Name, Port: adj.Port, MAC: SwitchPortMAC(n.ID, adj.Port), Peer: adj.Peer})
			}
		}
	}
	return p, nil
}

// Interface returns the addressing of a host interface (iface 0 is eth0).
func (p *AddressPlan) Interface(host string, iface int) (HostInterface, bool) {
	i, ok := p.hostIndex[Endpoint{Node: host, Port: iface}]
	if !ok {
		return HostInterface{}, false
	}
	return p.Hosts[i], true
}

// Interfaces returns all interfaces of a host, by index.
func (p *AddressPlan) Interfaces(host string) []HostInterface {
	var out []HostInterface
	for _, hi := range p.Hosts {
		if hi.Host == host {
			out = append(out, hi)
		}
	}
	return out
}

// Port returns the addressing of a switch port.
func (p *AddressPlan) Port(sw string, port int) (SwitchPort, bool) {
	i, ok := p.portIndex[Endpoint{Node: sw, Port: port}]
	if !ok {
		return SwitchPort{}, false
	}
	return p.Ports[i], true
}

// ByIP returns the host interface holding an address.
func (p *AddressPlan) ByIP(addr netip.Addr) (HostInterface, bool) {
	i, ok := p.ipIndex[addr]
	if !ok {
		return HostInterface{}, false
	}
	return p.Hosts[i], true
}
