package engine

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"sync"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// Program is a loaded, validated and compiled bmv2 JSON program. It is
// immutable and may back several Switches.
type Program struct {
	json *bmv2json.Program

	fields      []field
	headers     []header
	stacks      []stack
	unions      []union
	unionStacks []unionStack
	metaHeaders []int
	slots       int

	headerByName     map[string]int
	fieldByName      map[string]int
	stackByName      map[string]int
	unionByName      map[string]int
	unionStackByName map[string]int

	std       stdFields
	stdHeader int

	errs       errorCodes
	errorNames map[int32]string
	initState  *parseState
	vsets      map[string]*vsetDecl

	actions    []*action
	actionByID map[int]*action

	tables        []*tableDecl
	tableByName   map[string]int
	profiles      []*profileDecl
	profileByName map[string]int
	ingress       *node
	egress        *node

	deparseOrder []int
	lazyHeaders  []int  // by bit of pkt.lazy (lazy.go)
	lazyTS       bool   // ingress_global_timestamp is read lazily (tsBit)
	egressNeeds  uint64 // what the egress pipeline may read of pkt.lazy
	checksums    []*checksum
	calcs        map[string]*calculation

	regDecls   []bmv2json.RegisterArray
	ctrDecls   []bmv2json.CounterArray
	mtrDecls   []bmv2json.MeterArray
	registers  map[string]int
	counters   map[string]int
	meters     map[string]int
	fieldLists map[int][]int
	regUsers   []*[]int // register lists of actions and parser primitives
	regGroup   []int    // lock group of each register
	regGroups  int
	learnLists map[int]*learnList

	// read marks fields that compiled code reads; the switch skips
	// producing metadata (timestamps) nobody reads.
	read        []bool
	bigScratch  int
	maxKeyBytes int
	pow2s       map[int]*big.Int // 2^w and 2^w-1 for every field width w
	masks       map[int]*big.Int

	// workers are the Process calls' reusable state, shared by every
	// Switch running the program (switch.go).
	workers sync.Pool
}

// node is a step of a control: a table or a conditional.
type node struct {
	name  string
	table int // index into Program.tables, or -1
	cond  func(k *pkt) bool
	t, f  *node
	// needs are the lazily extracted headers the step may read or
	// write (lazy.go).
	needs uint64
}

type checksum struct {
	name   string
	target *field
	calc   *calculation
	cond   func(k *pkt) bool
	verify bool
	update bool
}

// internalLoadError marks a load that failed by a crash of the loader, a
// bug the fuzz test looks for.
const internalLoadError = "internal error on malformed program"

// Load parses, validates and compiles a bmv2 JSON document.
func Load(data []byte) (*Program, error) {
	j, err := bmv2json.Parse(data)
	if err != nil {
		return nil, err
	}
	return LoadProgram(j)
}

