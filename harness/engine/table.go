package engine

import (
	"bytes"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/grid-ina/grid/harness/bmv2json"
)

type tableKind uint8

const (
	kindExact tableKind = iota // hash lookup (by the key as a number when it fits in 8 bytes)
	kindLPM                    // one hash per prefix length, longest first
	kindScan                   // priority-ordered scan (ternary, range, optional)
)

// keyField is one element of a table key, laid out at byte offset off of
// the table's key with nbytes bytes (its width rounded up).
type keyField struct {
	name   string
	fld    int
	kind   MatchKind
	width  int
	nbytes int
	off    int
	mask   []byte // mask from the P4 key expression ("f & 0xf0"), or nil
	// maskU is the field's bits in the key (nbytes bytes of ones, and'ed
	// with mask): the key of a short table (tableDecl.short) is built
	// from the fields' words with it.
	maskU uint64
}

// tableDecl is the static, compiled part of a table.
type tableDecl struct {
	name     string
	idx      int
	keys     []keyField
	keyBytes int
	kind     tableKind
	// short says the table is exact and its key fits in 8 bytes: it is
	// looked up by the key as a big-endian number (shortKey), which
	// hashes and compares faster than its bytes.
	short        bool
	actions      []*action
	defaultCall  *actionCall
	defaultConst bool
	// fixedDefault says no switch can change the default call: a const
	// action without parameters.
	fixedDefault bool
	maxSize      int
	next         []*node // by action index in Program.actions
	nextSet      []bool
	hitMiss      bool
	nextHit      *node
	nextMiss     *node
	baseNext     *node
	lpmOff       int // LPM tables: bits of the key before the LPM field's prefix
	profile      int // action profile of an indirect table, or -1
	counter      int // direct counter array, or -1
	meter        int // direct meter array, or -1
	entries      []Entry
	// supportTimeout makes entries remember their last hit (idle.go).
	supportTimeout bool
	// needs are the lazily extracted headers a lookup reads (the key's,
	// a selector's) or writes (a direct meter's result), before any
	// action runs (lazy.go).
	needs uint64
}

// actionCall is an action bound to its data.
type actionCall struct {
	act *action
	// inline holds the data when it fits (argv), so that a packet
	// running the call reads one object rather than two.
	inline [3]uint64
	args   []uint64
	data   [][]byte // as given, for reading entries back
}

// argv is the call's data, words per parameter.
func (c *actionCall) argv() []uint64 {
	if n := c.act.argWords; n <= len(c.inline) {
		return c.inline[:n]
	}
	return c.args
}

// entry is a table entry, in a multiple of 64 bytes so that what a hit
// reads (entryHead) lies in one cache line.
type entry struct {
	entryHead
	_ [(64 - unsafe.Sizeof(entryHead{})%64) % 64]byte
}

type entryHead struct {
	// What a packet hitting the entry reads and counts comes first, in
	// its first 64 bytes (call, ctr, first's act and inline): a switch
	// host's many switches leave little of a table in the CPU's caches
	// from one packet to the next.
	call atomic.Pointer[actionCall]
	ctr  counterCell
	// first is the call the entry was added with, where call points
	// until ModifyEntry: beside the rest, not an object of its own.
	first actionCall

	member   MemberHandle // indirect tables: the member, or
	group    GroupHandle  // the group the entry points at
	handle   EntryHandle
	key      []byte // masked value over the whole key
	mask     []byte // mask over the whole key; nil means all ones
	plen     int    // LPM: prefix length of the LPM field
	ranges   []rangeKey
	priority int32
	match    []Match
	meter    meterState
	idle     idleState
}

type rangeKey struct {
	off, n int
	lo, hi []byte
}

// lpmTrie is a binary trie over the key bits; an entry with prefix length
// p hangs at depth p. Nodes live in one slice for locality.
type lpmTrie struct {
	nodes []trieNode
}

type trieNode struct {
	child [2]int32 // 0: none (the root is never a child)
	e     *entry
}

func bitAt(key []byte, i int) int { return int(key[i>>3]>>(7-uint(i&7))) & 1 }

