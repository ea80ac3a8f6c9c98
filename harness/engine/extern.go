package engine

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// maxCells bounds the size of one register, counter or meter array.
const maxCells = 1 << 22

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// registerArray is a register: size cells of width bits, each cell words
// 64-bit words. As in bmv2, an action (or parser primitive) holds the mutex
// of every register it uses while it runs, so a read-modify-write within
// one action is atomic with respect to other packets.
type registerArray struct {
	name  string
	width int
	size  int
	words int
	mu    *sync.Mutex // the lock of the register's group
	cells []uint64
}

// counterArray is an indexed or direct counter. A switch's counter arrays
// lie side by side (Switch.counters), 32 bytes each: two in a cache line.
type counterArray struct {
	cells []counterCell
	decl  *bmv2json.CounterArray
}

// counterCell is one counter. A serial switch's packets count plainly,
// holding s.serial, as every access from the control plane does then
// (Switch.readCell, Switch.writeCell); other switches' count atomically.
type counterCell struct {
	bytes, packets uint64
}

// add counts a packet of n bytes.
func (c *counterCell) add(n int, serial bool) {
	if serial {
		c.packets++
		c.bytes += uint64(n)
		return
	}
	atomic.AddUint64(&c.packets, 1)
	atomic.AddUint64(&c.bytes, uint64(n))
}

// readCell reads a counter of the switch's while no packet counts.
func (s *Switch) readCell(c *counterCell) CounterValue {
	if s.cfg.Serial {
		s.serial.Lock()
		defer s.serial.Unlock()
	}
	return CounterValue{Bytes: atomic.LoadUint64(&c.bytes), Packets: atomic.LoadUint64(&c.packets)}
}

// writeCell sets counters of the switch's while no packet counts.
func (s *Switch) writeCell(v CounterValue, cells ...*counterCell) {
	if s.cfg.Serial {
		s.serial.Lock()
		defer s.serial.Unlock()
	}
	for _, c := range cells {
		atomic.StoreUint64(&c.bytes, v.Bytes)
		atomic.StoreUint64(&c.packets, v.Packets)
	}
}

// meterArray is an indexed or direct meter.
type meterArray struct {
	name      string
	size      int
	direct    bool
	table     string
	bytes     bool // meters bytes rather than packets
	rateCount int
	result    int // field receiving the colour of a direct meter, or -1
	mu        sync.Mutex
	cells     []meterState
}

// meterState is a two-rate three-colour marker (RFC 2698).
type meterState struct {
	configured bool
	cfg        MeterConfig
	tc, tp     float64 // tokens
	last       time.Time
}

// execute marks n units at time now and returns the colour.
func (m *meterState) execute(n int, now time.Time) int {
	if !m.configured {
		return ColorGreen
	}
	if !m.last.IsZero() {
		dt := now.Sub(m.last).Seconds()
		if dt > 0 {
			m.tc = min(float64(m.cfg.CBurst), m.tc+dt*float64(m.cfg.CIR))
			m.tp = min(float64(m.cfg.PBurst), m.tp+dt*float64(m.cfg.PIR))
		}
	}
	m.last = now
	u := float64(n)
	if m.tp < u {
		return ColorRed
	}
	if m.tc < u {
		m.tp -= u
		return ColorYellow
	}
	m.tp -= u
	m.tc -= u
	return ColorGreen
}