// LoadProgram validates and compiles a decoded bmv2 JSON program. Every
// unsupported construct is reported here, naming it and where it occurs.
func LoadProgram(j *bmv2json.Program) (prog *Program, err error) {
	defer func() {
		// A malformed document must be an error, never a crash of the caller.
		if r := recover(); r != nil {
			prog, err = nil, fmt.Errorf("bmv2 JSON: %s: %v", internalLoadError, r)
		}
	}()
	// What bmv2 refuses or crashes on is refused here too, so a program
	// that only runs on the engine cannot pass for one that runs on bmv2.
	if err := j.CheckBmv2Shapes(); err != nil {
		return nil, fmt.Errorf("bmv2 JSON: bmv2 would not run it: %w", err)
	}
	p := &Program{json: j}
	p.workers.New = func() any { return &worker{} }
	if err := p.buildLayout(j); err != nil {
		return nil, fmt.Errorf("bmv2 JSON: %w", err)
	}
	for hi, h := range p.headers {
		if h.metadata {
			p.metaHeaders = append(p.metaHeaders, hi)
		}
	}
	p.pow2s, p.masks = map[int]*big.Int{}, map[int]*big.Int{}
	for _, f := range p.fields {
		if _, ok := p.pow2s[f.width]; !ok {
			pw := new(big.Int).Lsh(big.NewInt(1), uint(f.width))
			p.pow2s[f.width] = pw
			p.masks[f.width] = new(big.Int).Sub(pw, big.NewInt(1))
		}
	}
	p.read = make([]bool, len(p.fields))
	if err := p.resolveStdFields(j); err != nil {
		return nil, fmt.Errorf("bmv2 JSON: %w", err)
	}
	if err := p.loadExterns(j); err != nil {
		return nil, fmt.Errorf("bmv2 JSON: %w", err)
	}
	p.learnLists = map[int]*learnList{}
	for _, ll := range j.LearnLists {
		list := &learnList{name: ll.Name, id: ll.ID}
		for _, e := range ll.Elements {
			hdr, name, ok := e.FieldRef()
			if !ok {
				return nil, fmt.Errorf("bmv2 JSON: learn list %q: element %s is not a field", ll.Name, e)
			}
			fi, err := p.lookupField(hdr, name)
			if err != nil {
				return nil, fmt.Errorf("bmv2 JSON: learn list %q: %w", ll.Name, err)
			}
			p.markRead(fi)
			list.fields = append(list.fields, fi)
		}
		p.learnLists[ll.ID] = list
	}
	p.calcs = map[string]*calculation{}
	for i := range j.Calculations {
		c, err := p.compileCalculation(&j.Calculations[i])
		if err != nil {
			return nil, fmt.Errorf("bmv2 JSON: %w", err)
		}
		p.calcs[c.name] = c
	}
	p.planLazy(j)
	p.actionByID = map[int]*action{}
	for i := range j.Actions {
		a, err := p.compileAction(&j.Actions[i])
		if err != nil {
			return nil, fmt.Errorf("bmv2 JSON: %w", err)
		}
		if _, dup := p.actionByID[a.id]; dup {
			return nil, fmt.Errorf("bmv2 JSON: action id %d declared twice", a.id)
		}
		a.idx = len(p.actions)
		p.actions = append(p.actions, a)
		p.actionByID[a.id] = a
	}
	if err := p.compileParser(j); err != nil {
		return nil, fmt.Errorf("bmv2 JSON: %w", err)
	}
	if err := p.compileProfiles(j); err != nil {
		return nil, fmt.Errorf("bmv2 JSON: %w", err)
	}
	if err := p.compileTables(j); err != nil {
		return nil, fmt.Errorf("bmv2 JSON: %w", err)
	}
	if err := p.compilePipelines(j); err != nil {
		return nil, fmt.Errorf("bmv2 JSON: %w", err)
	}
	if err := p.compileDeparser(j); err != nil {
		return nil, fmt.Errorf("bmv2 JSON: %w", err)
	}
	if err := p.compileChecksums(j); err != nil {
		return nil, fmt.Errorf("bmv2 JSON: %w", err)
	}
	p.groupRegisters()
	if len(j.ExternInstances) > 0 {
		return nil, fmt.Errorf("bmv2 JSON: extern instance %q of type %q: generic externs are not supported", j.ExternInstances[0].Name, j.ExternInstances[0].Type)
	}
	return p, nil
}

// JSON returns the decoded bmv2 program the engine compiled (read-only),
// for tools that need details the engine does not expose.
func (p *Program) JSON() *bmv2json.Program { return p.json }

// pow2 returns 2^w for a field width w (read-only).
func (p *Program) pow2(w int) *big.Int { return p.pow2s[w] }

// mask returns 2^w-1 for a field width w (read-only).
func (p *Program) mask(w int) *big.Int { return p.masks[w] }

