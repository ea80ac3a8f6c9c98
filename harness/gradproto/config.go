package gradproto

import (
	"fmt"
	"net/netip"
	"time"
)

// SwitchConfig is what the controller installs in one aggregator switch,
// in the words of the routing plan. harness/aggregator turns it into table
// entries, multicast groups and meter rates; Switch (the reference model)
// executes it directly.
type SwitchConfig struct {
	// Ports gives the source MAC address the switch writes on frames leaving
	// each port (table port_mac).
	Ports []PortMAC
	// Routes is IPv4 longest-prefix-match forwarding for everything that is
	// not a fragment on its way to its aggregation node (table ipv4_lpm).
	Routes []Route
	// Aggregations are the (job, node) pairs this switch aggregates, with
	// the plan's fan-in (table agg_config). Node is this switch's node id.
	Aggregations []Aggregation
	// GradRoutes send a worker's fragments for (job, node) along the
	// plan's path towards node (table grad_route).
	GradRoutes []GradRoute
	// ResultGroups replicate a job's results arriving on a port to the
	// listed ports (table job_mcast and the packet replication engine).
	ResultGroups []ResultGroup
	// ResultHosts rewrite the destination of a result replica leaving a
	// port that leads to a worker host (table result_host); replicas on
	// other ports (to other switches) keep their addresses.
	ResultHosts []ResultHost
	// Capacity is the switch's processing capacity C_s for aggregated
	// fragments (meter capacity); nil leaves it unlimited.
	Capacity *Capacity
}

// PortMAC is the MAC address of one switch port.
type PortMAC struct {
	Port uint16
	MAC  MAC
}

// Route forwards Prefix out Port to the next hop NextHop.
type Route struct {
	Prefix  netip.Prefix
	Port    uint16
	NextHop MAC
}

// Aggregation makes the switch aggregate job Job's fragments addressed to
// node Node, FanIn workers per fragment. A fragment of the job that finds
// its unit held by another fragment that has taken no contribution for
// ReclaimMicros µs takes the unit over instead of colliding (0: never). Set
// it well above the workers' retransmission timeout: a unit idle that long
// has no worker waiting on it, since waiting workers resend and a resend
// flushes the unit.
//
// UnitOffset is 0 for a switch's first node id of a job. A further id of
// the job at the switch (a second set of up to 64 workers of the same
// fragments, aggregate_alias) gets its own offset in 1..units-1: its
// fragments take the unit that many after the one the hash names, so two
// sets of one fragment never share a unit.
type Aggregation struct {
	Job, Node, FanIn uint16
	ReclaimMicros    uint64
	UnitOffset       uint32
}

// GradRoute forwards the fragments of job Job for aggregation node Node
// that the worker with address Src sends out Port to NextHop. The plan's
// paths are per worker: two workers of one (job, node) may leave a switch
// on different ports.
type GradRoute struct {
	Job, Node uint16
	Src       netip.Addr
	Port      uint16
	NextHop   MAC
}

// ResultGroup replicates job Job's results that arrive on InPort (from the
// PS, or from the previous switch on the way back) to Ports, with multicast
// group Group. Keying on the arrival port lets results retrace the
// gradients' paths, which may meet a switch twice (GRID sends some
// gradients off the shortest path).
type ResultGroup struct {
	Job, InPort, Group uint16
	Ports              []uint16
}

// ResultHost is the worker host behind Port for job Job's results.
type ResultHost struct {
	Job, Port uint16
	MAC       MAC
	IP        netip.Addr
}

// Capacity is a packet rate limit: PacketsPerSecond sustained, Burst
// packets at once.
type Capacity struct {
	PacketsPerSecond float64
	Burst            uint32
}

// MaxPort is the largest v1model port number (bit<9>, 511 is the drop port).
const MaxPort = 510

// MaxMicros is the largest 48-bit timestamp.
const MaxMicros = 1<<48 - 1

