package gradproto

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/netip"
	"sort"
	"time"
)

// Unit states, the top 16 bits of register unit_tag.
const (
	UnitEmpty  = 0
	UnitActive = 1
	// UnitDone is a unit whose fragment went to the PS. It still names the
	// fragment so late duplicates are recognised, and a fragment hashing to
	// it may take it over.
	UnitDone = 2
)

// Event is an index into the per-job statistics counter job_stats
// (index = (job mod StatsJobs) * StatsStride + event).
type Event int

const (
	EvReceived  Event = iota // fragment reached its aggregation node
	EvAbsorbed               // added to a unit, nothing sent
	EvEmitted                // partial sum sent to the PS
	EvCollision              // unit held another fragment: control packet
	EvDuplicate              // worker already counted: dropped
	EvOverflow               // int32 overflow: partial sent early
	EvCapacity               // over the capacity meter: control packet
	EvPassed                 // passed to the PS unaggregated
	EvReclaimed              // took over a unit another fragment left idle
	NumEvents
)

var eventNames = [...]string{"received", "absorbed", "emitted", "collision", "duplicate", "overflow", "capacity", "passed", "reclaimed"}

func (e Event) String() string {
	if e >= 0 && int(e) < len(eventNames) {
		return eventNames[e]
	}
	return fmt.Sprintf("event(%d)", int(e))
}

// Program parameters that are compile-time constants of aggregator.p4.
const (
	DefaultUnits = 16384 // GRID_UNITS
	StatsJobs    = 1024  // GRID_JOBS: job_stats has StatsJobs*StatsStride cells
	StatsStride  = 16    // job_stats cells per job (NumEvents used)
	NumPorts     = 512   // port_rx / port_tx size
)

// Unit is one aggregation memory unit, as the registers hold it.
type Unit struct {
	State  uint16
	Job    uint16
	Frag   uint32
	Seen   uint64 // workers counted towards the fan-in
	Summed uint64 // workers whose values are in Values
	Count  uint16 // workers counted (sum of their packets' count fields)
	NSum   uint16 // workers summed
	// Time is when the unit last took a contribution, in µs of the
	// switch's clock (register unit_time, 48 bits).
	Time   uint64
	Values []uint32
}

// Tag is the unit_tag register value: state ++ job ++ fragment.
func (u *Unit) Tag() uint64 { return uint64(u.State)<<48 | uint64(u.Job)<<32 | uint64(u.Frag) }

// Output is a frame leaving the switch.
type Output struct {
	Port  uint16
	Frame []byte
}

// Switch is the reference model of one aggregator switch: it processes a
// frame exactly as p4/aggregator/aggregator.p4 does on a v1model target and
// returns the frames that leave it. It is not safe for concurrent use.
type Switch struct {
	cfg    SwitchConfig
	values int
	units  []Unit

	lpm      []Route // longest prefix first
	agg      map[[2]uint16]Aggregation
	grad     map[gradKey]GradRoute
	mcast    map[[2]uint16]uint16 // (job, in port) -> group
	groups   map[uint16][]uint16
	hosts    map[[2]uint16]ResultHost
	portMACs map[uint16]MAC

	tokens   float64
	lastFill time.Time
	// Now is the switch's clock (meter, timestamps); Start is its zero, as
	// bmv2's ingress_global_timestamp counts µs since the switch started.
	// Tests set both to make time deterministic.
	Now   func() time.Time
	Start time.Time

	// Stats counts events per job (the job_stats counter, packets).
	Stats map[uint16]*[NumEvents]uint64
	// PortRx and PortTx count packets per port (port_rx, port_tx).
	PortRx, PortTx [NumPorts]uint64
}

