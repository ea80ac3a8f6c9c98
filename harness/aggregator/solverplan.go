package aggregator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"slices"
	"time"

	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
)

// PlanOptions tune how a routing plan becomes aggregator configuration.
type PlanOptions struct {
	// Values is N, values per packet (32 or 64; 0 means 32). It sets the
	// jobs' packet size and the capacity meter's fragments per second.
	Values int
	// ReclaimMicros is every aggregation's reclaim time in µs (0: never);
	// see gradproto.Aggregation.
	ReclaimMicros uint64
	// CapacityScale multiplies each programmable switch's C_s before it
	// becomes its capacity meter: an emulation that runs links 1000 times
	// slower than the topology says sets 0.001. 0 leaves the meters
	// unconfigured (unlimited).
	CapacityScale float64
	// Burst is the capacity meter's burst in fragments; 0 means 64.
	Burst uint32
	// BurstPerStream and BurstTime, when set, size each meter's burst
	// instead: the larger of BurstPerStream fragments for every worker (or
	// child switch) the switch aggregates, over all jobs, and C_s (scaled)
	// over BurstTime. A meter starts full, and what its burst passes on top
	// of C_s is a share of a run of seconds: see runner.MeterBurst.
	BurstPerStream uint32
	BurstTime      time.Duration
}

// shareNoise is the fraction below which a worker's share is rounding
// noise of the LP, not traffic.
const shareNoise = 1e-6

// Deployment is a solver plan in the aggregator's terms: what the
// controller installs in every switch and what every job's endpoints use.
type Deployment struct {
	Switches []SwitchDeployment // in topology order
	Jobs     []JobDeployment    // in plan order
}

// SwitchDeployment is one switch's configuration.
type SwitchDeployment struct {
	Name   string
	ID     int
	Config gradproto.SwitchConfig
}

// JobDeployment is one job's endpoints: its id in packets and tables (its
// position in the plan, from 1), the plan its workers and PS follow
// (member i is Workers[i]) and the hosts. Plan.Gateway is the PS's gateway
// MAC; the switches ignore destination MACs on arrival, and hosts with
// kernel sockets use their own gateway (topo.HostInterface.GatewayMAC).
type JobDeployment struct {
	Name    string
	Plan    gradproto.Plan
	PS      string
	Workers []string
}

// Switch returns the configuration of the named switch.
func (d *Deployment) Switch(name string) (*SwitchDeployment, bool) {
	for i := range d.Switches {
		if d.Switches[i].Name == name {
			return &d.Switches[i], true
		}
	}
	return nil, false
}

// FromSolverPlan turns a solver plan for topology t (plan.json of grid
// solve) into per-switch aggregator configuration and per-job endpoint
// plans:
//
//   - every switch port gets its topology MAC (port_mac) and every host
//     address a /32 route along a shortest path (ipv4_lpm); routes to a PS
//     follow the plan's result streams (switches[].aggregate[].out_port,
//     switches[].streams), since partial sums travel to the PS by IPv4;
//   - switches[].aggregate becomes agg_config with the switch's id as node
//     id; switches[].forward becomes grad_route, keyed (job, node, the
//     worker's address);
//   - switches[].multicast becomes a result group per (job, in_port), with
//     result_host rewrites on ports that lead to the job's workers; the
//     groups must take a result from the PS to every worker exactly once;
//   - each worker's share names its node (the PS is node 0) and gets the
//     next free bitmap slot at that node.
//
// A worker whose shares name several nodes sends each fragment to one of
// them by gradproto's schedule; a node with more than 64 workers (in any
// class of fragments) is addressed by one node id per 64 of them
// (splits.go). It fails, naming the plan field, on what the data plane
// cannot do: a fan-in that disagrees with the workers' shares, or result
// streams of one PS
// leaving a switch on different ports (partial sums follow one IPv4 route),
// or multicast rules that copy a result, loop or miss a worker.
func FromSolverPlan(t *topo.Topology, p *solver.Plan, opt PlanOptions) (*Deployment, error) {
	values := opt.Values
	if values == 0 {
		values = gradproto.DefaultValues
	}
	if values != 32 && values != 64 {
		return nil, fmt.Errorf("%d values per packet: the aggregator supports 32 and 64", values)
	}
	if p.Topology != t.Name {
		return nil, fmt.Errorf("topology: the plan is for topology %q, not %q", p.Topology, t.Name)
	}
	addr, err := t.Plan()
	if err != nil {
		return nil, err
	}
	b := &planBuilder{t: t, addr: addr, opt: opt, values: values, index: map[string]int{}, jobID: map[string]uint16{}}
	for _, n := range t.Switches() {
		b.index[n.Name] = len(b.d.Switches)
		b.d.Switches = append(b.d.Switches, SwitchDeployment{Name: n.Name, ID: n.ID})
	}
	b.addPortsAndRoutes()
	for i := range p.Jobs {
		if err := b.addJob(i, &p.Jobs[i]); err != nil {
			return nil, err
		}
	}
	for i := range p.Switches {
		if err := b.addSwitchRules(i, &p.Switches[i]); err != nil {
			return nil, err
		}
	}
	for j := range b.d.Jobs {
		if err := b.checkResultDelivery(j); err != nil {
			return nil, err
		}
	}
	for i := range b.d.Switches {
		s := &b.d.Switches[i]
		if err := s.Config.Validate(); err != nil {
			return nil, fmt.Errorf("switch %s: %w", s.Name, err)
		}
	}
	return &b.d, nil
}