func (t *lpmTrie) insert(key []byte, plen int, e *entry) bool {
	if len(t.nodes) == 0 {
		t.nodes = append(t.nodes, trieNode{})
	}
	n := int32(0)
	for i := 0; i < plen; i++ {
		b := bitAt(key, i)
		c := t.nodes[n].child[b]
		if c == 0 {
			t.nodes = append(t.nodes, trieNode{})
			c = int32(len(t.nodes) - 1)
			t.nodes[n].child[b] = c
		}
		n = c
	}
	if t.nodes[n].e != nil {
		return false
	}
	t.nodes[n].e = e
	return true
}

func (t *lpmTrie) remove(key []byte, plen int) {
	n := int32(0)
	for i := 0; i < plen && len(t.nodes) > 0; i++ {
		n = t.nodes[n].child[bitAt(key, i)]
		if n == 0 {
			return
		}
	}
	if len(t.nodes) > 0 {
		t.nodes[n].e = nil
	}
}

// lookup returns the entry with the longest prefix of key.
func (t *lpmTrie) lookup(key []byte) *entry {
	if len(t.nodes) == 0 {
		return nil
	}
	nodes := t.nodes
	best := nodes[0].e
	n := int32(0)
	for i := 0; i < len(key)*8; i++ {
		n = nodes[n].child[int(key[i>>3]>>(7-uint(i&7)))&1]
		if n == 0 {
			break
		}
		if e := nodes[n].e; e != nil {
			best = e
		}
	}
	return best
}

// table is a table's run-time state in one Switch, in a multiple of 64
// bytes: a switch's tables lie side by side (Switch.tables), each with
// what a packet's lookup reads in its first cache line.
type table struct {
	tableHead
	_ [(64 - unsafe.Sizeof(tableHead{})%64) % 64]byte
}

type tableHead struct {
	decl   *tableDecl
	exactU shortIndex // instead of exact when decl.short
	def    atomic.Pointer[actionCall]
	exact  map[string]*entry
	lpm    lpmTrie
	scan   []*entry

	mu      sync.RWMutex
	entries map[EntryHandle]*entry
	nextID  uint64
}

func (p *Program) compileTables(j *bmv2json.Program) error {
	p.tableByName = map[string]int{}
	for pi := range j.Pipelines {
		for ti := range j.Pipelines[pi].Tables {
			jt := &j.Pipelines[pi].Tables[ti]
			if _, dup := p.tableByName[jt.Name]; dup {
				return fmt.Errorf("table %q declared twice", jt.Name)
			}
			td, err := p.compileTable(jt)
			if err != nil {
				return err
			}
			td.idx = len(p.tables)
			p.tableByName[jt.Name] = td.idx
			p.tables = append(p.tables, td)
		}
	}
	return nil
}

