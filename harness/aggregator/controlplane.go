package aggregator

import (
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strings"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/gradproto"
)

// Names of the program's control-plane objects, as the bmv2 JSON and the
// P4Info spell them.
const (
	TableIPv4LPM    = "GridIngress.ipv4_lpm"
	TableGradRoute  = "GridIngress.grad_route"
	TableAggConfig  = "GridIngress.agg_config"
	TableJobMcast   = "GridIngress.job_mcast"
	TableResultHost = "GridEgress.result_host"
	TablePortMAC    = "GridEgress.port_mac"

	ActionForward   = "GridIngress.forward"
	ActionAggregate = "GridIngress.aggregate"
	// ActionAggregateAlias aggregates under a switch's further node id of
	// a job, in units shifted by its offset (gradproto.Aggregation).
	ActionAggregateAlias = "GridIngress.aggregate_alias"
	ActionMulticast      = "GridIngress.multicast"
	ActionToHost         = "GridEgress.to_host"
	ActionSetSrcMAC      = "GridEgress.set_src_mac"

	MeterCapacity  = "GridIngress.capacity"
	CounterJobStat = "GridIngress.job_stats"
	CounterPortRx  = "GridIngress.port_rx"
	CounterPortTx  = "GridEgress.port_tx"
	// CounterGradRoute is the direct counter of grad_route (per (job,
	// node, worker) entry: fragments in transit).
	CounterGradRoute = "GridIngress.grad_route_counter"
	RegisterUnitTag  = "GridIngress.unit_tag"
)

// StatIndex is the job_stats cell of a job's event.
func StatIndex(job uint16, ev gradproto.Event) int {
	return int(job%gradproto.StatsJobs)*gradproto.StatsStride + int(ev)
}

// Field is a key or parameter value with its width in bits.
type Field struct {
	Name  string
	Value uint64
	Bits  int
	// PrefixLen is the LPM prefix length of a key; -1 for exact keys and
	// action parameters.
	PrefixLen int
}

// bytes is the value big-endian in the field's width.
func (f Field) bytes() []byte {
	n := (f.Bits + 7) / 8
	b := make([]byte, n)
	v := f.Value
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}

func (f Field) hex() string {
	return fmt.Sprintf("0x%0*x", (f.Bits+3)/4, f.Value)
}

// TableEntry is one entry of one of the program's tables.
type TableEntry struct {
	Table  string
	Keys   []Field
	Action string
	Params []Field
}

// MulticastGroup is one packet-replication-engine group: a copy per port,
// each with replication id Rid.
type MulticastGroup struct {
	Group uint16
	Rid   uint16
	Ports []uint16
}

// Setup is everything the controller writes into one switch.
type Setup struct {
	Entries []TableEntry
	Groups  []MulticastGroup
	// Capacity configures meter capacity (index 0); nil leaves it
	// unconfigured, which v1model reads as always green.
	Capacity *gradproto.Capacity
}

// ipv4 is an IPv4 address as a number.
func ipv4(a netip.Addr) uint64 {
	b := a.As4()
	return uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
}

func exact(name string, v uint64, bits int) Field {
	return Field{Name: name, Value: v, Bits: bits, PrefixLen: -1}
}

// Entries turns a switch's part of a plan into table entries, multicast
// groups and the capacity meter.
func Entries(cfg gradproto.SwitchConfig) (*Setup, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Setup{Capacity: cfg.Capacity}
	for _, p := range cfg.Ports {
		s.Entries = append(s.Entries, TableEntry{Table: TablePortMAC,
			Keys: []Field{exact("standard_metadata.egress_port", uint64(p.Port), 9)}, Action: ActionSetSrcMAC,
			Params: []Field{exact("mac", p.MAC.Uint64(), 48)}})
	}
	for _, r := range cfg.Routes {
		s.Entries = append(s.Entries, TableEntry{Table: TableIPv4LPM,
			Keys:   []Field{{Name: "hdr.ipv4.dstAddr", Value: ipv4(r.Prefix.Masked().Addr()), Bits: 32, PrefixLen: r.Prefix.Bits()}},
			Action: ActionForward, Params: []Field{exact("dmac", r.NextHop.Uint64(), 48), exact("port", uint64(r.Port), 9)}})
	}
	for _, a := range cfg.Aggregations {
		e := TableEntry{Table: TableAggConfig,
			Keys:   []Field{exact("hdr.grid.job", uint64(a.Job), 16), exact("hdr.grid.node", uint64(a.Node), 16)},
			Action: ActionAggregate, Params: []Field{exact("fanin", uint64(a.FanIn), 16), exact("reclaim", a.ReclaimMicros, 48)}}
		if a.UnitOffset != 0 {
			e.Action, e.Params = ActionAggregateAlias, append(e.Params, exact("unit_offset", uint64(a.UnitOffset), 32))
		}
		s.Entries = append(s.Entries, e)
	}
	for _, g := range cfg.GradRoutes {
		s.Entries = append(s.Entries, TableEntry{Table: TableGradRoute,
			Keys:   []Field{exact("hdr.grid.job", uint64(g.Job), 16), exact("hdr.grid.node", uint64(g.Node), 16), exact("hdr.ipv4.srcAddr", ipv4(g.Src), 32)},
			Action: ActionForward, Params: []Field{exact("dmac", g.NextHop.Uint64(), 48), exact("port", uint64(g.Port), 9)}})
	}
	for _, g := range cfg.ResultGroups {
		s.Entries = append(s.Entries, TableEntry{Table: TableJobMcast,
			Keys:   []Field{exact("hdr.grid.job", uint64(g.Job), 16), exact("standard_metadata.ingress_port", uint64(g.InPort), 9)},
			Action: ActionMulticast, Params: []Field{exact("group", uint64(g.Group), 16)}})
		s.Groups = append(s.Groups, MulticastGroup{Group: g.Group, Rid: 1, Ports: g.Ports})
	}
	for _, h := range cfg.ResultHosts {
		s.Entries = append(s.Entries, TableEntry{Table: TableResultHost,
			Keys:   []Field{exact("hdr.grid.job", uint64(h.Job), 16), exact("standard_metadata.egress_port", uint64(h.Port), 9)},
			Action: ActionToHost, Params: []Field{exact("dmac", h.MAC.Uint64(), 48), exact("ip", ipv4(h.IP), 32)}})
	}
	return s, nil
}

