package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"net/netip"
	"strconv"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/p4rt/client"
)

// Session runs simple_switch_CLI's commands over P4Runtime, with the
// switch's P4Info for names and match kinds. It keeps bmv2's entry handles
// (per table, from 0, in the order entries are added) and multicast node
// handles for the session's lifetime.
//
// Commands: table_add, table_set_default, table_delete, table_modify,
// table_clear, mirroring_add, mc_mgrp_create, mc_mgrp_destroy,
// mc_node_create, mc_node_associate, mc_node_dissociate, counter_read,
// counter_reset, register_read, register_write, register_reset,
// meter_set_rates, meter_array_set_rates, set_queue_rate,
// set_queue_depth. Values are numbers (decimal or
// 0x hex), IPv4, IPv6 or MAC addresses; lpm keys are VALUE/LENGTH, ternary
// keys VALUE&&&MASK, range keys LOW->HIGH. As in bmv2, a table with
// ternary or range keys takes a priority after the action's parameters,
// lower numbers first. set_queue_rate and set_queue_depth go to grid
// switch's queue service (dataplane.QueueService), which
// simple_switch_grpc does not have.
type Session struct {
	c    *client.Client
	info *p4configv1.P4Info
	out  io.Writer

	entries map[string]map[int]client.TableEntry // by table name, by handle
	next    map[string]int
	groups  map[uint32][]int // multicast group -> node handles
	nodes   []mcNode
}

type mcNode struct {
	rid   uint32
	ports []uint32
	gone  bool
}

// NewSession starts a session on a connected client, fetching the
// switch's P4Info unless the client has one.
func NewSession(ctx context.Context, c *client.Client, out io.Writer) (*Session, error) {
	info := c.P4Info()
	if info == nil {
		var err error
		if info, err = c.FetchPipeline(ctx); err != nil {
			return nil, fmt.Errorf("the switch's program: %w", err)
		}
		if info == nil || len(info.Tables)+len(info.Actions) == 0 {
			return nil, errors.New("the switch has no P4Runtime pipeline yet (set one with a controller or a runtime_json)")
		}
	}
	return &Session{c: c, info: info, out: out, entries: map[string]map[int]client.TableEntry{},
		next: map[string]int{}, groups: map[uint32][]int{}}, nil
}