func (p *Program) compileTable(jt *bmv2json.Table) (*tableDecl, error) {
	td := &tableDecl{name: jt.Name, maxSize: jt.MaxSize, counter: -1, meter: -1, profile: -1, supportTimeout: jt.SupportTimeout}
	switch jt.Type {
	case "simple", "indirect", "indirect_ws":
	default:
		return nil, fmt.Errorf("table %q: unsupported table type %q", jt.Name, jt.Type)
	}
	nLPM, nScan := 0, 0
	for ki, k := range jt.Key {
		kf := keyField{name: k.Name}
		if len(k.Target) != 2 {
			return nil, fmt.Errorf("table %q key %d: target %v is not [header, field]", jt.Name, ki, k.Target)
		}
		fi, err := p.lookupField(k.Target[0], k.Target[1])
		if err != nil {
			return nil, fmt.Errorf("table %q key %q: %w", jt.Name, k.Name, err)
		}
		f := &p.fields[fi]
		if f.varbit {
			return nil, fmt.Errorf("table %q key %q: varbit field %s cannot be matched", jt.Name, k.Name, f.name)
		}
		kf.fld, kf.width = fi, f.width
		p.markRead(fi)
		kf.nbytes = (f.width + 7) / 8
		switch k.MatchType {
		case "exact", "valid":
			kf.kind = MatchExact
		case "lpm":
			kf.kind = MatchLPM
			nLPM++
		case "ternary":
			kf.kind = MatchTernary
			nScan++
		case "range":
			kf.kind = MatchRange
			nScan++
		default:
			return nil, fmt.Errorf("table %q key %q: unsupported match type %q", jt.Name, k.Name, k.MatchType)
		}
		if k.Mask != nil {
			m, err := hexBytes(*k.Mask, kf.nbytes)
			if err != nil {
				return nil, fmt.Errorf("table %q key %q: mask: %w", jt.Name, k.Name, err)
			}
			kf.mask = m
		}
		kf.off = td.keyBytes
		td.keyBytes += kf.nbytes
		td.keys = append(td.keys, kf)
	}
	switch {
	case nScan > 0 || nLPM > 1:
		td.kind = kindScan
	case nLPM == 1:
		td.kind = kindLPM
		// Lay the LPM field out last, so that an entry's mask is a prefix
		// of the whole key and one trie serves the table.
		off := 0
		for i := range td.keys {
			if td.keys[i].kind != MatchLPM {
				td.keys[i].off = off
				off += td.keys[i].nbytes
			}
		}
		for i := range td.keys {
			if td.keys[i].kind == MatchLPM {
				td.keys[i].off = off
				td.lpmOff = 8*off + td.keys[i].nbytes*8 - td.keys[i].width
			}
		}
	default:
		td.kind = kindExact
		td.short = td.keyBytes <= 8
	}
	for i := range td.keys {
		kf := &td.keys[i]
		kf.maskU = mask64(8 * kf.nbytes)
		if kf.mask != nil {
			kf.maskU &= shortKey(kf.mask)
		}
	}
	p.maxKeyBytes = max(p.maxKeyBytes, td.keyBytes)
	for _, kf := range td.keys {
		td.needs |= p.fieldMask(kf.fld)
	}
	if len(jt.Actions) != len(jt.ActionIDs) {
		return nil, fmt.Errorf("table %q: %d actions but %d action_ids", jt.Name, len(jt.Actions), len(jt.ActionIDs))
	}
	for i, name := range jt.Actions {
		a, ok := p.actionByID[jt.ActionIDs[i]]
		if !ok || a.name != name {
			return nil, fmt.Errorf("table %q: action %q (id %d) is not declared", jt.Name, name, jt.ActionIDs[i])
		}
		td.actions = append(td.actions, a)
	}
	if jt.Type != "simple" {
		if err := p.bindProfile(td, jt); err != nil {
			return nil, err
		}
		if sel := p.profiles[td.profile].selector; sel != nil {
			td.needs |= p.calcMask(sel)
		}
	}
	if jt.DirectMeters != nil {
		mi, ok := p.meters[*jt.DirectMeters]
		if !ok || !p.mtrDecls[mi].IsDirect {
			return nil, fmt.Errorf("table %q: direct meter %q is not declared", jt.Name, *jt.DirectMeters)
		}
		td.meter = mi
		if rt := p.mtrDecls[mi].ResultTarget; len(rt) == 2 {
			if fi, err := p.lookupField(rt[0], rt[1]); err == nil {
				td.needs |= p.fieldMask(fi)
			}
		}
	}
	if jt.WithCounters {
		for ci, c := range p.ctrDecls {
			if c.IsDirect && c.Binding == jt.Name {
				td.counter = ci
			}
		}
	}
	if de := jt.DefaultEntry; de != nil {
		a, ok := p.actionByID[de.ActionID]
		if !ok {
			return nil, fmt.Errorf("table %q: default action id %d is not declared", jt.Name, de.ActionID)
		}
		args, err := hexArgs(de.ActionData)
		if err != nil {
			return nil, fmt.Errorf("table %q: default entry: %w", jt.Name, err)
		}
		call, err := makeCall(a, args)
		if err != nil {
			return nil, fmt.Errorf("table %q: default entry: %w", jt.Name, err)
		}
		td.defaultCall = call
		td.defaultConst = de.ActionConst
		td.fixedDefault = de.ActionConst && len(a.params) == 0
	} else {
		// bmv2 runs nothing on a miss without a default entry; an empty
		// action stands for that.
		td.defaultCall = &actionCall{act: &action{name: "NoAction", id: -1, idx: -1}}
	}
	// Const entries are checked here, by inserting them into a scratch
	// table, so that NewSwitch cannot fail.
	scratch := newTable(td)
	for ei, je := range jt.Entries {
		en, err := p.constEntry(td, &je)
		if err != nil {
			return nil, fmt.Errorf("table %q: const entry %d: %w", jt.Name, ei, err)
		}
		e, _, err := td.encode(p, &en)
		if err == nil {
			err = scratch.insert(e)
		}
		if err != nil {
			return nil, fmt.Errorf("table %q: const entry %d: %w", jt.Name, ei, err)
		}
		td.entries = append(td.entries, en)
	}
	return td, nil
}