func (p *Program) loadExterns(j *bmv2json.Program) error {
	p.registers = map[string]int{}
	for _, r := range j.RegisterArrays {
		if r.Bitwidth <= 0 || r.Bitwidth > maxFieldBits || r.Size < 0 || r.Size*((r.Bitwidth+63)/64) > maxCells {
			return fmt.Errorf("register %q: bitwidth %d, size %d", r.Name, r.Bitwidth, r.Size)
		}
		p.registers[r.Name] = len(p.regDecls)
		p.regDecls = append(p.regDecls, r)
	}
	p.counters = map[string]int{}
	for _, c := range j.CounterArrays {
		if c.Size < 0 || c.Size > maxCells {
			return fmt.Errorf("counter %q: size %d", c.Name, c.Size)
		}
		p.counters[c.Name] = len(p.ctrDecls)
		p.ctrDecls = append(p.ctrDecls, c)
	}
	p.meters = map[string]int{}
	for _, m := range j.MeterArrays {
		if m.Size < 0 || m.Size > maxCells {
			return fmt.Errorf("meter %q: size %d", m.Name, m.Size)
		}
		if m.Type != "packets" && m.Type != "bytes" {
			return fmt.Errorf("meter %q: type %q is neither packets nor bytes", m.Name, m.Type)
		}
		if m.IsDirect && len(m.ResultTarget) != 2 {
			return fmt.Errorf("direct meter %q: result_target %v is not [header, field]", m.Name, m.ResultTarget)
		}
		if m.IsDirect {
			if _, err := p.lookupField(m.ResultTarget[0], m.ResultTarget[1]); err != nil {
				return fmt.Errorf("direct meter %q: result_target: %w", m.Name, err)
			}
		}
		p.meters[m.Name] = len(p.mtrDecls)
		p.mtrDecls = append(p.mtrDecls, m)
	}
	p.fieldLists = map[int][]int{}
	for _, fl := range j.FieldLists {
		var list []int
		for _, e := range fl.Elements {
			hdr, name, ok := e.FieldRef()
			if !ok {
				return fmt.Errorf("field list %q: element %s is not a field", fl.Name, e)
			}
			fi, err := p.lookupField(hdr, name)
			if err != nil {
				return fmt.Errorf("field list %q: %w", fl.Name, err)
			}
			list = append(list, fi)
			p.markRead(fi)
		}
		p.fieldLists[fl.ID] = list
	}
	return nil
}

// newExternState creates a switch's registers, counters and meters.
func (s *Switch) newExternState() {
	p := s.prog
	s.regLocks = make([]sync.Mutex, p.regGroups)
	s.registers = make([]*registerArray, len(p.regDecls))
	for i, r := range p.regDecls {
		w := (r.Bitwidth + 63) / 64
		s.registers[i] = &registerArray{name: r.Name, width: r.Bitwidth, size: r.Size, words: w, cells: make([]uint64, r.Size*w),
			mu: &s.regLocks[p.regGroup[i]]}
	}
	s.counters = make([]counterArray, len(p.ctrDecls))
	for i, c := range p.ctrDecls {
		s.counters[i] = counterArray{decl: &p.ctrDecls[i]}
		if !c.IsDirect { // a direct counter's cells are its table's entries'
			s.counters[i].cells = make([]counterCell, c.Size)
		}
	}
	s.meters = make([]*meterArray, len(p.mtrDecls))
	for i, m := range p.mtrDecls {
		ma := &meterArray{name: m.Name, size: m.Size, direct: m.IsDirect, table: m.Binding, bytes: m.Type == "bytes", rateCount: m.RateCount, result: -1}
		if m.IsDirect {
			ma.result, _ = p.lookupField(m.ResultTarget[0], m.ResultTarget[1])
		} else {
			ma.cells = make([]meterState, m.Size)
		}
		s.meters[i] = ma
	}
}

// outOfBounds traces an access at index i past the register's end, which
// bmv2 logs and otherwise ignores (see TestRegisterIndexOutOfBoundsChangesNothing).
func (r *registerArray) outOfBounds(k *pkt, primitive string, i uint64, effect string) {
	k.trace("%s %s[%d]: index out of bounds (size %d), %s", primitive, r.name, i, r.size, effect)
}