// Run executes the commands read from r, one a line ('#' starts a comment),
// printing what simple_switch_CLI prints. A failing command is reported
// and the others still run, as there; the error returned names every
// failing line of name.
func (s *Session) Run(ctx context.Context, r io.Reader, name string) error {
	sc := bufio.NewScanner(r)
	var errs []error
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		if strings.TrimSpace(text) == "" {
			continue
		}
		if err := s.Exec(ctx, text); err != nil {
			fmt.Fprintf(s.out, "Error: %v\n", err)
			errs = append(errs, fmt.Errorf("%s:%d: %w", name, line, err))
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Exec runs one command line.
func (s *Session) Exec(ctx context.Context, line string) error {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	cmd, args := f[0], f[1:]
	switch cmd {
	case "table_add":
		return s.tableAdd(ctx, args)
	case "table_set_default":
		return s.tableSetDefault(ctx, args)
	case "table_delete":
		return s.tableDelete(ctx, args)
	case "table_modify":
		return s.tableModify(ctx, args)
	case "table_clear":
		if len(args) != 1 {
			return errors.New("table_clear TABLE")
		}
		t, err := s.table(args[0])
		if err != nil {
			return err
		}
		delete(s.entries, t.Preamble.Name)
		return s.c.DeleteAllEntries(ctx, t.Preamble.Name)
	case "mirroring_add":
		if len(args) != 2 {
			return errors.New("mirroring_add SESSION_ID EGRESS_PORT")
		}
		id, err1 := strconv.ParseUint(args[0], 0, 32)
		port, err2 := strconv.ParseUint(args[1], 0, 32)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("mirroring_add: %w", err)
		}
		return s.c.InsertCloneSession(ctx, client.CloneSession{ID: uint32(id), Replicas: []client.Replica{{Port: uint32(port)}}})
	case "mc_mgrp_create":
		g, err := s.uintArg(cmd, args, 0, 1)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.out, "Creating multicast group %d\n", g)
		if err := s.c.InsertMulticastGroup(ctx, uint32(g), nil); err != nil {
			return err
		}
		s.groups[uint32(g)] = nil
		return nil
	case "mc_mgrp_destroy":
		g, err := s.uintArg(cmd, args, 0, 1)
		if err != nil {
			return err
		}
		delete(s.groups, uint32(g))
		return s.c.DeleteMulticastGroup(ctx, uint32(g))
	case "mc_node_create":
		return s.mcNodeCreate(args)
	case "mc_node_associate", "mc_node_dissociate":
		return s.mcAssociate(ctx, cmd, args)
	case "counter_read":
		return s.counterRead(ctx, args)
	case "counter_reset":
		return s.counterReset(ctx, args)
	case "register_read":
		return s.registerRead(ctx, args)
	case "register_write":
		if len(args) != 3 {
			return errors.New("register_write REGISTER INDEX VALUE")
		}
		r, err := s.register(args[0])
		if err != nil {
			return err
		}
		idx, err := strconv.ParseInt(args[1], 0, 64)
		if err != nil {
			return fmt.Errorf("register_write: index %q: %w", args[1], err)
		}
		v, err := parseValue(args[2], registerWidth(r))
		if err != nil {
			return fmt.Errorf("register_write: %w", err)
		}
		return s.c.WriteRegister(ctx, r.Preamble.Name, idx, v)
	case "register_reset":
		if len(args) != 1 {
			return errors.New("register_reset REGISTER")
		}
		r, err := s.register(args[0])
		if err != nil {
			return err
		}
		return s.c.ResetRegister(ctx, r.Preamble.Name)
	case "meter_set_rates", "meter_array_set_rates":
		return s.meterSetRates(ctx, cmd, args)
	case "set_queue_rate", "set_queue_depth":
		return s.setQueue(ctx, cmd, args)
	}
	return fmt.Errorf("%s: not a command grid's runtime CLI knows (it has simple_switch_CLI's table_*, mirroring_add, mc_*, counter_*, register_*, meter_*set_rates and set_queue_*)", cmd)
}

func (s *Session) uintArg(cmd string, args []string, i, n int) (uint64, error) {
	if len(args) != n {
		return 0, fmt.Errorf("%s: want %d argument(s)", cmd, n)
	}
	v, err := strconv.ParseUint(args[i], 0, 32)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", cmd, args[i])
	}
	return v, nil
}

func (s *Session) table(name string) (*p4configv1.Table, error) {
	if t := findTable(s.info, name); t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("table %q is not in the switch's program", name)
}

// tableAction resolves a table and one of its actions.
func (s *Session) tableAction(table, action string) (*p4configv1.Table, *p4configv1.Action, error) {
	t, err := s.table(table)
	if err != nil {
		return nil, nil, err
	}
	a := findAction(s.info, action)
	if a == nil {
		return nil, nil, fmt.Errorf("action %q is not in the switch's program", action)
	}
	for _, ref := range t.ActionRefs {
		if ref.Id == a.Preamble.Id {
			return t, a, nil
		}
	}
	return nil, nil, fmt.Errorf("action %s is not an action of table %s", a.Preamble.Name, t.Preamble.Name)
}

func (s *Session) params(a *p4configv1.Action, values []string) ([][]byte, error) {
	if len(values) != len(a.Params) {
		return nil, fmt.Errorf("action %s takes %d parameter(s), %d given", a.Preamble.Name, len(a.Params), len(values))
	}
	args := make([][]byte, len(values))
	for i, v := range values {
		b, err := parseValue(v, a.Params[i].Bitwidth)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", a.Params[i].Name, err)
		}
		args[i] = b
	}
	return args, nil
}

// needsPriority: tables with ternary, range or optional keys.
func needsPriority(t *p4configv1.Table) bool {
	for _, mf := range t.MatchFields {
		switch mf.GetMatchType() {
		case p4configv1.MatchField_TERNARY, p4configv1.MatchField_RANGE, p4configv1.MatchField_OPTIONAL:
			return true
		}
	}
	return false
}

