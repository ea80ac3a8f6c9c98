package p4test

import (
	"context"
	"fmt"
	"math/big"
	"net"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/grpc"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/p4rt/client"
)

// bmv2RefusedJSON is what bmv2 prints before the JSON node it refuses;
// bmv2RefusalWait how long its output may trail the answer to the load.
const (
	bmv2RefusedJSON = "bad json:"
	bmv2RefusalWait = 30 * time.Millisecond
)

// controlTimeout bounds one control-plane operation.
const controlTimeout = 30 * time.Second

// controlPlane is the remote target's P4Runtime controller and the state
// STF needs beyond the switch: entry handles, which multicast groups and
// clone sessions exist, the replicas of each group (mirroring_add_mc
// copies them into a clone session).
type controlPlane struct {
	c       *client.Client
	info    *p4configv1.P4Info
	entries map[engine.EntryHandle]client.TableEntry
	next    engine.EntryHandle
	groups  map[uint16][]engine.Replica
	clones  map[uint32]bool
}

// dialControlPlane connects to the switch's P4Runtime server from inside
// its namespace, becomes primary and loads the program.
func dialControlPlane(ctx context.Context, r *Remote, prog Program) (*controlPlane, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.StartTimeout)
	defer cancel()
	dialer := grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return r.tb.dial(ctx, addr) })
	c, err := client.Dial(ctx, grpcAddr, deviceID, 1, dialer)
	if err != nil {
		return nil, err
	}
	if err := c.SetPipeline(ctx, prog.P4Info, prog.JSON); err != nil {
		c.Close()
		return nil, fmt.Errorf("load the program: %w", err)
	}
	if r.cfg.Kind == Bmv2 && r.proc.outputShows(bmv2RefusedJSON, bmv2RefusalWait) {
		// simple_switch_grpc answers OK and runs on without the program.
		c.Close()
		return nil, fmt.Errorf("load the program: simple_switch_grpc accepted it over P4Runtime, but bmv2 refused its JSON and runs without it%s", r.proc.output.quote())
	}
	return &controlPlane{c: c, info: prog.P4Info, entries: map[engine.EntryHandle]client.TableEntry{},
		groups: map[uint16][]engine.Replica{}, clones: map[uint32]bool{}}, nil
}

func (cp *controlPlane) close() error { return cp.c.Close() }

// call is the context of one control-plane operation: bounded by
// controlTimeout and by the context the target was started with.
func (r *Remote) call() (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.ctx, controlTimeout)
}

// needsPriority reports whether a table's entries carry a P4Runtime
// priority: those with a ternary, range or optional field.
func (cp *controlPlane) needsPriority(table string) bool {
	for _, t := range cp.info.GetTables() {
		if t.GetPreamble().GetName() != table {
			continue
		}
		for _, f := range t.GetMatchFields() {
			switch f.GetMatchType() {
			case p4configv1.MatchField_TERNARY, p4configv1.MatchField_RANGE, p4configv1.MatchField_OPTIONAL:
				return true
			}
		}
	}
	return false
}

// AddEntry inserts a table entry over P4Runtime. The engine's priority
// (smallest wins, -P for STF priority P) becomes P4Runtime's (largest
// wins, at least 1): 1 - priority.
func (r *Remote) AddEntry(table string, e engine.Entry) (engine.EntryHandle, error) {
	te := client.TableEntry{Table: table, Action: e.Action, Args: e.Args}
	if r.cp.needsPriority(table) {
		te.Priority = 1 - e.Priority
	}
	for _, m := range e.Match {
		te.Match = append(te.Match, client.Match{Value: m.Value, Mask: m.Mask, PrefixLen: m.PrefixLen, High: m.High, Wildcard: m.Wildcard})
	}
	ctx, cancel := r.call()
	defer cancel()
	if err := r.cp.c.InsertEntry(ctx, te); err != nil {
		return 0, r.withExit(err)
	}
	r.cp.next++
	r.cp.entries[r.cp.next] = te
	return r.cp.next, nil
}

// SetDefaultAction sets a table's default action.
func (r *Remote) SetDefaultAction(table, action string, args [][]byte) error {
	ctx, cancel := r.call()
	defer cancel()
	return r.withExit(r.cp.c.SetDefaultAction(ctx, table, action, args))
}

// ClearTable deletes every entry of a table.
func (r *Remote) ClearTable(table string) error {
	ctx, cancel := r.call()
	defer cancel()
	if err := r.cp.c.DeleteAllEntries(ctx, table); err != nil {
		return r.withExit(err)
	}
	for h, te := range r.cp.entries {
		if te.Table == table {
			delete(r.cp.entries, h)
		}
	}
	return nil
}

func clientReplicas(rs []engine.Replica) []client.Replica {
	out := make([]client.Replica, len(rs))
	for i, rep := range rs {
		out[i] = client.Replica{Port: rep.Port, Instance: uint32(rep.Rid)}
	}
	return out
}

// SetMulticastGroup inserts the group the first time, then modifies it.
func (r *Remote) SetMulticastGroup(group uint16, replicas []engine.Replica) error {
	ctx, cancel := r.call()
	defer cancel()
	var err error
	if _, exists := r.cp.groups[group]; exists {
		err = r.cp.c.ModifyMulticastGroup(ctx, uint32(group), clientReplicas(replicas))
	} else {
		err = r.cp.c.InsertMulticastGroup(ctx, uint32(group), clientReplicas(replicas))
	}
	if err != nil {
		return r.withExit(err)
	}
	r.cp.groups[group] = append([]engine.Replica(nil), replicas...)
	return nil
}