// NewSwitch builds the model of a switch compiled with values values per
// packet and units memory units, configured with cfg.
func NewSwitch(cfg SwitchConfig, values, units int) (*Switch, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if values != 32 && values != 64 {
		return nil, fmt.Errorf("values per packet %d: the program supports 32 and 64", values)
	}
	if units <= 0 {
		return nil, fmt.Errorf("memory units %d: must be positive", units)
	}
	for i, a := range cfg.Aggregations {
		if a.UnitOffset >= uint32(units) {
			return nil, fmt.Errorf("aggregations[%d]: unit offset %d of job %d at node %d outside 0..%d", i, a.UnitOffset, a.Job, a.Node, units-1)
		}
	}
	s := &Switch{
		cfg: cfg, values: values, units: make([]Unit, units), Start: time.Now(),
		agg: map[[2]uint16]Aggregation{}, grad: map[gradKey]GradRoute{}, mcast: map[[2]uint16]uint16{},
		groups: map[uint16][]uint16{}, hosts: map[[2]uint16]ResultHost{}, portMACs: map[uint16]MAC{},
		Now: time.Now, Stats: map[uint16]*[NumEvents]uint64{},
	}
	for i := range s.units {
		s.units[i].Values = make([]uint32, values)
	}
	s.lpm = append([]Route(nil), cfg.Routes...)
	sort.SliceStable(s.lpm, func(i, j int) bool { return s.lpm[i].Prefix.Bits() > s.lpm[j].Prefix.Bits() })
	for _, a := range cfg.Aggregations {
		s.agg[[2]uint16{a.Job, a.Node}] = a
	}
	for _, g := range cfg.GradRoutes {
		s.grad[gradKey{g.Job, g.Node, g.Src}] = g
	}
	for _, g := range cfg.ResultGroups {
		s.mcast[[2]uint16{g.Job, g.InPort}] = g.Group
		s.groups[g.Group] = g.Ports
	}
	for _, h := range cfg.ResultHosts {
		s.hosts[[2]uint16{h.Job, h.Port}] = h
	}
	for _, p := range cfg.Ports {
		s.portMACs[p.Port] = p.MAC
	}
	if cfg.Capacity != nil {
		s.tokens = float64(cfg.Capacity.Burst)
	}
	return s, nil
}

// gradKey is grad_route's key: job, node and the sending worker's address.
type gradKey struct {
	job, node uint16
	src       netip.Addr
}

// Units returns the memory units (read-only view for checks).
func (s *Switch) Units() []Unit { return s.units }

// UnitIndex is the memory unit a fragment maps to: CRC-32 of the job id and
// fragment id (6 bytes, big-endian) modulo the number of units, as v1model's
// hash(..., HashAlgorithm.crc32, 0, {job, frag}, M) computes it.
func UnitIndex(job uint16, frag uint32, units int) int {
	var b [6]byte
	binary.BigEndian.PutUint16(b[0:], job)
	binary.BigEndian.PutUint32(b[2:], frag)
	return int(crc32.ChecksumIEEE(b[:]) % uint32(units))
}

func (s *Switch) count(job uint16, e Event) {
	st := s.Stats[job]
	if st == nil {
		st = new([NumEvents]uint64)
		s.Stats[job] = st
	}
	st[e]++
}

// meterGreen runs the capacity meter for one packet.
func (s *Switch) meterGreen() bool {
	c := s.cfg.Capacity
	if c == nil {
		return true
	}
	now := s.Now()
	if !s.lastFill.IsZero() {
		s.tokens += now.Sub(s.lastFill).Seconds() * c.PacketsPerSecond
		if s.tokens > float64(c.Burst) {
			s.tokens = float64(c.Burst)
		}
	}
	s.lastFill = now
	if s.tokens < 1 {
		return false
	}
	s.tokens--
	return true
}

// timeMask keeps the 48 bits of a v1model timestamp.
const timeMask = 1<<48 - 1

// micros is ingress_global_timestamp: µs since Start, 48 bits.
func (s *Switch) micros() uint64 {
	return uint64(s.Now().Sub(s.Start).Microseconds()) & timeMask
}

// frame offsets
const (
	offIP    = EthernetLen
	offUDP   = offIP + IPv4Len
	offGRID  = offUDP + UDPLen
	offVals  = offGRID + HeaderLen
	offFlags = offGRID + 1
)

type route int

const (
	routeLPM route = iota
	routeDone
	routeMcast
	routeDrop
)