// tableAdd: table_add TABLE ACTION KEY... => PARAM... [PRIORITY]
func (s *Session) tableAdd(ctx context.Context, args []string) error {
	if len(args) < 2 {
		return errors.New("table_add TABLE ACTION MATCH_KEY... => ACTION_PARAMS... [PRIORITY]")
	}
	t, a, err := s.tableAction(args[0], args[1])
	if err != nil {
		return err
	}
	rest := args[2:]
	arrow := len(rest)
	for i, x := range rest {
		if x == "=>" {
			arrow = i
			break
		}
	}
	keys, values := rest[:arrow], []string(nil)
	if arrow < len(rest) {
		values = rest[arrow+1:]
	}
	if len(keys) != len(t.MatchFields) {
		return fmt.Errorf("table %s has %d match field(s), %d given", t.Preamble.Name, len(t.MatchFields), len(keys))
	}
	e := client.TableEntry{Table: t.Preamble.Name, Action: a.Preamble.Name}
	if needsPriority(t) {
		if len(values) != len(a.Params)+1 {
			return fmt.Errorf("table %s has ternary or range keys: give a priority after the action's %d parameter(s)", t.Preamble.Name, len(a.Params))
		}
		prio, err := strconv.ParseInt(values[len(values)-1], 0, 32)
		if err != nil || prio < 0 {
			return fmt.Errorf("priority %q: want a number (lower first, as in bmv2)", values[len(values)-1])
		}
		// bmv2's CLI priority: smaller first; P4Runtime's: larger wins.
		e.Priority = int32(math.MaxInt32 - prio)
		values = values[:len(values)-1]
	}
	if e.Args, err = s.params(a, values); err != nil {
		return err
	}
	for i, k := range keys {
		m, err := parseKey(k, t.MatchFields[i])
		if err != nil {
			return fmt.Errorf("match key %s: %w", t.MatchFields[i].Name, err)
		}
		e.Match = append(e.Match, m)
	}
	if err := s.c.InsertEntry(ctx, e); err != nil {
		return err
	}
	name := t.Preamble.Name
	h := s.next[name]
	s.next[name]++
	if s.entries[name] == nil {
		s.entries[name] = map[int]client.TableEntry{}
	}
	s.entries[name][h] = e
	fmt.Fprintf(s.out, "Adding entry to table %s\nmatch key: %s\naction: %s\nruntime data: %s\nEntry has been added with handle %d\n",
		name, strings.Join(keys, " "), a.Preamble.Name, strings.Join(values, " "), h)
	return nil
}

func (s *Session) tableSetDefault(ctx context.Context, args []string) error {
	if len(args) < 2 {
		return errors.New("table_set_default TABLE ACTION ACTION_PARAMS...")
	}
	t, a, err := s.tableAction(args[0], args[1])
	if err != nil {
		return err
	}
	params, err := s.params(a, args[2:])
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Setting default action of %s\naction: %s\nruntime data: %s\n", t.Preamble.Name, a.Preamble.Name, strings.Join(args[2:], " "))
	return s.c.SetDefaultAction(ctx, t.Preamble.Name, a.Preamble.Name, params)
}

func (s *Session) handle(table, arg string) (client.TableEntry, int, error) {
	h, err := strconv.Atoi(arg)
	if err != nil {
		return client.TableEntry{}, 0, fmt.Errorf("handle %q is not a number", arg)
	}
	e, ok := s.entries[table][h]
	if !ok {
		return client.TableEntry{}, 0, fmt.Errorf("table %s has no entry with handle %d added in this session", table, h)
	}
	return e, h, nil
}

func (s *Session) tableDelete(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return errors.New("table_delete TABLE HANDLE")
	}
	t, err := s.table(args[0])
	if err != nil {
		return err
	}
	e, h, err := s.handle(t.Preamble.Name, args[1])
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Deleting entry %d from %s\n", h, t.Preamble.Name)
	if err := s.c.DeleteEntry(ctx, e); err != nil {
		return err
	}
	delete(s.entries[t.Preamble.Name], h)
	return nil
}