// hexArgs converts action data hex strings into byte strings.
func hexArgs(data []string) ([][]byte, error) {
	out := make([][]byte, len(data))
	for i, d := range data {
		z, err := parseHex(d)
		if err != nil {
			return nil, fmt.Errorf("action data %d: %w", i, err)
		}
		if z.Sign() < 0 {
			return nil, fmt.Errorf("action data %d: negative value %s", i, d)
		}
		out[i] = z.Bytes()
	}
	return out, nil
}

func (p *Program) constEntry(td *tableDecl, je *bmv2json.TableEntry) (Entry, error) {
	e := Entry{Priority: int32(je.Priority)}
	a, ok := p.actionByID[je.ActionEntry.ActionID]
	if !ok {
		return e, fmt.Errorf("action id %d is not declared", je.ActionEntry.ActionID)
	}
	e.Action = a.name
	args, err := hexArgs(je.ActionEntry.ActionData)
	if err != nil {
		return e, err
	}
	e.Args = args
	if len(je.MatchKey) != len(td.keys) {
		return e, fmt.Errorf("%d key values for %d key fields", len(je.MatchKey), len(td.keys))
	}
	hx := func(s *string) ([]byte, error) {
		if s == nil {
			return nil, fmt.Errorf("missing value")
		}
		z, err := parseHex(*s)
		if err != nil {
			return nil, err
		}
		if z.Sign() < 0 {
			return nil, fmt.Errorf("negative value %s", *s)
		}
		return z.Bytes(), nil
	}
	for i, mk := range je.MatchKey {
		var m Match
		var err error
		switch mk.MatchType {
		case "exact", "optional", "valid":
			m.Value, err = hx(mk.Key)
		case "lpm":
			m.Value, err = hx(mk.Key)
			if mk.PrefixLength != nil {
				m.PrefixLen = *mk.PrefixLength
			}
		case "ternary":
			if m.Value, err = hx(mk.Key); err == nil {
				m.Mask, err = hx(mk.Mask)
			}
		case "range":
			if m.Value, err = hx(mk.Start); err == nil {
				m.High, err = hx(mk.End)
			}
		default:
			err = fmt.Errorf("unsupported match type %q", mk.MatchType)
		}
		if err != nil {
			return e, fmt.Errorf("key %q: %w", td.keys[i].name, err)
		}
		e.Match = append(e.Match, m)
	}
	return e, nil
}

// makeCall binds an action to its data, checking the parameter count and widths.
func makeCall(a *action, data [][]byte) (*actionCall, error) {
	if len(data) != len(a.params) {
		return nil, fmt.Errorf("action %q takes %d parameters, got %d", a.name, len(a.params), len(data))
	}
	call := &actionCall{act: a, data: make([][]byte, len(data))}
	if a.argWords <= len(call.inline) {
		call.args = call.inline[:a.argWords]
	} else {
		call.args = make([]uint64, a.argWords)
	}
	for i, pi := range a.params {
		v := trimZeros(data[i])
		if bitLen(v) > pi.width {
			return nil, fmt.Errorf("action %q parameter %q: value 0x%x does not fit in %d bits", a.name, pi.name, data[i], pi.width)
		}
		call.data[i] = append([]byte(nil), data[i]...)
		for b := 0; b < len(v); b++ {
			byteVal := uint64(v[len(v)-1-b])
			call.args[pi.slot+b/8] |= byteVal << (8 * uint(b%8))
		}
	}
	return call, nil
}