// LoadDeployment reads a topology file and a plan.json that grid solve
// wrote for it, and converts them with FromSolverPlan; errors name the file.
func LoadDeployment(topoPath, planPath string, opt PlanOptions) (*Deployment, error) {
	t, err := topo.Load(topoPath)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(planPath)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	var p solver.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", jsonPosition(planPath, data, err), err)
	}
	d, err := FromSolverPlan(t, &p, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", planPath, err)
	}
	return d, nil
}

// jsonPosition is path:line:column of a JSON decoding error, or path
// alone when the error has no offset.
func jsonPosition(path string, data []byte, err error) string {
	var off int64
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = max(syn.Offset-1, 0) // the offset counts the offending byte
	case errors.As(err, &typ):
		off = typ.Offset
	default:
		return path
	}
	before := data[:min(int(off), len(data))]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("%s:%d:%d", path, line, col)
}

type planBuilder struct {
	t      *topo.Topology
	addr   *topo.AddressPlan
	opt    PlanOptions
	values int
	d      Deployment
	index  map[string]int    // switch name -> position in d.Switches
	jobID  map[string]uint16 // job name -> job id
	// members[job][node] counts the workers whose shares name node.
	members map[uint16]map[uint16]int
	// nodes[job][node name] are the node ids the job's workers address
	// that node by (splits.go): one per distinct set of workers.
	nodes map[uint16]map[string][]nodeAlias
	// nextID is the next node id free for an alias.
	nextID int
	// psRoute[switch][ps address] is the plan's port towards a PS and the
	// field that set it.
	psRoute map[string]map[netip.Addr]portSource
	// groupField names the plan field of each result group, by (job, switch, in port).
	groupField map[groupKey]string
}

type groupKey struct {
	job    uint16
	sw     string
	inPort uint16
}

type portSource struct {
	port  int
	field string
}

func macOf(hw net.HardwareAddr) gradproto.MAC {
	var m gradproto.MAC
	copy(m[:], hw)
	return m
}

// nextHop is the MAC of the device at the far end of switch sw's port.
func (b *planBuilder) nextHop(sw string, port int) (gradproto.MAC, bool) {
	sp, ok := b.addr.Port(sw, port)
	if !ok {
		return gradproto.MAC{}, false
	}
	peer := b.t.Node(sp.Peer.Node)
	if peer.Kind == topo.KindHost {
		return macOf(topo.HostMAC(peer.ID, sp.Peer.Port)), true
	}
	return macOf(topo.SwitchPortMAC(peer.ID, sp.Peer.Port)), true
}

// addPortsAndRoutes gives every switch its port MACs and a route to every
// host address: out of the port a shortest path (fewest switches, lowest
// port on ties) starts with.
func (b *planBuilder) addPortsAndRoutes() {
	for _, sp := range b.addr.Ports {
		cfg := &b.d.Switches[b.index[sp.Switch]].Config
		cfg.Ports = append(cfg.Ports, gradproto.PortMAC{Port: uint16(sp.Port), MAC: macOf(sp.MAC)})
	}
	for _, hi := range b.addr.Hosts {
		dist := b.switchDistances(hi.Peer.Node)
		for i := range b.d.Switches {
			s := &b.d.Switches[i]
			port := -1
			if s.Name == hi.Peer.Node {
				port = hi.Peer.Port
			} else if d, ok := dist[s.Name]; ok {
				for _, adj := range b.t.Neighbors(s.Name) {
					if pd, ok := dist[adj.Peer.Node]; ok && pd == d-1 && b.t.Node(adj.Peer.Node).Kind == topo.KindSwitch {
						port = adj.Port
						break
					}
				}
			}
			if port < 0 {
				continue // unreachable from this switch
			}
			nh, _ := b.nextHop(s.Name, port)
			s.Config.Routes = append(s.Config.Routes, gradproto.Route{Prefix: netip.PrefixFrom(hi.IP.Addr(), 32), Port: uint16(port), NextHop: nh})
		}
	}
}