// SetCloneSession writes a clone session: to a port, one replica (instance
// 0); to a multicast group, the group's replicas as they are now.
func (r *Remote) SetCloneSession(session uint32, cs engine.CloneSession) error {
	out := client.CloneSession{ID: session, TruncateLength: int32(cs.Truncate)}
	if cs.Group != 0 {
		reps, ok := r.cp.groups[cs.Group]
		if !ok {
			return fmt.Errorf("clone session %d: multicast group %d does not exist", session, cs.Group)
		}
		out.Replicas = clientReplicas(reps)
	} else {
		out.Replicas = []client.Replica{{Port: cs.Port}}
	}
	ctx, cancel := r.call()
	defer cancel()
	var err error
	if r.cp.clones[session] {
		err = r.cp.c.ModifyCloneSession(ctx, out)
	} else {
		err = r.cp.c.InsertCloneSession(ctx, out)
	}
	if err != nil {
		return r.withExit(err)
	}
	r.cp.clones[session] = true
	return nil
}

// DeleteCloneSession removes a clone session.
func (r *Remote) DeleteCloneSession(session uint32) error {
	ctx, cancel := r.call()
	defer cancel()
	if err := r.cp.c.DeleteCloneSession(ctx, session); err != nil {
		return r.withExit(err)
	}
	delete(r.cp.clones, session)
	return nil
}

// ReadCounter reads one cell of an indexed counter.
func (r *Remote) ReadCounter(counter string, index int) (engine.CounterValue, error) {
	ctx, cancel := r.call()
	defer cancel()
	d, err := r.cp.c.ReadCounter(ctx, counter, int64(index))
	if err != nil {
		return engine.CounterValue{}, r.withExit(err)
	}
	return engine.CounterValue{Packets: d.Packets, Bytes: d.Bytes}, nil
}

// WriteCounter sets one cell of an indexed counter.
func (r *Remote) WriteCounter(counter string, index int, v engine.CounterValue) error {
	ctx, cancel := r.call()
	defer cancel()
	return r.withExit(r.cp.c.WriteCounter(ctx, counter, int64(index), client.CounterData{Packets: v.Packets, Bytes: v.Bytes}))
}

// ReadDirectCounter reads the direct counter of the entry AddEntry
// returned h for.
func (r *Remote) ReadDirectCounter(table string, h engine.EntryHandle) (engine.CounterValue, error) {
	te, ok := r.cp.entries[h]
	if !ok || te.Table != table {
		return engine.CounterValue{}, fmt.Errorf("table %s has no entry with handle %d", table, h)
	}
	ctx, cancel := r.call()
	defer cancel()
	d, err := r.cp.c.ReadDirectCounter(ctx, te)
	if err != nil {
		return engine.CounterValue{}, r.withExit(err)
	}
	return engine.CounterValue{Packets: d.Packets, Bytes: d.Bytes}, nil
}

// ReadRegister reads one register cell: over P4Runtime, or on bmv2 with
// simple_switch_CLI (simple_switch_grpc does not implement register
// entries, p4lang/PI issue 376).
func (r *Remote) ReadRegister(register string, index int) ([]byte, error) {
	ctx, cancel := r.call()
	defer cancel()
	if r.cfg.Kind == Bmv2 {
		v, err := cliRegisterRead(ctx, r.tb, r.cfg.CLI, thriftPort, register, index)
		if err != nil {
			return nil, r.withExit(err)
		}
		return v.Bytes(), nil
	}
	v, err := r.cp.c.ReadRegister(ctx, register, int64(index))
	return v, r.withExit(err)
}

// WriteRegister sets one register cell (on bmv2 with simple_switch_CLI).
func (r *Remote) WriteRegister(register string, index int, value []byte) error {
	ctx, cancel := r.call()
	defer cancel()
	if r.cfg.Kind == Bmv2 {
		return r.withExit(cliRun(ctx, r.tb, r.cfg.CLI, thriftPort,
			fmt.Sprintf("register_write %s %d %s", register, index, new(big.Int).SetBytes(value))))
	}
	return r.withExit(r.cp.c.WriteRegister(ctx, register, int64(index), value))
}

// ResetRegister zeroes every cell of a register (on bmv2 with
// simple_switch_CLI).
func (r *Remote) ResetRegister(register string) error {
	ctx, cancel := r.call()
	defer cancel()
	if r.cfg.Kind == Bmv2 {
		return r.withExit(cliRun(ctx, r.tb, r.cfg.CLI, thriftPort, "register_reset "+register))
	}
	return r.withExit(r.cp.c.ResetRegister(ctx, register))
}

// SetMeter configures one cell of an indexed meter.
func (r *Remote) SetMeter(meter string, index int, cfg engine.MeterConfig) error {
	ctx, cancel := r.call()
	defer cancel()
	return r.withExit(r.cp.c.WriteMeter(ctx, meter, int64(index), client.MeterConfig{CIR: cfg.CIR, CBurst: cfg.CBurst, PIR: cfg.PIR, PBurst: cfg.PBurst}))
}

// ReadMeter reads one meter cell's configuration.
func (r *Remote) ReadMeter(meter string, index int) (engine.MeterConfig, bool, error) {
	ctx, cancel := r.call()
	defer cancel()
	m, configured, err := r.cp.c.ReadMeter(ctx, meter, int64(index))
	if err != nil {
		return engine.MeterConfig{}, false, r.withExit(err)
	}
	return engine.MeterConfig{CIR: m.CIR, CBurst: m.CBurst, PIR: m.PIR, PBurst: m.PBurst}, configured, nil
}