// copyInto makes dst a copy of c that keeps its data inline if c does.
func (c *actionCall) copyInto(dst *actionCall) {
	*dst = *c
	if len(c.args) <= len(c.inline) {
		dst.args = dst.inline[:len(c.args)]
	}
}

func trimZeros(b []byte) []byte {
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	return b
}

func bitLen(b []byte) int {
	b = trimZeros(b)
	if len(b) == 0 {
		return 0
	}
	return (len(b)-1)*8 + bits.Len8(b[0])
}

// fit returns v as exactly n bytes, or an error if it has more than w bits.
func fit(v []byte, n, w int, what string) ([]byte, error) {
	t := trimZeros(v)
	if bitLen(t) > w {
		return nil, fmt.Errorf("%s 0x%x does not fit in %d bits", what, v, w)
	}
	out := make([]byte, n)
	copy(out[n-len(t):], t)
	return out, nil
}

func newTable(td *tableDecl) *table {
	t := &table{}
	t.init(td)
	return t
}

// init makes t an empty table of td.
func (t *table) init(td *tableDecl) {
	t.decl, t.entries = td, map[EntryHandle]*entry{}
	if td.kind == kindExact && !td.short {
		t.exact = map[string]*entry{}
	}
	t.def.Store(td.defaultCall)
}

// buildKey writes the packet's key for table t into dst.
func (td *tableDecl) buildKey(k *pkt, dst []byte) {
	for i := range td.keys {
		kf := &td.keys[i]
		part := dst[kf.off : kf.off+kf.nbytes]
		k.fieldBytes(&k.prog.fields[kf.fld], part)
		if kf.mask != nil {
			for b := range part {
				part[b] &= kf.mask[b]
			}
		}
	}
}

// shortKey is a key of at most 8 bytes as a big-endian number.
func shortKey(key []byte) uint64 {
	var v uint64
	for _, b := range key {
		v = v<<8 | uint64(b)
	}
	return v
}

// buildShortKey is the packet's key for a short table (tableDecl.short):
// shortKey of what buildKey writes.
func (td *tableDecl) buildShortKey(k *pkt) uint64 {
	var v uint64
	for i := range td.keys {
		kf := &td.keys[i]
		f := &k.prog.fields[kf.fld]
		w := k.f[f.slot]
		if f.isValid {
			w = 0
			if k.valid[f.hdr] {
				w = 1
			}
		}
		v = v<<(8*uint(kf.nbytes)) | w&kf.maskU
	}
	return v
}

// readLock keeps the table's entries from changing while a packet looks
// them up: t.mu, unless the switch is serial, where the packet holds
// s.serial, which writers take too (writeLock).
func (t *table) readLock(s *Switch) {
	if !s.cfg.Serial {
		t.mu.RLock()
	}
}

func (t *table) readUnlock(s *Switch) {
	if !s.cfg.Serial {
		t.mu.RUnlock()
	}
}

// writeLock locks the table for a change of its entries or of what they
// point at: t.mu, and s.serial when the switch is serial (readLock).
func (t *table) writeLock(s *Switch) {
	if s.cfg.Serial {
		s.serial.Lock()
	}
	t.mu.Lock()
}

func (t *table) writeUnlock(s *Switch) {
	t.mu.Unlock()
	if s.cfg.Serial {
		s.serial.Unlock()
	}
}

// lookup finds the matching entry, or nil. The caller holds readLock.
func (t *table) lookup(key []byte) *entry {
	switch t.decl.kind {
	case kindExact: // not short: apply looks those up itself
		return t.exact[string(key)]
	case kindLPM:
		return t.lpm.lookup(key)
	}
	for _, e := range t.scan {
		if e.matches(key) {
			return e
		}
	}
	return nil
}