// Process runs one frame arriving on inPort through the switch.
func (s *Switch) Process(inPort uint16, frame []byte) []Output {
	if int(inPort) < NumPorts {
		s.PortRx[inPort]++
	}
	f := append([]byte(nil), frame...)
	// Parser.
	if len(f) < EthernetLen || binary.BigEndian.Uint16(f[12:]) != EtherTypeIPv4 || len(f) < offUDP {
		return nil // not IPv4: the ingress drops it
	}
	udpValid := f[offIP]&0x0f == 5 && f[offIP+9] == ProtoUDP && len(f) >= offGRID
	gridValid := udpValid && binary.BigEndian.Uint16(f[offUDP+2:]) == UDPPort && len(f) >= offVals
	// The parser reads values only when the UDP length is exactly that of N
	// values: a packet of another build is never added in part.
	valsValid := gridValid && int(binary.BigEndian.Uint16(f[offUDP+4:])) == UDPLen+HeaderLen+4*s.values && len(f) >= offVals+4*s.values
	if f[offIP+8] <= 1 {
		return nil
	}
	rt := routeLPM
	var port uint16
	var group uint16
	if gridValid {
		h := getHeader(f[offGRID:])
		switch {
		case h.Flags&FlagResult != 0:
			// A result to 255.255.255.255 is for every worker of the job;
			// one addressed to a worker (the PS answering its resend) goes
			// by IPv4 to that worker alone.
			if g, ok := s.mcast[[2]uint16{h.Job, inPort}]; ok && [4]byte(f[offIP+16:offIP+20]) == Broadcast.As4() {
				group, rt = g, routeMcast
				f[offIP+8]--
			}
		case h.Flags&(FlagAggregated|FlagCongestion) == 0:
			a, agg := s.agg[[2]uint16{h.Job, h.Node}]
			if agg && valsValid {
				rt, f = s.aggregate(f, h, a)
			} else if g, ok := s.grad[gradKey{h.Job, h.Node, netip.AddrFrom4([4]byte(f[offIP+12 : offIP+16]))}]; ok {
				copy(f[0:6], g.NextHop[:])
				port, rt = g.Port, routeDone
				f[offIP+8]--
			}
		}
	}
	if rt == routeDrop {
		return nil
	}
	if rt == routeLPM {
		dst := netip.AddrFrom4([4]byte(f[offIP+16 : offIP+20]))
		found := false
		for _, r := range s.lpm {
			if r.Prefix.Contains(dst) {
				copy(f[0:6], r.NextHop[:])
				port, found = r.Port, true
				f[offIP+8]--
				break
			}
		}
		if !found {
			return nil
		}
	}
	if rt == routeMcast {
		var out []Output
		for _, p := range s.groups[group] {
			out = append(out, s.egress(p, append([]byte(nil), f...), gridValid, true))
		}
		return out
	}
	return []Output{s.egress(port, f, gridValid, false)}
}

func (s *Switch) egress(port uint16, f []byte, gridValid, replica bool) Output {
	if gridValid && replica && f[offFlags]&FlagResult != 0 {
		job := binary.BigEndian.Uint16(f[offGRID+2:])
		if h, ok := s.hosts[[2]uint16{job, port}]; ok {
			copy(f[0:6], h.MAC[:])
			ip := h.IP.As4()
			copy(f[offIP+16:offIP+20], ip[:])
			binary.BigEndian.PutUint16(f[offUDP+6:], 0)
		}
	}
	if m, ok := s.portMACs[port]; ok {
		copy(f[6:12], m[:])
	}
	SetIPv4Checksum(f[offIP:offUDP])
	if int(port) < NumPorts {
		s.PortTx[port]++
	}
	return Output{Port: port, Frame: f}
}

