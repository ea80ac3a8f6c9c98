package engine

import (
	"bytes"
	"fmt"
	"maps"
	"math/big"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// resolveName finds name among names: exactly, or as the unique name that
// ends in "."+name ("t" or "MyIngress.t" for "ingress.MyIngress.t").
func resolveName[T any](kind, name string, byName map[string]T) (T, error) {
	if v, ok := byName[name]; ok {
		return v, nil
	}
	var found []string
	for full := range byName {
		if shortMatch(full, name) {
			found = append(found, full)
		}
	}
	var zero T
	switch len(found) {
	case 1:
		return byName[found[0]], nil
	case 0:
		known := make([]string, 0, len(byName))
		for n := range byName {
			known = append(known, n)
		}
		sort.Strings(known)
		return zero, fmt.Errorf("no %s named %q (known: %s)", kind, name, strings.Join(known, ", "))
	}
	sort.Strings(found)
	return zero, fmt.Errorf("%s name %q is ambiguous: %s", kind, name, strings.Join(found, ", "))
}

func (s *Switch) table(name string) (*table, error) {
	i, err := resolveName("table", name, s.prog.tableByName)
	if err != nil {
		return nil, err
	}
	return &s.tables[i], nil
}

// Tables describes the program's tables.
func (p *Program) Tables() []TableInfo {
	out := make([]TableInfo, 0, len(p.tables))
	for _, td := range p.tables {
		ti := TableInfo{Name: td.name, DefaultAction: td.defaultCall.act.name, ConstDefault: td.defaultConst,
			MaxSize: td.maxSize, HasCounters: td.counter >= 0, HasMeters: td.meter >= 0}
		if td.profile >= 0 {
			ti.ActionProfile = p.profiles[td.profile].name
			ti.HasSelector = p.profiles[td.profile].selector != nil
		}
		for _, kf := range td.keys {
			ti.Keys = append(ti.Keys, KeyInfo{Name: kf.name, Field: p.fields[kf.fld].name, Kind: kf.kind, Bitwidth: kf.width})
		}
		for _, a := range td.actions {
			ti.Actions = append(ti.Actions, a.info())
		}
		out = append(out, ti)
	}
	return out
}

// Table describes one table, by full or unique short name.
func (p *Program) Table(name string) (TableInfo, error) {
	i, err := resolveName("table", name, p.tableByName)
	if err != nil {
		return TableInfo{}, err
	}
	for _, ti := range p.Tables() {
		if ti.Name == p.tables[i].name {
			return ti, nil
		}
	}
	return TableInfo{}, fmt.Errorf("no table named %q", name)
}

// Actions describes all actions of the program.
func (p *Program) Actions() []ActionInfo {
	out := make([]ActionInfo, len(p.actions))
	for i, a := range p.actions {
		out[i] = a.info()
	}
	return out
}

func (a *action) info() ActionInfo {
	ai := ActionInfo{Name: a.name}
	for _, pi := range a.params {
		ai.Params = append(ai.Params, ParamInfo{Name: pi.name, Bitwidth: pi.width})
	}
	return ai
}

// ExternInfo describes a register, counter or meter array.
type ExternInfo struct {
	Name     string
	Size     int
	Bitwidth int    // registers
	Direct   bool   // counters and meters bound to a table
	Table    string // the table of a direct counter or meter
	Bytes    bool   // meters: metering bytes rather than packets
}

// Registers describes the register arrays.
func (p *Program) Registers() []ExternInfo {
	var out []ExternInfo
	for _, r := range p.regDecls {
		out = append(out, ExternInfo{Name: r.Name, Size: r.Size, Bitwidth: r.Bitwidth})
	}
	return out
}

// Counters describes the counter arrays.
func (p *Program) Counters() []ExternInfo {
	var out []ExternInfo
	for _, c := range p.ctrDecls {
		out = append(out, ExternInfo{Name: c.Name, Size: c.Size, Direct: c.IsDirect, Table: c.Binding})
	}
	return out
}

// Meters describes the meter arrays.
func (p *Program) Meters() []ExternInfo {
	var out []ExternInfo
	for _, m := range p.mtrDecls {
		out = append(out, ExternInfo{Name: m.Name, Size: m.Size, Direct: m.IsDirect, Table: m.Binding, Bytes: m.Type == "bytes"})
	}
	return out
}

// AddEntry adds an entry to a table (by full or unique short name).
func (s *Switch) AddEntry(tableName string, en Entry) (EntryHandle, error) {
	t, err := s.table(tableName)
	if err != nil {
		return 0, err
	}
	if err := s.checkRef(t.decl, &en); err != nil {
		return 0, err
	}
	e, _, err := t.decl.encode(s.prog, &en)
	if err != nil {
		return 0, err
	}
	if t.decl.supportTimeout {
		e.idle.hit(s.now())
	}
	t.writeLock(s)
	defer t.writeUnlock(s)
	if err := t.insert(e); err != nil {
		return 0, err
	}
	return e.handle, nil
}

func (t *table) entry(h EntryHandle) (*entry, error) {
	e, ok := t.entries[h]
	if !ok {
		return nil, fmt.Errorf("table %q has no entry with handle %d", t.decl.name, h)
	}
	return e, nil
}

// ModifyEntry changes the action of an entry.
func (s *Switch) ModifyEntry(tableName string, h EntryHandle, actionName string, args [][]byte) error {
	t, err := s.table(tableName)
	if err != nil {
		return err
	}
	if t.decl.profile >= 0 {
		return fmt.Errorf("table %q is indirect: repoint its entries with RepointEntry", t.decl.name)
	}
	a := t.decl.actionByName(actionName)
	if a == nil {
		return fmt.Errorf("table %q: action %q is not one of its actions (%s)", t.decl.name, actionName, t.decl.actionNames())
	}
	call, err := makeCall(a, args)
	if err != nil {
		return fmt.Errorf("table %q: %w", t.decl.name, err)
	}
	// The write lock: packets of a serial switch read a short table's
	// slots without t.mu.
	t.writeLock(s)
	defer t.writeUnlock(s)
	e, err := t.entry(h)
	if err != nil {
		return err
	}
	e.call.Store(call)
	if t.decl.short {
		t.exactU.get(shortKey(e.key)).setCall(call)
	}
	return nil
}

// RepointEntry makes an entry of an indirect table point at another member
// or group (exactly one of member and group is non-zero).
func (s *Switch) RepointEntry(tableName string, h EntryHandle, member MemberHandle, group GroupHandle) error {
	t, err := s.table(tableName)
	if err != nil {
		return err
	}
	if t.decl.profile < 0 {
		return fmt.Errorf("table %q is not indirect: change its entries with ModifyEntry", t.decl.name)
	}
	if err := s.checkRef(t.decl, &Entry{Member: member, Group: group}); err != nil {
		return err
	}
	t.writeLock(s)
	defer t.writeUnlock(s)
	e, err := t.entry(h)
	if err != nil {
		return err
	}
	e.member, e.group = member, group
	return nil
}

// DeleteEntry removes an entry.
func (s *Switch) DeleteEntry(tableName string, h EntryHandle) error {
	t, err := s.table(tableName)
	if err != nil {
		return err
	}
	t.writeLock(s)
	defer t.writeUnlock(s)
	e, err := t.entry(h)
	if err != nil {
		return err
	}
	t.remove(e)
	return nil
}

// ClearTable removes all entries of a table.
func (s *Switch) ClearTable(tableName string) error {
	t, err := s.table(tableName)
	if err != nil {
		return err
	}
	t.writeLock(s)
	defer t.writeUnlock(s)
	for _, e := range t.entries {
		t.remove(e)
	}
	return nil
}

// FindEntry returns the handle of the entry with exactly this match and
// priority (P4Runtime identifies entries this way).
func (s *Switch) FindEntry(tableName string, match []Match, priority int32) (EntryHandle, error) {
	t, err := s.table(tableName)
	if err != nil {
		return 0, err
	}
	if len(t.decl.actions) == 0 {
		return 0, fmt.Errorf("table %q has no actions", t.decl.name)
	}
	probe := Entry{Match: match, Priority: priority, Action: t.decl.actions[0].name}
	probe.Args = make([][]byte, len(t.decl.actions[0].params))
	if t.decl.profile >= 0 {
		probe = Entry{Match: match, Priority: priority, Member: 1}
	}
	want, _, err := t.decl.encode(s.prog, &probe)
	if err != nil {
		return 0, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, e := range t.entries {
		if e.priority == want.priority && bytes.Equal(e.key, want.key) && bytes.Equal(e.mask, want.mask) && sameRanges(e.ranges, want.ranges) {
			return e.handle, nil
		}
	}
	return 0, fmt.Errorf("table %q has no entry with this match and priority %d", t.decl.name, priority)
}

// StoredEntry is an entry as read back from a table.
type StoredEntry struct {
	Handle EntryHandle
	Entry
}

// Entries lists a table's entries in handle order.
func (s *Switch) Entries(tableName string) ([]StoredEntry, error) {
	t, err := s.table(tableName)
	if err != nil {
		return nil, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	handles := sortedKeys(t.entries)
	out := make([]StoredEntry, 0, len(handles))
	for _, h := range handles {
		e := t.entries[h]
		en := Entry{Match: cloneMatches(e.match), Priority: e.priority, Member: e.member, Group: e.group}
		if call := e.call.Load(); call != nil {
			en.Action, en.Args = call.act.name, cloneArgs(call.data)
		}
		out = append(out, StoredEntry{Handle: h, Entry: en})
	}
	return out, nil
}

func sortedKeys(m map[EntryHandle]*entry) []EntryHandle {
	ks := make([]EntryHandle, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}

func cloneArgs(a [][]byte) [][]byte {
	out := make([][]byte, len(a))
	for i := range a {
		out[i] = bytes.Clone(a[i])
	}
	return out
}

// SetDefaultAction sets the action run on a miss.
func (s *Switch) SetDefaultAction(tableName, actionName string, args [][]byte) error {
	t, err := s.table(tableName)
	if err != nil {
		return err
	}
	a := t.decl.actionByName(actionName)
	if a == nil {
		return fmt.Errorf("table %q: action %q is not one of its actions (%s)", t.decl.name, actionName, t.decl.actionNames())
	}
	if t.decl.defaultConst && a != t.decl.defaultCall.act {
		return fmt.Errorf("table %q: the default action %q is const and cannot become %q", t.decl.name, t.decl.defaultCall.act.name, a.name)
	}
	call, err := makeCall(a, args)
	if err != nil {
		return fmt.Errorf("table %q: %w", t.decl.name, err)
	}
	t.def.Store(call)
	return nil
}

// ResetDefaultAction restores the program's default action.
func (s *Switch) ResetDefaultAction(tableName string) error {
	t, err := s.table(tableName)
	if err != nil {
		return err
	}
	t.def.Store(t.decl.defaultCall)
	return nil
}

// DefaultAction returns a table's current default action and its data.
func (s *Switch) DefaultAction(tableName string) (string, [][]byte, error) {
	t, err := s.table(tableName)
	if err != nil {
		return "", nil, err
	}
	call := t.def.Load()
	return call.act.name, cloneArgs(call.data), nil
}

// SetMulticastGroup creates or replaces a multicast group.
func (s *Switch) SetMulticastGroup(group uint16, replicas []Replica) error {
	if group == 0 {
		return fmt.Errorf("multicast group 0 means no multicast in v1model")
	}
	return updateCopy(&s.cpMu, &s.groups, func(m map[uint16][]Replica) error {
		m[group] = append([]Replica(nil), replicas...)
		return nil
	})
}

// updateCopy applies f to a copy of the map in p and publishes the copy:
// packets read the maps without locks.
func updateCopy[K comparable, V any](mu *sync.Mutex, p *atomic.Pointer[map[K]V], f func(map[K]V) error) error {
	mu.Lock()
	defer mu.Unlock()
	m := maps.Clone(*p.Load())
	if err := f(m); err != nil {
		return err
	}
	p.Store(&m)
	return nil
}

// DeleteMulticastGroup removes a multicast group.
func (s *Switch) DeleteMulticastGroup(group uint16) error {
	return updateCopy(&s.cpMu, &s.groups, func(m map[uint16][]Replica) error {
		if _, ok := m[group]; !ok {
			return fmt.Errorf("no multicast group %d", group)
		}
		delete(m, group)
		return nil
	})
}

// MulticastGroup returns a group's replicas.
func (s *Switch) MulticastGroup(group uint16) ([]Replica, bool) {
	r, ok := (*s.groups.Load())[group]
	return append([]Replica(nil), r...), ok
}

// SetCloneSession creates or replaces a mirroring session.
func (s *Switch) SetCloneSession(id uint32, cs CloneSession) error {
	return updateCopy(&s.cpMu, &s.clones, func(m map[uint32]CloneSession) error {
		m[id] = cs
		return nil
	})
}

// DeleteCloneSession removes a mirroring session.
func (s *Switch) DeleteCloneSession(id uint32) error {
	return updateCopy(&s.cpMu, &s.clones, func(m map[uint32]CloneSession) error {
		if _, ok := m[id]; !ok {
			return fmt.Errorf("no clone session %d", id)
		}
		delete(m, id)
		return nil
	})
}

func (s *Switch) register(name string) (*registerArray, error) {
	i, err := resolveName("register", name, s.prog.registers)
	if err != nil {
		return nil, err
	}
	return s.registers[i], nil
}

func (r *registerArray) check(index int) error {
	if index < 0 || index >= r.size {
		return fmt.Errorf("register %q: index %d outside 0..%d", r.name, index, r.size-1)
	}
	return nil
}

func (r *registerArray) read(index int) []byte {
	z := new(big.Int)
	for w := r.words - 1; w >= 0; w-- {
		z.Lsh(z, 64)
		z.Or(z, new(big.Int).SetUint64(r.cells[index*r.words+w]))
	}
	return z.FillBytes(make([]byte, (r.width+7)/8))
}

// ReadRegister returns one cell, big-endian in ceil(bitwidth/8) bytes.
func (s *Switch) ReadRegister(name string, index int) ([]byte, error) {
	r, err := s.register(name)
	if err != nil {
		return nil, err
	}
	if err := r.check(index); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.read(index), nil
}

// ReadRegisterArray returns every cell of a register.
func (s *Switch) ReadRegisterArray(name string) ([][]byte, error) {
	r, err := s.register(name)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([][]byte, r.size)
	for i := range out {
		out[i] = r.read(i)
	}
	return out, nil
}

// WriteRegister sets one cell; the value must fit the register's width.
func (s *Switch) WriteRegister(name string, index int, value []byte) error {
	r, err := s.register(name)
	if err != nil {
		return err
	}
	if err := r.check(index); err != nil {
		return err
	}
	if bitLen(value) > r.width {
		return fmt.Errorf("register %q: value 0x%x does not fit in %d bits", r.name, value, r.width)
	}
	z := new(big.Int).SetBytes(value)
	ws := z.Bits()
	r.mu.Lock()
	defer r.mu.Unlock()
	for w := 0; w < r.words; w++ {
		var v uint64
		if w < len(ws) {
			v = uint64(ws[w])
		}
		r.cells[index*r.words+w] = v
	}
	return nil
}

// ResetRegister sets every cell of a register to zero.
func (s *Switch) ResetRegister(name string) error {
	r, err := s.register(name)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.cells)
	return nil
}

func (s *Switch) counter(name string) (*counterArray, error) {
	i, err := resolveName("counter", name, s.prog.counters)
	if err != nil {
		return nil, err
	}
	c := &s.counters[i]
	if c.decl.IsDirect {
		return nil, fmt.Errorf("counter %q is a direct counter of table %q: read it per entry", c.decl.Name, c.decl.Binding)
	}
	return c, nil
}

// ReadCounter returns one cell of an indexed counter.
func (s *Switch) ReadCounter(name string, index int) (CounterValue, error) {
	c, err := s.counter(name)
	if err != nil {
		return CounterValue{}, err
	}
	if index < 0 || index >= len(c.cells) {
		return CounterValue{}, fmt.Errorf("counter %q: index %d outside 0..%d", c.decl.Name, index, len(c.cells)-1)
	}
	return s.readCell(&c.cells[index]), nil
}

// WriteCounter sets one cell of an indexed counter.
func (s *Switch) WriteCounter(name string, index int, v CounterValue) error {
	c, err := s.counter(name)
	if err != nil {
		return err
	}
	if index < 0 || index >= len(c.cells) {
		return fmt.Errorf("counter %q: index %d outside 0..%d", c.decl.Name, index, len(c.cells)-1)
	}
	s.writeCell(v, &c.cells[index])
	return nil
}

// ResetCounter zeroes every cell of an indexed counter.
func (s *Switch) ResetCounter(name string) error {
	c, err := s.counter(name)
	if err != nil {
		return err
	}
	cells := make([]*counterCell, len(c.cells))
	for i := range c.cells {
		cells[i] = &c.cells[i]
	}
	s.writeCell(CounterValue{}, cells...)
	return nil
}

func (s *Switch) directEntry(tableName string, h EntryHandle) (*table, *entry, error) {
	t, err := s.table(tableName)
	if err != nil {
		return nil, nil, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	e, err := t.entry(h)
	return t, e, err
}

// directCell calls f with the direct counter of entry h of a table, while
// no packet counts and the entry's index slot (tableDecl.slotCounts, which
// moves as entries come and go) stays where it is.
func (s *Switch) directCell(tableName string, h EntryHandle, f func(*counterCell)) error {
	t, err := s.table(tableName)
	if err != nil {
		return err
	}
	if t.decl.counter < 0 {
		return fmt.Errorf("table %q has no direct counter", t.decl.name)
	}
	t.writeLock(s)
	defer t.writeUnlock(s)
	e, err := t.entry(h)
	if err != nil {
		return err
	}
	if t.decl.slotCounts() {
		f(&t.exactU.get(shortKey(e.key)).ctr)
	} else {
		f(&e.ctr)
	}
	return nil
}

// ReadDirectCounter returns the direct counter of an entry.
func (s *Switch) ReadDirectCounter(tableName string, h EntryHandle) (CounterValue, error) {
	var v CounterValue
	err := s.directCell(tableName, h, func(c *counterCell) {
		v = CounterValue{Bytes: atomic.LoadUint64(&c.bytes), Packets: atomic.LoadUint64(&c.packets)}
	})
	return v, err
}

// WriteDirectCounter sets the direct counter of an entry.
func (s *Switch) WriteDirectCounter(tableName string, h EntryHandle, v CounterValue) error {
	return s.directCell(tableName, h, func(c *counterCell) {
		atomic.StoreUint64(&c.bytes, v.Bytes)
		atomic.StoreUint64(&c.packets, v.Packets)
	})
}

func (s *Switch) meter(name string) (*meterArray, error) {
	i, err := resolveName("meter", name, s.prog.meters)
	if err != nil {
		return nil, err
	}
	m := s.meters[i]
	if m.direct {
		return nil, fmt.Errorf("meter %q is a direct meter of table %q: configure it per entry", m.name, m.table)
	}
	return m, nil
}

func checkMeterConfig(name string, cfg MeterConfig) error {
	if cfg.PIR < cfg.CIR {
		return fmt.Errorf("meter %q: peak rate %d below committed rate %d", name, cfg.PIR, cfg.CIR)
	}
	return nil
}

// meterCell resolves an indexed meter and checks the index.
func (s *Switch) meterCell(name string, index int) (*meterArray, error) {
	m, err := s.meter(name)
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= m.size {
		return nil, fmt.Errorf("meter %q: index %d outside 0..%d", m.name, index, m.size-1)
	}
	return m, nil
}

// SetMeter configures one cell of an indexed meter.
func (s *Switch) SetMeter(name string, index int, cfg MeterConfig) error {
	m, err := s.meterCell(name, index)
	if err != nil {
		return err
	}
	if err := checkMeterConfig(m.name, cfg); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cells[index] = meterState{configured: true, cfg: cfg, tc: float64(cfg.CBurst), tp: float64(cfg.PBurst)}
	return nil
}

// ResetMeter makes one cell of an indexed meter unconfigured again: it
// marks every packet green, as before its first SetMeter (P4Runtime's
// MeterEntry without a config).
func (s *Switch) ResetMeter(name string, index int) error {
	m, err := s.meterCell(name, index)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cells[index] = meterState{}
	return nil
}

// ReadMeter returns a meter cell's configuration (false if unconfigured).
func (s *Switch) ReadMeter(name string, index int) (MeterConfig, bool, error) {
	m, err := s.meterCell(name, index)
	if err != nil {
		return MeterConfig{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cells[index].cfg, m.cells[index].configured, nil
}

// directMeter resolves the direct meter of an entry.
func (s *Switch) directMeter(tableName string, h EntryHandle) (*meterArray, *entry, error) {
	t, e, err := s.directEntry(tableName, h)
	if err != nil {
		return nil, nil, err
	}
	if t.decl.meter < 0 {
		return nil, nil, fmt.Errorf("table %q has no direct meter", t.decl.name)
	}
	return s.meters[t.decl.meter], e, nil
}

// SetDirectMeter configures the direct meter of an entry.
func (s *Switch) SetDirectMeter(tableName string, h EntryHandle, cfg MeterConfig) error {
	m, e, err := s.directMeter(tableName, h)
	if err != nil {
		return err
	}
	if err := checkMeterConfig(m.name, cfg); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e.meter = meterState{configured: true, cfg: cfg, tc: float64(cfg.CBurst), tp: float64(cfg.PBurst)}
	return nil
}

// ResetDirectMeter makes the direct meter of an entry unconfigured again
// (every packet green).
func (s *Switch) ResetDirectMeter(tableName string, h EntryHandle) error {
	m, e, err := s.directMeter(tableName, h)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e.meter = meterState{}
	return nil
}

// vset resolves a parser value set and normalises a value to its width.
func (s *Switch) vset(name string, value []byte) (*parseVset, *vsetDecl, []byte, error) {
	d, err := resolveName("parser value set", name, s.prog.vsets)
	if err != nil {
		return nil, nil, nil, err
	}
	v, err := fit(value, d.bytes, d.bytes*8, "parser value set "+d.name+" value")
	if err != nil {
		return nil, nil, nil, err
	}
	return s.vsets[d.idx], d, v, nil
}

// ReadDirectMeter returns the direct meter configuration of an entry
// (false if it was never configured).
func (s *Switch) ReadDirectMeter(tableName string, h EntryHandle) (MeterConfig, bool, error) {
	m, e, err := s.directMeter(tableName, h)
	if err != nil {
		return MeterConfig{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return e.meter.cfg, e.meter.configured, nil
}

// ParseVsetBytes gives the byte width of each parser value set's values
// (the bytes of the select key it matches), by name.
func (p *Program) ParseVsetBytes() map[string]int {
	m := map[string]int{}
	for name, d := range p.vsets {
		m[name] = d.bytes
	}
	return m
}

// SetParseVsetValues replaces the values of a parser value set (each
// big-endian, the set's width), all or none.
func (s *Switch) SetParseVsetValues(name string, values [][]byte) error {
	d, err := resolveName("parser value set", name, s.prog.vsets)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	for _, value := range values {
		v, err := fit(value, d.bytes, d.bytes*8, "parser value set "+d.name+" value")
		if err != nil {
			return err
		}
		set[string(v)] = true
	}
	vs := s.vsets[d.idx]
	vs.mu.Lock()
	defer vs.mu.Unlock()
	vs.set = set
	return nil
}

// AddParseVsetValue adds a value (big-endian, the set's width) to a parser value set.
func (s *Switch) AddParseVsetValue(name string, value []byte) error {
	vs, _, v, err := s.vset(name, value)
	if err != nil {
		return err
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	vs.set[string(v)] = true
	return nil
}

// DeleteParseVsetValue removes a value from a parser value set.
func (s *Switch) DeleteParseVsetValue(name string, value []byte) error {
	vs, d, v, err := s.vset(name, value)
	if err != nil {
		return err
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if !vs.set[string(v)] {
		return fmt.Errorf("parser value set %q has no value 0x%x", d.name, value)
	}
	delete(vs.set, string(v))
	return nil
}