func (c *compiler) registerRead(dv, rv, iv *bmv2json.Value) (func(k *pkt), error) {
	ri, err := c.externIndex(rv, "register_array", "register", c.p.registers)
	if err != nil {
		return nil, err
	}
	c.useRegister(ri)
	dst, dyn, err := c.lvalue(dv)
	if err != nil {
		return nil, err
	}
	ie, err := c.data(iv)
	if err != nil {
		return nil, err
	}
	// The common shape, a narrow register read at a field's index into a
	// field, reads both slots directly.
	if is, ok := leafSlot(ie); ok && dst != nil && dst.words == 1 && c.p.regDecls[ri].Bitwidth <= 64 {
		slot, m := dst.slot, mask64(dst.width)
		return func(k *pkt) {
			r := k.sw.registers[ri]
			i := k.f[is]
			if i >= uint64(r.size) {
				r.outOfBounds(k, "register_read", i, "destination unchanged")
				return
			}
			k.f[slot] = r.cells[i] & m
		}, nil
	}
	idx := c.uintOf(ie)
	return func(k *pkt) {
		r := k.sw.registers[ri]
		i := idx(k)
		if i >= uint64(r.size) {
			r.outOfBounds(k, "register_read", i, "destination unchanged")
			return
		}
		f := dst
		if f == nil {
			f = dyn(k)
		}
		if r.words == 1 && f.words == 1 {
			k.f[f.slot] = r.cells[i] & mask64(f.width)
		} else {
			z := &k.tmpB
			z.SetUint64(0)
			for w := r.words - 1; w >= 0; w-- {
				z.Lsh(z, 64)
				z.Or(z, k.tmpA.SetUint64(r.cells[int(i)*r.words+w]))
			}
			k.setBig(f, z)
		}
	}, nil
}

func (c *compiler) registerWrite(rv, iv, sv *bmv2json.Value) (func(k *pkt), error) {
	ri, err := c.externIndex(rv, "register_array", "register", c.p.registers)
	if err != nil {
		return nil, err
	}
	c.useRegister(ri)
	ie, err := c.data(iv)
	if err != nil {
		return nil, err
	}
	src, err := c.data(sv)
	if err != nil {
		return nil, err
	}
	width := c.p.regDecls[ri].Bitwidth
	is, leafIdx := leafSlot(ie)
	if ss, leafSrc := leafSlot(src); leafIdx && leafSrc && width <= 64 {
		m := mask64(width)
		return func(k *pkt) {
			r := k.sw.registers[ri]
			i := k.f[is]
			if i >= uint64(r.size) {
				r.outOfBounds(k, "register_write", i, "nothing written")
				return
			}
			r.cells[i] = k.f[ss] & m
		}, nil
	}
	idx := c.uintOf(ie)
	if src.fast != nil && width <= 64 {
		f := src.fast
		m := mask64(width)
		return func(k *pkt) {
			r := k.sw.registers[ri]
			i := idx(k)
			if i >= uint64(r.size) {
				r.outOfBounds(k, "register_write", i, "nothing written")
				return
			}
			r.cells[i] = uint64(f(k)) & m
		}, nil
	}
	s := c.slowOf(src)
	msk := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(width)), big.NewInt(1))
	return func(k *pkt) {
		r := k.sw.registers[ri]
		i := idx(k)
		if i >= uint64(r.size) {
			r.outOfBounds(k, "register_write", i, "nothing written")
			return
		}
		z := k.tmpB.And(s(k), msk)
		ws := z.Bits()
		for w := 0; w < r.words; w++ {
			var v uint64
			if w < len(ws) {
				v = uint64(ws[w])
			}
			r.cells[int(i)*r.words+w] = v
		}
	}, nil
}

func (c *compiler) count(cv, iv *bmv2json.Value) (func(k *pkt), error) {
	ci, err := c.externIndex(cv, "counter_array", "counter", c.p.counters)
	if err != nil {
		return nil, err
	}
	if c.p.ctrDecls[ci].IsDirect {
		return nil, c.errorf("count on direct counter %q", cv.Str)
	}
	idx, err := c.uintParam(iv)
	if err != nil {
		return nil, err
	}
	return func(k *pkt) {
		ca := &k.sw.counters[ci]
		i := idx(k)
		if i >= uint64(len(ca.cells)) {
			k.trace("count %s[%d]: index out of bounds (size %d)", ca.decl.Name, i, len(ca.cells))
			return
		}
		ca.cells[i].add(k.inLen, k.sw.cfg.Serial)
	}, nil
}