// switchDistances is the number of switch-to-switch hops from every switch
// to sw.
func (b *planBuilder) switchDistances(sw string) map[string]int {
	dist := map[string]int{sw: 0}
	queue := []string{sw}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, adj := range b.t.Neighbors(n) {
			peer := adj.Peer.Node
			if _, seen := dist[peer]; seen || b.t.Node(peer).Kind != topo.KindSwitch {
				continue
			}
			dist[peer] = dist[n] + 1
			queue = append(queue, peer)
		}
	}
	return dist
}

// hostInterface is the interface of host that faces switch sw (the first
// one when sw is empty or none does).
func (b *planBuilder) hostInterface(host, sw string) (topo.HostInterface, bool) {
	ifs := b.addr.Interfaces(host)
	if len(ifs) == 0 {
		return topo.HostInterface{}, false
	}
	for _, hi := range ifs {
		if hi.Peer.Node == sw {
			return hi, true
		}
	}
	return ifs[0], true
}

func (b *planBuilder) addJob(i int, j *solver.JobPlan) error {
	field := fmt.Sprintf("jobs[%d] (%s)", i, j.Name)
	if i+1 > math.MaxUint16 {
		return fmt.Errorf("%s: more than %d jobs", field, math.MaxUint16)
	}
	if _, dup := b.jobID[j.Name]; dup {
		return fmt.Errorf("%s: job name used twice", field)
	}
	id := uint16(i + 1)
	b.jobID[j.Name] = id
	ps, ok := b.hostInterface(j.PS, "")
	if !ok {
		return fmt.Errorf("%s.ps: %q is not a host of topology %s", field, j.PS, b.t.Name)
	}
	jd := JobDeployment{Name: j.Name, PS: j.PS,
		Plan: gradproto.Plan{Job: id, PSNode: psNodeID, PSIP: ps.IP.Addr(), Gateway: macOf(ps.GatewayMAC), Values: b.values}}
	if b.members == nil {
		b.members = map[uint16]map[uint16]int{}
	}
	if err := b.addMembers(field, j, &jd); err != nil {
		return err
	}
	b.d.Jobs = append(b.d.Jobs, jd)
	return nil
}

// psNodeID is the node id workers of the PS write: the solver's 0, which no
// switch has (topology switch ids start at 1).
const psNodeID = 0

// nodeID checks a share's node id against the topology.
func (b *planBuilder) nodeID(s *solver.Share, ps string) (uint16, error) {
	if s.Node == ps {
		if s.NodeID != psNodeID {
			return 0, fmt.Errorf("node_id %d of the PS %s, want %d", s.NodeID, ps, psNodeID)
		}
		return psNodeID, nil
	}
	n := b.t.Node(s.Node)
	if n == nil || n.Kind != topo.KindSwitch {
		return 0, fmt.Errorf("node %q is neither the job's PS nor a switch", s.Node)
	}
	if s.NodeID != n.ID {
		return 0, fmt.Errorf("node_id %d of %s, whose topology id is %d", s.NodeID, s.Node, n.ID)
	}
	return uint16(n.ID), nil
}