func (p *Program) compilePipelines(j *bmv2json.Program) error {
	for pi := range j.Pipelines {
		jp := &j.Pipelines[pi]
		nodes := map[string]*node{}
		for _, t := range jp.Tables {
			nodes[t.Name] = &node{name: t.Name, table: p.tableByName[t.Name]}
		}
		for _, c := range jp.Conditionals {
			if _, dup := nodes[c.Name]; dup {
				return fmt.Errorf("pipeline %q: node %q declared twice", jp.Name, c.Name)
			}
			nodes[c.Name] = &node{name: c.Name, table: -1}
		}
		ref := func(name *string, what string) (*node, error) {
			if name == nil {
				return nil, nil
			}
			n, ok := nodes[*name]
			if !ok {
				return nil, fmt.Errorf("pipeline %q: %s: unknown node %q", jp.Name, what, *name)
			}
			return n, nil
		}
		for _, c := range jp.Conditionals {
			n := nodes[c.Name]
			cc := &compiler{p: p, where: fmt.Sprintf("conditional %q%s", c.Name, srcInfo(c.SourceInfo))}
			cond, err := cc.boolean(c.Expression)
			if err != nil {
				return err
			}
			n.cond = cond
			n.needs = p.lazyMask(c.Expression)
			if n.t, err = ref(c.TrueNext, "conditional "+c.Name+" true_next"); err != nil {
				return err
			}
			if n.f, err = ref(c.FalseNext, "conditional "+c.Name+" false_next"); err != nil {
				return err
			}
		}
		for _, t := range jp.Tables {
			td := p.tables[p.tableByName[t.Name]]
			nodes[t.Name].needs = td.needs
			var err error
			if td.baseNext, err = ref(t.BaseDefaultNext, "table "+t.Name+" base_default_next"); err != nil {
				return err
			}
			td.next = make([]*node, len(p.actions))
			td.nextSet = make([]bool, len(p.actions))
			for an, nx := range t.NextTables {
				target, err := ref(nx, "table "+t.Name+" next_tables["+an+"]")
				if err != nil {
					return err
				}
				switch an {
				case "__HIT__":
					td.hitMiss, td.nextHit = true, target
					continue
				case "__MISS__":
					td.hitMiss, td.nextMiss = true, target
					continue
				}
				a := td.actionByName(an)
				if a == nil || a.name != an {
					return fmt.Errorf("pipeline %q: table %q: next_tables names action %q, which is not one of its actions", jp.Name, t.Name, an)
				}
				td.next[a.idx], td.nextSet[a.idx] = target, true
			}
		}
		init, err := ref(jp.InitTable, "init_table")
		if err != nil {
			return err
		}
		if err := p.checkAcyclic(init, jp.Name); err != nil {
			return err
		}
		switch jp.Name {
		case "ingress":
			p.ingress = init
		case "egress":
			p.egress = init
			for _, n := range nodes {
				p.egressNeeds |= n.needs
				if n.table >= 0 {
					td := p.tables[n.table]
					p.egressNeeds |= td.defaultCall.act.needs
					for _, a := range td.actions {
						p.egressNeeds |= a.needs
					}
				}
			}
		default:
			return fmt.Errorf("pipeline %q: v1model has only ingress and egress", jp.Name)
		}
	}
	return nil
}

func (p *Program) compileDeparser(j *bmv2json.Program) error {
	if len(j.Deparsers) != 1 {
		return fmt.Errorf("the program has %d deparsers; v1model has one", len(j.Deparsers))
	}
	d := &j.Deparsers[0]
	if len(d.Primitives) > 0 {
		return fmt.Errorf("deparser %q: deparser primitives (%s) are not supported", d.Name, d.Primitives[0].Op)
	}
	for _, name := range d.Order {
		hi, ok := p.headerByName[name]
		if !ok {
			return fmt.Errorf("deparser %q: unknown header %q", d.Name, name)
		}
		p.deparseOrder = append(p.deparseOrder, hi)
	}
	return nil
}

func (p *Program) compileChecksums(j *bmv2json.Program) error {
	for _, cj := range j.Checksums {
		if len(cj.Target) != 2 {
			return fmt.Errorf("checksum %q: target %v is not [header, field]", cj.Name, cj.Target)
		}
		fi, err := p.lookupField(cj.Target[0], cj.Target[1])
		if err != nil {
			return fmt.Errorf("checksum %q: target: %w", cj.Name, err)
		}
		calc, ok := p.calcs[cj.Calculation]
		if !ok {
			return fmt.Errorf("checksum %q: unknown calculation %q", cj.Name, cj.Calculation)
		}
		ck := &checksum{name: cj.Name, target: &p.fields[fi], calc: calc, verify: cj.Verify, update: cj.Update}
		if ck.target.words != 1 {
			return fmt.Errorf("checksum %q: target %s is wider than 64 bits", cj.Name, ck.target.name)
		}
		if cj.IfCond != nil {
			c := &compiler{p: p, where: fmt.Sprintf("checksum %q condition", cj.Name)}
			if ck.cond, err = c.boolean(cj.IfCond); err != nil {
				return err
			}
		}
		p.checksums = append(p.checksums, ck)
	}
	return nil
}

func (p *Program) verifyChecksums(k *pkt) {
	for _, ck := range p.checksums {
		if !ck.verify || (ck.cond != nil && !ck.cond(k)) {
			continue
		}
		v := ck.calc.compute(k) & mask64(ck.target.width)
		if v != k.f[ck.target.slot] {
			k.cksumErr = true
			if k.tr != nil {
				k.tr.printf("Checksum '%s' is not correct", ck.name)
			}
		}
	}
}