// aggregate is the aggregation block of the ingress control; it edits f in
// place and says where it goes.
func (s *Switch) aggregate(f []byte, h Header, a Aggregation) (route, []byte) {
	fanin := a.FanIn
	s.count(h.Job, EvReceived)
	if !s.meterGreen() {
		s.count(h.Job, EvCapacity)
		return routeLPM, s.control(f)
	}
	u := &s.units[(UnitIndex(h.Job, h.Frag, len(s.units))+int(a.UnitOffset))%len(s.units)]
	now := s.micros()
	same := u.Job == h.Job && u.Frag == h.Frag && u.State != UnitEmpty
	dup := u.Seen&h.Bitmap != 0
	vals := f[offVals : offVals+4*s.values]
	setFlags := func(add uint8) { f[offFlags] |= add; binary.BigEndian.PutUint16(f[offUDP+6:], 0) }
	setContents := func(bitmap uint64, count uint16) {
		binary.BigEndian.PutUint16(f[offGRID+6:], count)
		binary.BigEndian.PutUint64(f[offGRID+12:], bitmap)
	}
	resend := h.Flags&FlagResend != 0
	switch {
	case resend && !(same && u.State == UnitActive):
		s.count(h.Job, EvPassed)
		setFlags(FlagAggregated)
		return routeLPM, f
	case resend && dup:
		// Flush what the unit holds; the resent values are already in it.
		for i := range u.Values {
			binary.BigEndian.PutUint32(vals[4*i:], u.Values[i])
		}
		setContents(u.Summed, u.NSum)
		setFlags(FlagAggregated)
		u.State = UnitDone
		s.count(h.Job, EvEmitted)
		return routeLPM, f
	case !resend && same && dup:
		s.count(h.Job, EvDuplicate)
		return routeDrop, f
	case !resend && same && u.State == UnitDone:
		u.Seen |= h.Bitmap
		s.count(h.Job, EvPassed)
		setFlags(FlagAggregated)
		return routeLPM, f
	case !resend && !same && u.State == UnitActive && (a.ReclaimMicros == 0 || (now-u.Time)&timeMask < a.ReclaimMicros):
		s.count(h.Job, EvCollision)
		return routeLPM, s.control(f)
	case !resend && !same && u.State == UnitActive:
		s.count(h.Job, EvReclaimed)
	}
	// Accumulate: into the unit's sum when it holds this fragment, else into
	// a fresh (empty, or done with another fragment) unit.
	fresh := !(same && u.State == UnitActive)
	var base Unit
	if !fresh {
		base = *u
	}
	sums := make([]uint32, s.values)
	var ovf uint32
	for i := range sums {
		var old uint32
		if !fresh {
			old = u.Values[i]
		}
		v := binary.BigEndian.Uint32(vals[4*i:])
		sums[i] = old + v
		ovf |= (old ^ sums[i]) & (v ^ sums[i])
	}
	newCount := base.Count + h.Count
	newSeen := base.Seen | h.Bitmap
	u.Job, u.Frag = h.Job, h.Frag
	u.Time = now
	switch {
	case ovf>>31 != 0:
		// The packet carries the old partial sum to the PS; the unit restarts
		// its sum with this contribution and keeps counting towards the fan-in.
		for i := range sums {
			old := u.Values[i]
			u.Values[i] = binary.BigEndian.Uint32(vals[4*i:])
			binary.BigEndian.PutUint32(vals[4*i:], old)
		}
		setContents(base.Summed, base.NSum)
		u.Summed, u.NSum = h.Bitmap, h.Count
		u.Seen, u.Count = newSeen, newCount
		u.State = UnitActive
		if newCount >= fanin {
			u.State = UnitDone
		}
		setFlags(FlagAggregated | FlagOverflow)
		s.count(h.Job, EvOverflow)
		s.count(h.Job, EvEmitted)
		return routeLPM, f
	case newCount >= fanin || resend:
		for i, v := range sums {
			binary.BigEndian.PutUint32(vals[4*i:], v)
		}
		setContents(base.Summed|h.Bitmap, base.NSum+h.Count)
		u.Seen, u.Count = newSeen, newCount
		u.State = UnitDone
		setFlags(FlagAggregated)
		s.count(h.Job, EvEmitted)
		return routeLPM, f
	default:
		copy(u.Values, sums)
		u.Seen, u.Count = newSeen, newCount
		u.Summed, u.NSum = base.Summed|h.Bitmap, base.NSum+h.Count
		u.State = UnitActive
		s.count(h.Job, EvAbsorbed)
		return routeDrop, f
	}
}

// control turns a fragment into the control packet back to its worker:
// addresses and ports swapped, ECN CE, FlagCongestion, values stripped.
func (s *Switch) control(f []byte) []byte {
	ip := f[offIP:]
	var a [4]byte
	copy(a[:], ip[12:16])
	copy(ip[12:16], ip[16:20])
	copy(ip[16:20], a[:])
	ip[1] = ip[1]&^3 | ECNCongestion
	binary.BigEndian.PutUint16(ip[2:], IPv4Len+UDPLen+HeaderLen)
	udp := f[offUDP:]
	sp, dp := binary.BigEndian.Uint16(udp[0:]), binary.BigEndian.Uint16(udp[2:])
	binary.BigEndian.PutUint16(udp[0:], dp)
	binary.BigEndian.PutUint16(udp[2:], sp)
	binary.BigEndian.PutUint16(udp[4:], UDPLen+HeaderLen)
	binary.BigEndian.PutUint16(udp[6:], 0)
	f[offFlags] |= FlagCongestion
	// The deparser drops the values header; bytes after it stay as payload.
	rest := f[offVals+4*s.values:]
	n := copy(f[offVals:], rest)
	return f[:offVals+n]
}

// CollidingFragment returns the smallest fragment id above frag of job
// otherJob that maps to the same memory unit as (job, frag): tests use it to
// provoke collisions.
func CollidingFragment(job uint16, frag uint32, otherJob uint16, units int) uint32 {
	want := UnitIndex(job, frag, units)
	for f := frag + 1; ; f++ {
		if UnitIndex(otherJob, f, units) == want {
			return f
		}
	}
}