func (b *planBuilder) addSwitchRules(i int, sp *solver.SwitchPlan) error {
	field := fmt.Sprintf("switches[%d] (%s)", i, sp.Name)
	si, ok := b.index[sp.Name]
	if !ok {
		return fmt.Errorf("%s: not a switch of topology %s", field, b.t.Name)
	}
	s := &b.d.Switches[si]
	node := b.t.Node(sp.Name)
	cfg := &s.Config
	port := func(f string, p int) (uint16, gradproto.MAC, error) {
		nh, ok := b.nextHop(sp.Name, p)
		if !ok {
			return 0, nh, fmt.Errorf("%s.%s: %s has no port %d", field, f, sp.Name, p)
		}
		return uint16(p), nh, nil
	}
	job := func(f, name string) (uint16, error) {
		id, ok := b.jobID[name]
		if !ok {
			return 0, fmt.Errorf("%s.%s: job %q is not in the plan's jobs", field, f, name)
		}
		return id, nil
	}
	for k, a := range sp.Aggregate {
		f := fmt.Sprintf("aggregate[%d]", k)
		id, err := job(f, a.Job)
		if err != nil {
			return err
		}
		if !node.Programmable {
			return fmt.Errorf("%s.%s: %s is not programmable", field, f, sp.Name)
		}
		// The plan's fan-in counts all the node's workers; the switch
		// counts each alias's (at most 64) under its own id.
		if got := b.members[id][uint16(node.ID)]; got != a.FanIn {
			return fmt.Errorf("%s.%s: fan_in %d for job %s, but %d of its workers' shares name %s", field, f, a.FanIn, a.Job, got, sp.Name)
		}
		for k, al := range b.aliases(id, sp.Name, uint16(node.ID), a.FanIn) {
			cfg.Aggregations = append(cfg.Aggregations, gradproto.Aggregation{Job: id, Node: al.id, FanIn: uint16(al.fanIn),
				ReclaimMicros: b.opt.ReclaimMicros, UnitOffset: uint32(k)})
		}
		if err := b.routeToPS(sp.Name, id, a.OutPort, field+"."+f+".out_port"); err != nil {
			return err
		}
	}
	for k, st := range sp.Streams {
		f := fmt.Sprintf("streams[%d]", k)
		id, err := job(f, st.Job)
		if err != nil {
			return err
		}
		if err := b.routeToPS(sp.Name, id, st.OutPort, field+"."+f+".out_port"); err != nil {
			return err
		}
	}
	for k, fw := range sp.Forward {
		f := fmt.Sprintf("forward[%d]", k)
		id, err := job(f, fw.Job)
		if err != nil {
			return err
		}
		if fw.NodeID < 0 || fw.NodeID > math.MaxUint16 {
			return fmt.Errorf("%s.%s: node_id %d outside 0..%d", field, f, fw.NodeID, math.MaxUint16)
		}
		src, ok := b.memberIP(id, fw.Worker)
		if !ok {
			return fmt.Errorf("%s.%s: worker %q is not a worker of job %s", field, f, fw.Worker, fw.Job)
		}
		p, nh, err := port(f+".out_port", fw.OutPort)
		if err != nil {
			return err
		}
		for _, al := range b.aliases(id, fw.Node, uint16(fw.NodeID), 0) {
			if al.workers == nil || al.workers[fw.Worker] {
				cfg.GradRoutes = append(cfg.GradRoutes, gradproto.GradRoute{Job: id, Node: al.id, Src: src, Port: p, NextHop: nh})
			}
		}
	}
	for k, m := range sp.Multicast {
		f := fmt.Sprintf("multicast[%d]", k)
		id, err := job(f, m.Job)
		if err != nil {
			return err
		}
		in, _, err := port(f+".in_port", m.InPort)
		if err != nil {
			return err
		}
		// One group per (job, arrival port): numbered in order, from 1.
		g := gradproto.ResultGroup{Job: id, InPort: in, Group: uint16(len(cfg.ResultGroups) + 1)}
		if b.groupField == nil {
			b.groupField = map[groupKey]string{}
		}
		b.groupField[groupKey{id, sp.Name, in}] = field + "." + f
		for _, op := range m.OutPorts {
			p, _, err := port(f+".out_ports", op)
			if err != nil {
				return err
			}
			g.Ports = append(g.Ports, p)
			if err := b.addResultHost(cfg, id, sp.Name, op); err != nil {
				return fmt.Errorf("%s.%s: %w", field, f, err)
			}
		}
		cfg.ResultGroups = append(cfg.ResultGroups, g)
	}
	if b.opt.CapacityScale > 0 && node.Programmable && node.Capacity > 0 {
		burst := b.opt.Burst
		if burst == 0 {
			burst = 64
		}
		c := gradproto.CapacityFor(float64(node.Capacity)*b.opt.CapacityScale, b.values, burst)
		if b.opt.BurstPerStream > 0 || b.opt.BurstTime > 0 {
			streams := uint32(0)
			for _, a := range cfg.Aggregations {
				streams += uint32(a.FanIn)
			}
			c.Burst = max(1, streams*b.opt.BurstPerStream, uint32(min(math.Ceil(c.PacketsPerSecond*b.opt.BurstTime.Seconds()), math.MaxUint32)))
		}
		cfg.Capacity = &c
	}
	return nil
}