func (p *Program) updateChecksums(k *pkt) {
	for _, ck := range p.checksums {
		if !ck.update || (ck.cond != nil && !ck.cond(k)) {
			continue
		}
		k.f[ck.target.slot] = ck.calc.compute(k) & mask64(ck.target.width)
		k.src[ck.target.hdr] = 0
	}
}

// deparse writes the valid headers in deparser order, then the payload,
// into k.out.
func (p *Program) deparse(k *pkt) []byte {
	p.updateChecksums(k)
	out := k.out[:0]
	for _, hi := range p.deparseOrder {
		if !k.valid[hi] {
			continue
		}
		n := k.headerBits(hi) / 8
		start := len(out)
		if src := int(k.src[hi]) - 1; src >= 0 {
			out = append(out, k.buf[src:src+n]...)
			continue
		}
		// 8 bytes of slack let emitSimple and putBits use whole-word
		// stores
		out = slices.Grow(out, n+8)[:start+n+8]
		if h := &p.headers[hi]; h.simple != nil {
			k.emitSimple(h, out[start:])
		} else {
			clear(out[start:])
			bit := start * 8
			for _, fi := range p.headers[hi].fields {
				f := &p.fields[fi]
				w := f.width
				if f.varbit {
					w = int(k.vlen[hi])
				}
				k.emitField(f, out, bit, w)
				bit += w
			}
		}
		out = out[:start+n]
	}
	out = append(out, k.buf[k.off:]...)
	if k.truncLen > 0 && k.truncLen < len(out) {
		out = out[:k.truncLen]
	}
	k.out = out
	return out
}

func (p *Program) markRead(fi int) {
	if fi >= 0 && fi < len(p.read) {
		p.read[fi] = true
	}
}

// reads reports whether compiled code reads field fi.
func (p *Program) reads(fi int) bool { return fi >= 0 && p.read[fi] }

// checkAcyclic rejects a control whose graph loops: a packet would never
// leave it.
func (p *Program) checkAcyclic(init *node, pipeline string) error {
	const (
		unseen = iota
		active
		done
	)
	state := map[*node]int{}
	var visit func(n *node) error
	visit = func(n *node) error {
		if n == nil || state[n] == done {
			return nil
		}
		if state[n] == active {
			return fmt.Errorf("pipeline %q: node %q is reached again from itself (a loop)", pipeline, n.name)
		}
		state[n] = active
		var succ []*node
		if n.table >= 0 {
			td := p.tables[n.table]
			succ = append(succ, td.baseNext, td.nextHit, td.nextMiss)
			succ = append(succ, td.next...)
		} else {
			succ = append(succ, n.t, n.f)
		}
		for _, s := range succ {
			if err := visit(s); err != nil {
				return err
			}
		}
		state[n] = done
		return nil
	}
	return visit(init)
}

// learnList is the field list a digest sends.
type learnList struct {
	name   string
	id     int
	fields []int
}

// Digests describes the program's learn lists (digest types).
func (p *Program) Digests() []DigestInfo {
	var out []DigestInfo
	for _, ll := range p.learnLists {
		di := DigestInfo{Name: ll.name, ID: ll.id}
		for _, fi := range ll.fields {
			di.Fields = append(di.Fields, ParamInfo{Name: p.fields[fi].name, Bitwidth: p.fields[fi].width})
		}
		out = append(out, di)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// DigestInfo describes a learn list: its fields in order.
type DigestInfo struct {
	Name   string
	ID     int
	Fields []ParamInfo
}

// sendDigest delivers the digest a packet requested in ingress.
func (s *Switch) sendDigest(k *pkt) {
	ll := s.prog.learnLists[int(k.learnID)]
	k.learnID = 0
	if ll == nil || s.cfg.Digest == nil {
		return
	}
	k.materialize(^uint64(0))
	d := Digest{List: ll.name, ID: ll.id, Values: make([][]byte, len(ll.fields))}
	for i, fi := range ll.fields {
		f := &s.prog.fields[fi]
		d.Values[i] = make([]byte, (f.width+7)/8)
		k.fieldBytes(f, d.Values[i])
	}
	if k.tr != nil {
		k.tr.printf("Sending digest %q", ll.name)
	}
	s.cfg.Digest(d)
}