func (e *entry) matches(key []byte) bool {
	if e.mask == nil {
		if !bytes.Equal(key, e.key) {
			return false
		}
	} else {
		for i := range key {
			if key[i]&e.mask[i] != e.key[i] {
				return false
			}
		}
	}
	for _, r := range e.ranges {
		v := key[r.off : r.off+r.n]
		if bytes.Compare(v, r.lo) < 0 || bytes.Compare(v, r.hi) > 0 {
			return false
		}
	}
	return true
}

// apply looks the packet up, runs the action and returns the next node.
// td is t.decl, which the caller has from the program: a keyless table
// whose default action cannot change (td.fixedDefault) then runs without
// reading the switch's table at all.
func (t *table) apply(k *pkt, td *tableDecl) *node {
	if td.keyBytes == 0 && k.tr == nil {
		// A keyless table (p4c puts a control's plain statements in
		// them) misses: it runs its default action, and counts nothing.
		call := td.defaultCall
		if !td.fixedDefault {
			call = t.def.Load()
		}
		call.act.run(k, call.argv())
		return td.nextAfter(call.act, false)
	}
	key := k.key[:td.keyBytes]
	var e *entry
	var member MemberHandle
	var group GroupHandle
	switch {
	case td.short && td.keyBytes > 0:
		if k.tr != nil {
			td.buildKey(k, key) // for the trace
		}
		u := td.buildShortKey(k)
		t.readLock(k.sw)
		sl := t.exactU.get(u)
		if sl == nil {
			t.readUnlock(k.sw)
			break
		}
		e = sl.e
		if td.profile >= 0 {
			member, group = e.member, e.group
			t.readUnlock(k.sw)
			break
		}
		if td.counter >= 0 {
			sl.ctr.add(k.inLen, k.sw.cfg.Serial)
		}
		if sl.act != nil && k.tr == nil && !td.supportTimeout && td.meter < 0 {
			// The hit's action and data from the slot, without
			// reading the entry.
			a := sl.act
			k.argBuf = sl.args
			t.readUnlock(k.sw)
			a.run(k, k.argBuf[:a.argWords])
			return td.nextAfter(a, true)
		}
		t.readUnlock(k.sw)
	case td.keyBytes > 0: // a keyless table always misses (AddEntry refuses entries)
		td.buildKey(k, key)
		t.readLock(k.sw)
		if e = t.lookup(key); e != nil && td.profile >= 0 {
			member, group = e.member, e.group // RepointEntry changes them under t.mu
		}
		t.readUnlock(k.sw)
	}
	var call *actionCall
	if e != nil && td.profile >= 0 {
		if call = k.sw.profiles[td.profile].resolve(k, member, group); call == nil {
			if k.tr != nil {
				k.tr.printf("Table '%s': hit an empty group: treated as a miss", td.name)
			}
			e = nil
		}
	}
	if e != nil {
		if call == nil {
			call = e.call.Load()
		}
		if td.counter >= 0 && !td.slotCounts() { // else the slot counted it
			e.ctr.add(k.inLen, k.sw.cfg.Serial)
		}
		if td.supportTimeout {
			e.idle.hit(k.sw.now())
		}
		if td.meter >= 0 {
			ma := k.sw.meters[td.meter]
			color := ma.runCell(k, &e.meter)
			k.setU(ma.result, uint64(color))
			k.src[k.prog.fields[ma.result].hdr] = 0
		}
		if k.tr != nil {
			k.tr.printf("Table '%s': hit with handle %d, key %s", td.name, e.handle, k.tr.hex(key))
			k.tr.printf("Action entry is %s - %s", call.act.name, k.tr.args(call.data))
		}
	} else {
		call = t.def.Load()
		if k.tr != nil {
			k.tr.printf("Table '%s': miss, key %s", td.name, k.tr.hex(key))
			k.tr.printf("Action entry is %s - %s", call.act.name, k.tr.args(call.data))
		}
	}
	if k.tr != nil {
		k.tr.printf("Action %s", call.act.name)
	}
	call.act.run(k, call.argv())
	return td.nextAfter(call.act, e != nil)
}