// checkResultDelivery follows one result of job j as the switches would:
// from the PS out of its gateway interface, through each switch's result
// group for the port it arrives on (a switch without one drops it: results
// are addressed to 255.255.255.255). Every worker must get it exactly once;
// a switch reached twice means copies or a loop (results that retrace
// every worker's path do this where two paths cross a switch in different
// directions).
func (b *planBuilder) checkResultDelivery(j int) error {
	jd := &b.d.Jobs[j]
	field := fmt.Sprintf("jobs[%d] (%s)", j, jd.Name)
	ps, ok := b.hostInterface(jd.PS, "")
	if !ok {
		return fmt.Errorf("%s.ps: %q is not a host of topology %s", field, jd.PS, b.t.Name)
	}
	type arrival struct {
		sw   string
		port uint16
		via  string // the plan field that sent it here
	}
	got := map[string]int{}
	reached := map[string]string{} // switch -> field of the group that first sent a result there
	queue := []arrival{{ps.Peer.Node, uint16(ps.Peer.Port), field + ".ps"}}
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		if first, twice := reached[a.sw]; twice {
			return fmt.Errorf("%s: a result reaches switch %s twice, through %s and %s: the multicast rules copy or loop", field, a.sw, first, a.via)
		}
		reached[a.sw] = a.via
		cfg := &b.d.Switches[b.index[a.sw]].Config
		for _, g := range cfg.ResultGroups {
			if g.Job != jd.Plan.Job || g.InPort != a.port {
				continue
			}
			via := b.groupField[groupKey{jd.Plan.Job, a.sw, g.InPort}]
			for _, port := range g.Ports {
				sp, _ := b.addr.Port(a.sw, int(port))
				if b.t.Node(sp.Peer.Node).Kind == topo.KindHost {
					got[sp.Peer.Node]++
					continue
				}
				queue = append(queue, arrival{sp.Peer.Node, uint16(sp.Peer.Port), via})
			}
		}
	}
	for i, w := range jd.Workers {
		if got[w] != 1 {
			return fmt.Errorf("%s.workers[%d] (%s): the multicast rules deliver each result %d times, want once", field, i, w, got[w])
		}
	}
	return nil
}

// memberIP is the address worker host sends job's gradients from.
func (b *planBuilder) memberIP(job uint16, host string) (netip.Addr, bool) {
	jd := &b.d.Jobs[job-1]
	for i, w := range jd.Workers {
		if w == host {
			return jd.Plan.Members[i].IP, true
		}
	}
	return netip.Addr{}, false
}

// addResultHost rewrites result replicas leaving port towards a worker of
// job to that worker's addresses; ports towards switches or other hosts
// need none.
func (b *planBuilder) addResultHost(cfg *gradproto.SwitchConfig, job uint16, sw string, port int) error {
	sp, _ := b.addr.Port(sw, port)
	hi, ok := b.addr.Interface(sp.Peer.Node, sp.Peer.Port)
	if !ok {
		return nil // a switch
	}
	jd := &b.d.Jobs[job-1]
	for _, m := range jd.Plan.Members {
		if m.IP == hi.IP.Addr() {
			if !slices.ContainsFunc(cfg.ResultHosts, func(h gradproto.ResultHost) bool { return h.Job == job && h.Port == uint16(port) }) {
				cfg.ResultHosts = append(cfg.ResultHosts, gradproto.ResultHost{Job: job, Port: uint16(port), MAC: m.MAC, IP: m.IP})
			}
			return nil
		}
	}
	return fmt.Errorf("port %d leads to %s, which is not a worker of job %s", port, hi.Host, jd.Name)
}

// routeToPS points switch sw's route to job's PS out port: partial sums
// reach the PS by IPv4, so they follow the plan's stream only if the route
// does.
func (b *planBuilder) routeToPS(sw string, job uint16, port int, field string) error {
	nh, ok := b.nextHop(sw, port)
	if !ok {
		return fmt.Errorf("%s: %s has no port %d", field, sw, port)
	}
	ps := b.d.Jobs[job-1].Plan.PSIP
	if b.psRoute == nil {
		b.psRoute = map[string]map[netip.Addr]portSource{}
	}
	if b.psRoute[sw] == nil {
		b.psRoute[sw] = map[netip.Addr]portSource{}
	}
	if prev, set := b.psRoute[sw][ps]; set && prev.port != port {
		return fmt.Errorf("%s: port %d towards PS %v, but %s says port %d: partial sums reach a PS by one IPv4 route per switch", field, port, ps, prev.field, prev.port)
	}
	b.psRoute[sw][ps] = portSource{port: port, field: field}
	cfg := &b.d.Switches[b.index[sw]].Config
	prefix := netip.PrefixFrom(ps, 32)
	for i := range cfg.Routes {
		if cfg.Routes[i].Prefix == prefix {
			cfg.Routes[i].Port, cfg.Routes[i].NextHop = uint16(port), nh
			return nil
		}
	}
	cfg.Routes = append(cfg.Routes, gradproto.Route{Prefix: prefix, Port: uint16(port), NextHop: nh})
	return nil
}