// tableModify: table_modify TABLE ACTION HANDLE PARAM...
func (s *Session) tableModify(ctx context.Context, args []string) error {
	if len(args) < 3 {
		return errors.New("table_modify TABLE ACTION HANDLE ACTION_PARAMS...")
	}
	t, a, err := s.tableAction(args[0], args[1])
	if err != nil {
		return err
	}
	e, h, err := s.handle(t.Preamble.Name, args[2])
	if err != nil {
		return err
	}
	if e.Args, err = s.params(a, args[3:]); err != nil {
		return err
	}
	e.Action = a.Preamble.Name
	if err := s.c.ModifyEntry(ctx, e); err != nil {
		return err
	}
	s.entries[t.Preamble.Name][h] = e
	fmt.Fprintf(s.out, "Modifying entry %d of %s\n", h, t.Preamble.Name)
	return nil
}

// mcNodeCreate: mc_node_create RID PORT...
func (s *Session) mcNodeCreate(args []string) error {
	if len(args) < 1 {
		return errors.New("mc_node_create RID PORTS...")
	}
	rid, err := strconv.ParseUint(args[0], 0, 32)
	if err != nil {
		return fmt.Errorf("mc_node_create: rid %q is not a number", args[0])
	}
	n := mcNode{rid: uint32(rid)}
	for _, p := range args[1:] {
		port, err := strconv.ParseUint(p, 0, 32)
		if err != nil {
			return fmt.Errorf("mc_node_create: port %q is not a number", p)
		}
		n.ports = append(n.ports, uint32(port))
	}
	s.nodes = append(s.nodes, n)
	fmt.Fprintf(s.out, "Creating node with rid %d , port map %s\nNode was created with handle %d\n", rid, strings.Join(args[1:], " "), len(s.nodes)-1)
	return nil
}

// mcAssociate: mc_node_associate GROUP HANDLE (or dissociate); the
// group's replicas become those of its nodes.
func (s *Session) mcAssociate(ctx context.Context, cmd string, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("%s GROUP NODE_HANDLE", cmd)
	}
	g, err1 := strconv.ParseUint(args[0], 0, 32)
	h, err2 := strconv.Atoi(args[1])
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if h < 0 || h >= len(s.nodes) || s.nodes[h].gone {
		return fmt.Errorf("%s: no node with handle %d", cmd, h)
	}
	group := uint32(g)
	handles, ok := s.groups[group]
	if !ok {
		return fmt.Errorf("%s: multicast group %d was not created in this session (mc_mgrp_create %d)", cmd, g, g)
	}
	if cmd == "mc_node_associate" {
		handles = append(handles, h)
		fmt.Fprintf(s.out, "Associating node %d to multicast group %d\n", h, g)
	} else {
		var kept []int
		for _, x := range handles {
			if x != h {
				kept = append(kept, x)
			}
		}
		handles = kept
		fmt.Fprintf(s.out, "Dissociating node %d from multicast group %d\n", h, g)
	}
	var rs []client.Replica
	for _, x := range handles {
		for _, p := range s.nodes[x].ports {
			rs = append(rs, client.Replica{Port: p, Instance: s.nodes[x].rid})
		}
	}
	if err := s.c.ModifyMulticastGroup(ctx, group, rs); err != nil {
		return err
	}
	s.groups[group] = handles
	return nil
}

func (s *Session) counter(name string) (*p4configv1.Counter, *p4configv1.DirectCounter) {
	for _, c := range s.info.Counters {
		if c.Preamble.Name == name || c.Preamble.Alias == name {
			return c, nil
		}
	}
	for _, c := range s.info.DirectCounters {
		if c.Preamble.Name == name || c.Preamble.Alias == name {
			return nil, c
		}
	}
	return nil, nil
}

func (s *Session) directEntry(tableID uint32, handle string) (client.TableEntry, error) {
	for _, t := range s.info.Tables {
		if t.Preamble.Id == tableID {
			e, _, err := s.handle(t.Preamble.Name, handle)
			return e, err
		}
	}
	return client.TableEntry{}, fmt.Errorf("no table %d", tableID)
}

// counterRead: counter_read COUNTER INDEX (an entry handle for a direct
// counter).
func (s *Session) counterRead(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return errors.New("counter_read COUNTER INDEX")
	}
	c, dc := s.counter(args[0])
	var v client.CounterData
	var err error
	var name string
	switch {
	case c != nil:
		name = c.Preamble.Name
		idx, perr := strconv.ParseInt(args[1], 0, 64)
		if perr != nil {
			return fmt.Errorf("counter_read: index %q is not a number", args[1])
		}
		v, err = s.c.ReadCounter(ctx, name, idx)
	case dc != nil:
		name = dc.Preamble.Name
		e, herr := s.directEntry(dc.DirectTableId, args[1])
		if herr != nil {
			return herr
		}
		v, err = s.c.ReadDirectCounter(ctx, e)
	default:
		return fmt.Errorf("counter %q is not in the switch's program", args[0])
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "%s[%s]=  BmCounterValue(packets=%d, bytes=%d)\n", name, args[1], v.Packets, v.Bytes)
	return nil
}