// slotCounts says the table's direct counts live in its index slots
// (shortSlot.ctr), counted at the lookup, rather than in its entries: an
// indirect table's entry counts only once its member or group resolves.
func (td *tableDecl) slotCounts() bool { return td.short && td.profile < 0 }

// nextAfter is the node after the table ran a (hit or missed).
func (td *tableDecl) nextAfter(a *action, hit bool) *node {
	if td.hitMiss {
		if hit {
			return td.nextHit
		}
		return td.nextMiss
	}
	if id := a.idx; id >= 0 && id < len(td.nextSet) && td.nextSet[id] {
		return td.next[id]
	}
	return td.baseNext
}

// encode validates an Entry against the table and builds its lookup form.
func (td *tableDecl) encode(p *Program, en *Entry) (*entry, *actionCall, error) {
	if len(td.keys) == 0 {
		return nil, nil, fmt.Errorf("table %q has no key: set its default action instead of adding entries", td.name)
	}
	if len(en.Match) != len(td.keys) {
		return nil, nil, fmt.Errorf("table %q: %d match values for %d key fields", td.name, len(en.Match), len(td.keys))
	}
	var call *actionCall
	if td.profile >= 0 {
		if en.Action != "" || len(en.Args) > 0 {
			return nil, nil, fmt.Errorf("table %q is indirect: its entries name a member or group, not action %q", td.name, en.Action)
		}
	} else {
		a := td.actionByName(en.Action)
		if a == nil {
			return nil, nil, fmt.Errorf("table %q: action %q is not one of its actions (%s)", td.name, en.Action, td.actionNames())
		}
		var err error
		if call, err = makeCall(a, en.Args); err != nil {
			return nil, nil, fmt.Errorf("table %q: %w", td.name, err)
		}
	}
	e := &entry{entryHead: entryHead{key: make([]byte, td.keyBytes), priority: en.Priority, member: en.Member, group: en.Group}}
	full := true
	mask := make([]byte, td.keyBytes)
	for i, kf := range td.keys {
		m := en.Match[i]
		what := fmt.Sprintf("table %q key %q", td.name, kf.name)
		val, err := fit(m.Value, kf.nbytes, kf.width, what+" value")
		if err != nil {
			return nil, nil, err
		}
		km := make([]byte, kf.nbytes)
		switch kf.kind {
		case MatchExact:
			fillOnes(km, kf.width)
		case MatchLPM:
			if m.PrefixLen < 0 || m.PrefixLen > kf.width {
				return nil, nil, fmt.Errorf("%s: prefix length %d outside 0..%d", what, m.PrefixLen, kf.width)
			}
			pad := kf.nbytes*8 - kf.width
			for b := 0; b < m.PrefixLen; b++ {
				km[(pad+b)/8] |= 0x80 >> uint((pad+b)%8)
			}
			full = full && m.PrefixLen == kf.width
			e.plen = m.PrefixLen
		case MatchTernary:
			// Wildcard is a zero mask (an optional field left out).
			if !m.Wildcard {
				if km, err = fit(m.Mask, kf.nbytes, kf.width, what+" mask"); err != nil {
					return nil, nil, err
				}
			}
			full = false
		case MatchRange:
			hi, err := fit(m.High, kf.nbytes, kf.width, what+" high end")
			if err != nil {
				return nil, nil, err
			}
			if bytes.Compare(val, hi) > 0 {
				return nil, nil, fmt.Errorf("%s: range 0x%x..0x%x is empty", what, val, hi)
			}
			e.ranges = append(e.ranges, rangeKey{off: kf.off, n: kf.nbytes, lo: val, hi: hi})
			val = make([]byte, kf.nbytes) // the range part of key and mask stays zero
			full = false
		}
		if kf.mask != nil {
			for b := range km {
				km[b] &= kf.mask[b]
			}
		}
		for b := range val {
			e.key[kf.off+b] = val[b] & km[b]
			mask[kf.off+b] = km[b]
		}
	}
	if !full || td.kind != kindExact {
		e.mask = mask
	}
	e.match = cloneMatches(en.Match)
	if call != nil {
		call.copyInto(&e.first)
		e.call.Store(&e.first)
	}
	return e, call, nil
}