// Validate checks the configuration against the program's limits: it names
// the offending entry.
func (c *SwitchConfig) Validate() error {
	// Each table key may appear once: a second entry would be rejected by
	// the switch, so name both here.
	keys := map[string]int{}
	unique := func(list string, i int, key string) error {
		k := list + " " + key
		if j, dup := keys[k]; dup {
			return fmt.Errorf("%s[%d]: %s already in %s[%d]", list, i, key, list, j)
		}
		keys[k] = i
		return nil
	}
	for i, p := range c.Ports {
		if p.Port > MaxPort {
			return fmt.Errorf("ports[%d]: port %d above %d", i, p.Port, MaxPort)
		}
		if err := unique("ports", i, fmt.Sprintf("port %d", p.Port)); err != nil {
			return err
		}
	}
	for i, r := range c.Routes {
		if !r.Prefix.IsValid() || !r.Prefix.Addr().Is4() {
			return fmt.Errorf("routes[%d]: prefix %v is not an IPv4 prefix", i, r.Prefix)
		}
		if r.Port > MaxPort {
			return fmt.Errorf("routes[%d]: port %d above %d", i, r.Port, MaxPort)
		}
		if err := unique("routes", i, "prefix "+r.Prefix.Masked().String()); err != nil {
			return err
		}
	}
	for i, a := range c.Aggregations {
		if a.FanIn == 0 || a.FanIn > MaxFanIn {
			return fmt.Errorf("aggregations[%d]: fan-in %d of job %d at node %d outside 1..%d", i, a.FanIn, a.Job, a.Node, MaxFanIn)
		}
		if a.ReclaimMicros > MaxMicros {
			return fmt.Errorf("aggregations[%d]: reclaim time %d µs does not fit the 48-bit timestamp", i, a.ReclaimMicros)
		}
		if err := unique("aggregations", i, fmt.Sprintf("job %d node %d", a.Job, a.Node)); err != nil {
			return err
		}
	}
	for i, g := range c.GradRoutes {
		if g.Port > MaxPort {
			return fmt.Errorf("grad_routes[%d]: port %d above %d", i, g.Port, MaxPort)
		}
		if !g.Src.Is4() {
			return fmt.Errorf("grad_routes[%d]: worker address %v is not an IPv4 address", i, g.Src)
		}
		if err := unique("grad_routes", i, fmt.Sprintf("job %d node %d worker %v", g.Job, g.Node, g.Src)); err != nil {
			return err
		}
	}
	for i, g := range c.ResultGroups {
		if g.Group == 0 {
			return fmt.Errorf("result_groups[%d]: multicast group 0 means no multicast in v1model", i)
		}
		if g.InPort > MaxPort {
			return fmt.Errorf("result_groups[%d]: in_port %d above %d", i, g.InPort, MaxPort)
		}
		for _, p := range g.Ports {
			if p > MaxPort {
				return fmt.Errorf("result_groups[%d]: port %d above %d", i, p, MaxPort)
			}
		}
		if err := unique("result_groups", i, fmt.Sprintf("job %d in_port %d", g.Job, g.InPort)); err != nil {
			return err
		}
		if err := unique("result_groups", i, fmt.Sprintf("group %d", g.Group)); err != nil {
			return err
		}
	}
	for i, h := range c.ResultHosts {
		if !h.IP.Is4() {
			return fmt.Errorf("result_hosts[%d]: %v is not an IPv4 address", i, h.IP)
		}
		if err := unique("result_hosts", i, fmt.Sprintf("job %d port %d", h.Job, h.Port)); err != nil {
			return err
		}
	}
	if c.Capacity != nil && (c.Capacity.PacketsPerSecond <= 0 || c.Capacity.Burst == 0) {
		return fmt.Errorf("capacity: rate %g packets/s and burst %d must both be positive", c.Capacity.PacketsPerSecond, c.Capacity.Burst)
	}
	return nil
}

// CapacityFor converts a switch's processing capacity C_s, a rate of
// gradient traffic in bits per second as the GRID model states it, into the
// meter's fragments per second for packets of values values (whole frames
// on the wire), with a burst of burst fragments.
func CapacityFor(bitsPerSecond float64, values int, burst uint32) Capacity {
	frameBits := float64(8 * (FrameOverhead + HeaderLen + 4*values))
	return Capacity{PacketsPerSecond: bitsPerSecond / frameBits, Burst: burst}
}

// SetReclaim gives every aggregation of the configuration reclaim time d.
func (c *SwitchConfig) SetReclaim(d time.Duration) {
	for i := range c.Aggregations {
		c.Aggregations[i].ReclaimMicros = uint64(d.Microseconds())
	}
}