func (c *compiler) executeMeter(mv, iv, dv *bmv2json.Value) (func(k *pkt), error) {
	mi, err := c.externIndex(mv, "meter_array", "meter", c.p.meters)
	if err != nil {
		return nil, err
	}
	if c.p.mtrDecls[mi].IsDirect {
		return nil, c.errorf("execute_meter on direct meter %q", mv.Str)
	}
	idx, err := c.uintParam(iv)
	if err != nil {
		return nil, err
	}
	dst, dyn, err := c.lvalue(dv)
	if err != nil {
		return nil, err
	}
	return func(k *pkt) {
		ma := k.sw.meters[mi]
		i := idx(k)
		if i >= uint64(ma.size) {
			k.trace("execute_meter %s[%d]: index out of bounds (size %d), destination unchanged", ma.name, i, ma.size)
			return
		}
		color := ma.run(k, int(i))
		f := dst
		if f == nil {
			f = dyn(k)
		}
		k.f[f.slot] = uint64(color) & mask64(f.width)
	}, nil
}

// run executes cell i of an indexed meter, or a direct meter's cell.
func (ma *meterArray) run(k *pkt, i int) int {
	return ma.runCell(k, &ma.cells[i])
}

func (ma *meterArray) runCell(k *pkt, m *meterState) int {
	n := 1
	if ma.bytes {
		n = k.inLen
	}
	now := k.sw.now()
	ma.mu.Lock()
	color := m.execute(n, now)
	ma.mu.Unlock()
	return color
}

// useRegister records that the code being compiled accesses register ri.
func (c *compiler) useRegister(ri int) {
	for _, r := range c.regs {
		if r == ri {
			return
		}
	}
	c.regs = append(c.regs, ri)
	sort.Ints(c.regs)
}

// lockRegisters takes the mutexes of lock groups (sorted, so that two
// actions never wait on each other in opposite orders).
func (k *pkt) lockRegisters(groups []int) {
	for _, g := range groups {
		k.sw.regLocks[g].Lock()
	}
}

func (k *pkt) unlockRegisters(groups []int) {
	for _, g := range groups {
		k.sw.regLocks[g].Unlock()
	}
}

// groupRegisters partitions the registers into lock groups: registers that
// some action (or parser primitive) uses together share one mutex, so an
// action takes one lock per group instead of one per register, and actions
// on unrelated registers still run in parallel. Each user's register list
// becomes its sorted list of groups.
func (p *Program) groupRegisters() {
	parent := make([]int, len(p.regDecls))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, u := range p.regUsers {
		for _, r := range (*u)[1:] {
			parent[find(r)] = find((*u)[0])
		}
	}
	ids := map[int]int{}
	p.regGroup = make([]int, len(parent))
	for i := range parent {
		root := find(i)
		if _, ok := ids[root]; !ok {
			ids[root] = len(ids)
		}
		p.regGroup[i] = ids[root]
	}
	p.regGroups = len(ids)
	for _, u := range p.regUsers {
		var gs []int
		for _, r := range *u {
			if g := p.regGroup[r]; !slices.Contains(gs, g) {
				gs = append(gs, g)
			}
		}
		sort.Ints(gs)
		*u = gs
	}
}

// externIndex resolves a parameter naming a register, counter or meter array.
func (c *compiler) externIndex(v *bmv2json.Value, typ, kind string, byName map[string]int) (int, error) {
	name, err := c.named(v, typ)
	if err != nil {
		return 0, err
	}
	i, ok := byName[name]
	if !ok {
		return 0, c.errorf("unknown %s %q", kind, name)
	}
	return i, nil
}