func fillOnes(b []byte, width int) {
	pad := len(b)*8 - width
	for i := range b {
		b[i] = 0xff
	}
	if pad > 0 {
		b[0] = 0xff >> uint(pad)
	}
}

func cloneMatches(ms []Match) []Match {
	out := make([]Match, len(ms))
	for i, m := range ms {
		out[i] = Match{Value: bytes.Clone(m.Value), Mask: bytes.Clone(m.Mask), PrefixLen: m.PrefixLen, High: bytes.Clone(m.High), Wildcard: m.Wildcard}
	}
	return out
}

func (td *tableDecl) actionByName(name string) *action { return findAction(td.actions, name) }

// findAction finds an action by full name or unique short name.
func findAction(actions []*action, name string) *action {
	for _, a := range actions {
		if a.name == name {
			return a
		}
	}
	var found *action
	for _, a := range actions {
		if shortMatch(a.name, name) {
			if found != nil {
				return nil
			}
			found = a
		}
	}
	return found
}

// shortMatch reports whether name abbreviates full: equal, or a suffix
// after a dot ("t" for "ingress.t").
func shortMatch(full, name string) bool {
	return full == name || strings.HasSuffix(full, "."+name)
}

func (td *tableDecl) actionNames() string {
	names := make([]string, len(td.actions))
	for i, a := range td.actions {
		names[i] = a.name
	}
	return strings.Join(names, ", ")
}

// insert adds e; the caller holds t.mu.
func (t *table) insert(e *entry) error {
	td := t.decl
	if td.maxSize > 0 && len(t.entries) >= td.maxSize {
		return fmt.Errorf("table %q is full (%d entries)", td.name, td.maxSize)
	}
	switch td.kind {
	case kindExact:
		if td.short {
			if t.exactU.get(shortKey(e.key)) != nil {
				return fmt.Errorf("table %q: an entry with this key exists", td.name)
			}
			t.exactU.put(shortKey(e.key), e)
			break
		}
		if _, dup := t.exact[string(e.key)]; dup {
			return fmt.Errorf("table %q: an entry with this key exists", td.name)
		}
		t.exact[string(e.key)] = e
	case kindLPM:
		if !t.lpm.insert(e.key, td.lpmBits(e), e) {
			return fmt.Errorf("table %q: an entry with this prefix exists", td.name)
		}
	default:
		for _, o := range t.scan {
			if o.priority == e.priority && bytes.Equal(o.key, e.key) && bytes.Equal(o.mask, e.mask) && sameRanges(o.ranges, e.ranges) {
				return fmt.Errorf("table %q: an entry with this key and priority exists", td.name)
			}
		}
		// the scan order is (priority, insertion): the new entry goes after
		// every entry of its priority
		at := sort.Search(len(t.scan), func(i int) bool { return t.scan[i].priority > e.priority })
		t.scan = slices.Insert(t.scan, at, e)
	}
	t.nextID++
	e.handle = EntryHandle(t.nextID)
	t.entries[e.handle] = e
	return nil
}

func sameRanges(a, b []rangeKey) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].lo, b[i].lo) || !bytes.Equal(a[i].hi, b[i].hi) {
			return false
		}
	}
	return true
}

// remove deletes e; the caller holds t.mu.
func (t *table) remove(e *entry) {
	delete(t.entries, e.handle)
	switch t.decl.kind {
	case kindExact:
		if t.decl.short {
			t.exactU.remove(shortKey(e.key))
			break
		}
		delete(t.exact, string(e.key))
	case kindLPM:
		t.lpm.remove(e.key, t.decl.lpmBits(e))
	default:
		for i, o := range t.scan {
			if o == e {
				t.scan = append(t.scan[:i:i], t.scan[i+1:]...)
				break
			}
		}
	}
}

// lpmBits is the length of an entry's prefix over the whole key.
func (td *tableDecl) lpmBits(e *entry) int { return td.lpmOff + e.plen }
