// Package topo is the one topology model of grid: the fabric builds it, the
// solver routes over it, the monitor and the experiment runner read it.
// A Topology is loaded from a YAML file (see topologies/schema.json and
// topologies/README.md) or made by a generator (FatTree, LeafSpine, Testbed,
// PaperFig1); Validate checks it and Plan derives the addressing plan.
//
// # Addressing plan
//
// Addresses follow from node IDs alone, so every part of grid computes the
// same plan without sharing state, and it suits a P4 switch that forwards by
// IPv4 longest-prefix match and rewrites MAC addresses (the p4lang/tutorials
// model):
//
//   - Host h with ID i (1..16383) gets, on interface ethE (E in 0..3), the
//     address 10.(64E + i>>8).(i&255).1/24: host 1's eth0 is 10.0.1.1/24,
//     host 300's eth0 is 10.1.44.1/24. Each host interface is alone in its /24,
//     so every other host is reached through the gateway.
//   - The gateway of that interface is 10.(64E + i>>8).(i&255).254, an address
//     no interface holds: the host routes 10.0.0.0/8 (HostNetwork) via it and
//     has one static neighbour entry mapping it to the MAC of the switch port at
//     the other end of the link. No ARP is needed; the switch matches the
//     destination IPv4 address and rewrites both MACs.
//   - Host MACs are locally administered unicast: 02:00:00:E:(i>>8):(i&255).
//   - Switch port MACs: 02:01:(s>>8):(s&255):(p>>8):(p&255) for switch ID s and
//     port p, so the second byte tells hosts (00) from switch ports (01).
package topo

import (
	"net"
	"net/netip"
	"time"
)

// Kind says whether a node is an end host or a switch.
type Kind string

const (
	KindHost   Kind = "host"
	KindSwitch Kind = "switch"
)

// Role is what a host does in a training job.
type Role string

const (
	RoleWorker Role = "worker"
	RolePS     Role = "ps"
	RoleHost   Role = "" // a plain host with no part in training
)

// Tier is a switch's layer in a structured topology; empty when the layout has none.
type Tier string

const (
	TierEdge  Tier = "edge"
	TierAgg   Tier = "agg"
	TierCore  Tier = "core"
	TierLeaf  Tier = "leaf"
	TierSpine Tier = "spine"
)

// Bandwidth is a rate in bits per second; 0 means unlimited.
type Bandwidth float64

// Topology is a set of named hosts and switches joined by point-to-point links.
type Topology struct {
	Name        string
	Description string  // free text for people, kept through Parse and Marshal
	Nodes       []*Node // in file (or generator) order
	Links       []*Link // in file (or generator) order
	// Source is the file the topology was read from, for error messages; empty for generated ones.
	Source string
}

// Node is a host or a switch.
type Node struct {
	Name string
	Kind Kind
	// ID is a small positive number unique among nodes of the same kind: the
	// switch id carried in aggregation packets, and the host number that
	// derives the host's addresses. Assigned in order when the file omits it.
	ID int

	// Host fields.
	Role Role
	// Ingress is a PS's ingress bandwidth B (GRID's B_alpha); 0 means the sum of its link bandwidths.
	Ingress Bandwidth

	// Switch fields.
	Tier         Tier
	Programmable bool      // can aggregate gradients in the data plane
	Capacity     Bandwidth // processing capacity C_s, required (> 0) on programmable switches

	// Line is the line of the node's definition in Source, for error messages.
	Line int
}

// Endpoint is one end of a link: a node and the port (switch) or interface (host) there.
type Endpoint struct {
	Node string
	// Port is the switch port number (bmv2/P4Runtime port, starting at 1) or the
	// host interface index (eth0 is 0).
	Port int
}

// Link is a full-duplex point-to-point link; its properties apply to each direction.
type Link struct {
	A, B      Endpoint
	Bandwidth Bandwidth     // per direction; 0 = unlimited
	Delay     time.Duration // one-way; the kernel here has no netem: the switch back end emulates it
	Loss      float64       // percent of packets lost per direction, emulated like Delay
	MTU       int           // 0 means 1500
	Line      int           // line in Source, for error messages
}

// HostInterface is the addressing plan of one host interface.
type HostInterface struct {
	Host       string
	Name       string       // interface name inside the host namespace, eth0, eth1, ...
	Port       int          // interface index, the Endpoint.Port of its link
	IP         netip.Prefix // the host address with its prefix
	MAC        net.HardwareAddr
	Gateway    netip.Addr       // next hop for every other host (the switch port it faces)
	GatewayMAC net.HardwareAddr // MAC of that switch port, installed as a static neighbour
	Peer       Endpoint         // the switch port at the other end of the link
}

// SwitchPort is the addressing plan of one switch port.
type SwitchPort struct {
	Switch string
	Port   int
	MAC    net.HardwareAddr
	Peer   Endpoint
}