func (s *Session) counterReset(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return errors.New("counter_reset COUNTER")
	}
	c, dc := s.counter(args[0])
	switch {
	case c != nil:
		for i := int64(0); i < c.Size; i++ {
			if err := s.c.WriteCounter(ctx, c.Preamble.Name, i, client.CounterData{}); err != nil {
				return err
			}
		}
		return nil
	case dc != nil:
		for _, t := range s.info.Tables {
			if t.Preamble.Id != dc.DirectTableId {
				continue
			}
			for _, e := range s.entries[t.Preamble.Name] {
				if err := s.c.WriteDirectCounter(ctx, e, client.CounterData{}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return fmt.Errorf("counter %q is not in the switch's program", args[0])
}

func (s *Session) register(name string) (*p4configv1.Register, error) {
	for _, r := range s.info.Registers {
		if r.Preamble.Name == name || r.Preamble.Alias == name {
			return r, nil
		}
	}
	return nil, fmt.Errorf("register %q is not in the switch's program", name)
}

func registerWidth(r *p4configv1.Register) int32 {
	return r.GetTypeSpec().GetBitstring().GetBit().GetBitwidth()
}

// registerRead: register_read REGISTER [INDEX]
func (s *Session) registerRead(ctx context.Context, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return errors.New("register_read REGISTER [INDEX]")
	}
	r, err := s.register(args[0])
	if err != nil {
		return err
	}
	if len(args) == 2 {
		idx, err := strconv.ParseInt(args[1], 0, 64)
		if err != nil {
			return fmt.Errorf("register_read: index %q is not a number", args[1])
		}
		v, err := s.c.ReadRegister(ctx, r.Preamble.Name, idx)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.out, "%s[%d]= %s\n", r.Preamble.Name, idx, new(big.Int).SetBytes(v))
		return nil
	}
	all, err := s.c.ReadRegisters(ctx, r.Preamble.Name)
	if err != nil {
		return err
	}
	vals := make([]string, len(all))
	for i, v := range all {
		vals[i] = new(big.Int).SetBytes(v).String()
	}
	fmt.Fprintf(s.out, "%s= %s\n", r.Preamble.Name, strings.Join(vals, ", "))
	return nil
}

// meterSetRates: meter_set_rates METER INDEX RATE:BURST RATE:BURST and
// meter_array_set_rates METER RATE:BURST RATE:BURST. Rates are per
// microsecond, as bmv2 takes them (P4Runtime's are per second).
func (s *Session) meterSetRates(ctx context.Context, cmd string, args []string) error {
	n := 4
	if cmd == "meter_array_set_rates" {
		n = 3
	}
	if len(args) != n {
		return fmt.Errorf("%s METER %sCIR:CBURST PIR:PBURST", cmd, map[bool]string{true: "INDEX ", false: ""}[n == 4])
	}
	var cfg client.MeterConfig
	rates := args[n-2:]
	for i, rb := range rates {
		r, b, ok := strings.Cut(rb, ":")
		rate, err1 := strconv.ParseFloat(r, 64)
		burst, err2 := strconv.ParseUint(b, 0, 64)
		if !ok || err1 != nil || err2 != nil || rate < 0 {
			return fmt.Errorf("%s: %q: want RATE:BURST (units per microsecond : units)", cmd, rb)
		}
		perSecond := uint64(math.Round(rate * 1e6))
		if i == 0 {
			cfg.CIR, cfg.CBurst = perSecond, burst
		} else {
			cfg.PIR, cfg.PBurst = perSecond, burst
		}
	}
	for _, m := range s.info.Meters {
		if m.Preamble.Name != args[0] && m.Preamble.Alias != args[0] {
			continue
		}
		if n == 3 {
			for i := int64(0); i < m.Size; i++ {
				if err := s.c.WriteMeter(ctx, m.Preamble.Name, i, cfg); err != nil {
					return err
				}
			}
			return nil
		}
		idx, err := strconv.ParseInt(args[1], 0, 64)
		if err != nil {
			return fmt.Errorf("%s: index %q is not a number", cmd, args[1])
		}
		return s.c.WriteMeter(ctx, m.Preamble.Name, idx, cfg)
	}
	for _, m := range s.info.DirectMeters {
		if (m.Preamble.Name == args[0] || m.Preamble.Alias == args[0]) && n == 4 {
			e, err := s.directEntry(m.DirectTableId, args[1])
			if err != nil {
				return err
			}
			return s.c.WriteDirectMeter(ctx, e, cfg)
		}
	}
	return fmt.Errorf("meter %q is not in the switch's program", args[0])
}

// parseKey parses a match key as simple_switch_CLI does for the field's
// match kind.
func parseKey(k string, mf *p4configv1.MatchField) (client.Match, error) {
	m := client.Match{Field: mf.Name}
	var err error
	switch mf.GetMatchType() {
	case p4configv1.MatchField_LPM:
		v, l, ok := strings.Cut(k, "/")
		if !ok {
			return m, fmt.Errorf("%q: an lpm key is VALUE/PREFIX_LENGTH", k)
		}
		if m.PrefixLen, err = strconv.Atoi(l); err != nil || m.PrefixLen < 0 || m.PrefixLen > int(mf.Bitwidth) {
			return m, fmt.Errorf("%q: prefix length 0 to %d", k, mf.Bitwidth)
		}
		m.Value, err = parseValue(v, mf.Bitwidth)
	case p4configv1.MatchField_TERNARY:
		v, mask, ok := strings.Cut(k, "&&&")
		if !ok {
			return m, fmt.Errorf("%q: a ternary key is VALUE&&&MASK", k)
		}
		if m.Value, err = parseValue(v, mf.Bitwidth); err == nil {
			m.Mask, err = parseValue(mask, mf.Bitwidth)
		}
	case p4configv1.MatchField_RANGE:
		lo, hi, ok := strings.Cut(k, "->")
		if !ok {
			return m, fmt.Errorf("%q: a range key is LOW->HIGH", k)
		}
		if m.Value, err = parseValue(lo, mf.Bitwidth); err == nil {
			m.High, err = parseValue(hi, mf.Bitwidth)
		}
	default:
		m.Value, err = parseValue(k, mf.Bitwidth)
	}
	return m, err
}

// parseValue parses a CLI value: a number (decimal, or hex with 0x), an
// IPv4 or IPv6 address or a MAC address.
func parseValue(s string, width int32) ([]byte, error) {
	if macRE.MatchString(s) {
		return net.ParseMAC(s)
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.AsSlice(), nil
	}
	n, ok := new(big.Int).SetString(s, 0)
	if !ok {
		return nil, fmt.Errorf("%q is not a number or an address", s)
	}
	if n.Sign() < 0 || n.BitLen() > int(width) {
		return nil, fmt.Errorf("%s does not fit in %d bits", s, width)
	}
	return n.Bytes(), nil
}

// setQueue: set_queue_rate RATE_PPS [PORT] and set_queue_depth DEPTH [PORT].
func (s *Session) setQueue(ctx context.Context, cmd string, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return fmt.Errorf("%s VALUE [EGRESS_PORT]", cmd)
	}
	var port *uint32
	if len(args) == 2 {
		p, err := strconv.ParseUint(args[1], 0, 9)
		if err != nil {
			return fmt.Errorf("%s: port %q is not a v1model port", cmd, args[1])
		}
		p32 := uint32(p)
		port = &p32
	}
	if cmd == "set_queue_rate" {
		rate, err := strconv.ParseFloat(args[0], 64)
		if err != nil {
			return fmt.Errorf("set_queue_rate: %q is not packets per second", args[0])
		}
		return dataplane.SetQueueRate(ctx, s.c.Conn(), port, rate)
	}
	depth, err := strconv.Atoi(args[0])
	if err != nil {
		return fmt.Errorf("set_queue_depth: %q is not a number of packets", args[0])
	}
	return dataplane.SetQueueDepth(ctx, s.c.Conn(), port, depth)
}