// meterConfig is the engine's meter configuration of a capacity: both rates
// of the two-rate meter at the capacity, so excess is red.
func meterConfig(c *gradproto.Capacity) engine.MeterConfig {
	r := uint64(math.Ceil(c.PacketsPerSecond))
	return engine.MeterConfig{CIR: r, CBurst: uint64(c.Burst), PIR: r, PBurst: uint64(c.Burst)}
}

// Install writes the setup into an engine switch running the aggregator.
func (s *Setup) Install(sw *engine.Switch) error {
	for i, e := range s.Entries {
		en := engine.Entry{Action: e.Action}
		for _, k := range e.Keys {
			if k.PrefixLen >= 0 {
				en.Match = append(en.Match, engine.LPM(k.bytes(), k.PrefixLen))
			} else {
				en.Match = append(en.Match, engine.Exact(k.bytes()))
			}
		}
		for _, p := range e.Params {
			en.Args = append(en.Args, p.bytes())
		}
		if _, err := sw.AddEntry(e.Table, en); err != nil {
			return fmt.Errorf("entry %d (%s): %w", i, e.STF(), err)
		}
	}
	for _, g := range s.Groups {
		var reps []engine.Replica
		for _, p := range g.Ports {
			reps = append(reps, engine.Replica{Port: uint32(p), Rid: g.Rid})
		}
		if err := sw.SetMulticastGroup(g.Group, reps); err != nil {
			return fmt.Errorf("multicast group %d: %w", g.Group, err)
		}
	}
	if s.Capacity != nil {
		if err := sw.SetMeter(MeterCapacity, 0, meterConfig(s.Capacity)); err != nil {
			return fmt.Errorf("capacity meter: %w", err)
		}
	}
	return nil
}

// STF renders the entry as an STF "add" command.
func (e TableEntry) STF() string {
	parts := []string{"add", e.Table}
	for _, k := range e.Keys {
		name := k.Name
		if k.PrefixLen >= 0 {
			parts = append(parts, fmt.Sprintf("%s:%s/%d", name, k.hex(), k.PrefixLen))
		} else {
			parts = append(parts, name+":"+k.hex())
		}
	}
	params := make([]string, len(e.Params))
	for i, p := range e.Params {
		params[i] = p.Name + ":" + p.hex()
	}
	return strings.Join(parts, " ") + " " + e.Action + "(" + strings.Join(params, ", ") + ")"
}

// STF renders the setup as STF commands, one per line.
func (s *Setup) STF() []string {
	var out []string
	for _, e := range s.Entries {
		out = append(out, e.STF())
	}
	groups := append([]MulticastGroup(nil), s.Groups...)
	sort.Slice(groups, func(i, j int) bool { return groups[i].Group < groups[j].Group })
	for node, g := range groups {
		out = append(out, fmt.Sprintf("mc_mgrp_create %d", g.Group))
		line := fmt.Sprintf("mc_node_create %d", g.Rid)
		for _, p := range g.Ports {
			line += fmt.Sprintf(" %d", p)
		}
		out = append(out, line, fmt.Sprintf("mc_node_associate %d %d", g.Group, node))
	}
	if s.Capacity != nil {
		c := meterConfig(s.Capacity)
		// simple_switch_CLI takes rates in units per microsecond.
		rate := fmt.Sprintf("%g:%d", float64(c.CIR)/1e6, c.CBurst)
		out = append(out, fmt.Sprintf("meter_set_rates %s 0 %s %s", MeterCapacity, rate, rate))
	}
	return out
}

// unitRegisters hold the units' bookkeeping; the value lanes need no reset
// because a fresh unit ignores what they hold.
var unitRegisters = []string{RegisterUnitTag, "GridIngress.unit_seen", "GridIngress.unit_count", "GridIngress.unit_summed", "GridIngress.unit_nsum"}

// ResetUnits empties every memory unit, e.g. between jobs, to reclaim units
// that late originals occupied (see p4/README.md, "Stale units and reclaim").
func ResetUnits(sw *engine.Switch) error {
	for _, r := range unitRegisters {
		if err := sw.ResetRegister(r); err != nil {
			return fmt.Errorf("reset %s: %w", r, err)
		}
	}
	return nil
}
