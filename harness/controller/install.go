package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/p4rt/client"
)

// Install writes every switch's part of the deployment (aggregator.Entries
// of its configuration) into the switch, all switches in parallel. A
// switch the deployment does not know, or a deployment switch the run
// lacks, is an error: the plan is for another topology.
func (c *Controller) Install(ctx context.Context, d *aggregator.Deployment) error {
	for _, sd := range d.Switches {
		if c.Switch(sd.Name) == nil {
			return fmt.Errorf("deployment names switch %s, which run %s does not have", sd.Name, c.run)
		}
	}
	began := time.Now()
	installed := newProgress("plans installed", len(c.switches))
	defer installed.stop()
	err := c.each(func(s *Switch) error {
		defer installed.done()
		sd, ok := d.Switch(s.Name)
		if !ok {
			return fmt.Errorf("switch %s: the deployment has no configuration for it", s.Name)
		}
		setup, err := aggregator.Entries(sd.Config)
		if err != nil {
			return fmt.Errorf("switch %s: %w", s.Name, err)
		}
		if s.client == nil {
			return fmt.Errorf("switch %s: not connected", s.Name)
		}
		if err := s.asPrimary(ctx, func(cl *client.Client) error { return InstallSetup(ctx, cl, setup) }); err != nil {
			return s.failure("install the plan", err)
		}
		slog.Debug("plan installed", "switch", s.Name, "entries", len(setup.Entries), "groups", len(setup.Groups), "meter", setup.Capacity != nil)
		return nil
	})
	if err != nil {
		return err
	}
	slog.Info("plan installed", "run", c.run, "switches", len(c.switches), "took", time.Since(began).Round(time.Millisecond))
	return nil
}

// InstallSetup writes a switch's aggregator setup over P4Runtime: the table
// entries in one batch, then the multicast groups and the capacity meter.
// It is what aggregator.Setup.Install does on an in-process engine.
func InstallSetup(ctx context.Context, cl *client.Client, s *aggregator.Setup) error {
	updates := make([]*p4v1.Update, 0, len(s.Entries))
	for i, e := range s.Entries {
		u, err := cl.EntryUpdate(p4v1.Update_INSERT, tableEntry(e))
		if err != nil {
			return fmt.Errorf("entry %d (%s): %w", i, e.STF(), err)
		}
		updates = append(updates, u)
	}
	if len(updates) > 0 {
		if err := cl.Write(ctx, updates...); err != nil {
			return fmt.Errorf("table entries: %w", err)
		}
	}
	for _, g := range s.Groups {
		replicas := make([]client.Replica, len(g.Ports))
		for i, p := range g.Ports {
			replicas[i] = client.Replica{Port: uint32(p), Instance: uint32(g.Rid)}
		}
		if err := cl.InsertMulticastGroup(ctx, uint32(g.Group), replicas); err != nil {
			return fmt.Errorf("multicast group %d: %w", g.Group, err)
		}
	}
	if s.Capacity != nil {
		if err := cl.WriteMeter(ctx, aggregator.MeterCapacity, 0, capacityMeter(s.Capacity)); err != nil {
			return fmt.Errorf("capacity meter: %w", err)
		}
	}
	return nil
}

// tableEntry is an aggregator entry by P4Info names.
func tableEntry(e aggregator.TableEntry) client.TableEntry {
	te := client.TableEntry{Table: e.Table, Action: e.Action}
	for _, k := range e.Keys {
		m := client.Match{Field: k.Name, Value: fieldBytes(k)}
		if k.PrefixLen >= 0 {
			m.PrefixLen = k.PrefixLen
		}
		te.Match = append(te.Match, m)
	}
	for _, p := range e.Params {
		te.Args = append(te.Args, fieldBytes(p))
	}
	return te
}

// fieldBytes is a field's value big-endian in its width.
func fieldBytes(f aggregator.Field) []byte {
	b := make([]byte, (f.Bits+7)/8)
	v := f.Value
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}

// capacityMeter sets both rates of the two-rate meter to the capacity, so
// fragments beyond it are red (as aggregator.Setup.Install does).
func capacityMeter(c *gradproto.Capacity) client.MeterConfig {
	r := uint64(math.Ceil(c.PacketsPerSecond))
	return client.MeterConfig{CIR: r, CBurst: uint64(c.Burst), PIR: r, PBurst: uint64(c.Burst)}
}

// PortCounter is what one switch port received and sent (the program's
// port_rx and port_tx counters).
type PortCounter struct {
	Port   int
	Rx, Tx client.CounterData
}

// JobStats counts a job's aggregation events at one switch (job_stats),
// indexed by gradproto.Event.
type JobStats [gradproto.NumEvents]uint64

// Counters is one switch's counters.
type Counters struct {
	Switch string
	Ports  []PortCounter       // every port of the switch, in the fabric's order
	Jobs   map[uint16]JobStats // the jobs asked for
}

// ReadCounters reads every switch's per-port counters and the per-job
// event counters of jobs, in topology order.
func (c *Controller) ReadCounters(ctx context.Context, jobs []uint16) ([]Counters, error) {
	out := make([]Counters, len(c.switches))
	idx := map[*Switch]int{}
	for i, s := range c.switches {
		idx[s] = i
	}
	err := c.each(func(s *Switch) error {
		cs, err := s.ReadCounters(ctx, jobs)
		out[idx[s]] = cs
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadCounters reads the switch's per-port counters and the event counters
// of jobs.
func (s *Switch) ReadCounters(ctx context.Context, jobs []uint16) (Counters, error) {
	cs := Counters{Switch: s.Name, Jobs: map[uint16]JobStats{}}
	if s.client == nil {
		return cs, fmt.Errorf("switch %s: not connected", s.Name)
	}
	rx, err := s.client.ReadCounters(ctx, aggregator.CounterPortRx)
	if err != nil {
		return cs, s.failure("read port counters", err)
	}
	tx, err := s.client.ReadCounters(ctx, aggregator.CounterPortTx)
	if err != nil {
		return cs, s.failure("read port counters", err)
	}
	for _, p := range s.Ports {
		if p >= len(rx) || p >= len(tx) {
			return cs, fmt.Errorf("switch %s: port %d beyond the %d cells of %s", s.Name, p, min(len(rx), len(tx)), aggregator.CounterPortRx)
		}
		cs.Ports = append(cs.Ports, PortCounter{Port: p, Rx: rx[p], Tx: tx[p]})
	}
	for _, job := range jobs {
		var st JobStats
		var errs []error
		for ev := range gradproto.NumEvents {
			d, err := s.client.ReadCounter(ctx, aggregator.CounterJobStat, int64(aggregator.StatIndex(job, ev)))
			errs = append(errs, err)
			st[ev] = d.Packets
		}
		if err := errors.Join(errs...); err != nil {
			return cs, s.failure(fmt.Sprintf("read the counters of job %d", job), err)
		}
		cs.Jobs[job] = st
	}
	return cs, nil
}
