package engine

import (
	"fmt"
	"math/big"
	"sync"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// maxParserSteps bounds the states one parse may visit: a parser that loops
// without consuming input fails with ParserTimeout instead of hanging.
const maxParserSteps = 4096

type parseState struct {
	name     string
	ops      []func(k *pkt) bool // false: a parser error was raised
	key      []func(k *pkt, dst []byte)
	keyLens  []int
	keyBytes int
	cases    []parseCase
	// short, when set, are the fields of a key of at most 8 bytes and
	// only fields, with no case of a value set: the key is then read as
	// one big-endian number, which each case compares (valueU, maskU).
	short []*field
}

type parseCase struct {
	def         bool
	value, mask []byte      // value is pre-masked; mask nil for an exact case
	vset        int         // index of the parser value set (see Switch.vsets), or -1
	next        *parseState // nil: accept
	// valueU and maskU are value and mask as numbers (parseState.short).
	valueU, maskU uint64
}

// vsetDecl declares a parser value set; each Switch holds the values.
type vsetDecl struct {
	name  string
	idx   int
	bytes int
}

// parseVset is a switch's parser value set, filled by the control plane.
type parseVset struct {
	mu  sync.RWMutex
	set map[string]bool
}

// errorCodes holds the error numbers the parser raises itself.
type errorCodes struct {
	noError, packetTooShort, noMatch, stackOutOfBounds, headerTooShort, parserTimeout, parserInvalidArgument int32
}

func (p *Program) compileParser(j *bmv2json.Program) error {
	codes := map[string]int32{}
	for _, e := range j.Errors {
		codes[e.Name] = int32(e.Value)
	}
	code := func(name string, def int32) int32 {
		if v, ok := codes[name]; ok {
			return v
		}
		return def
	}
	p.errs = errorCodes{
		noError: code("NoError", 0), packetTooShort: code("PacketTooShort", 1), noMatch: code("NoMatch", 2),
		stackOutOfBounds: code("StackOutOfBounds", 3), headerTooShort: code("HeaderTooShort", 4),
		parserTimeout: code("ParserTimeout", 5), parserInvalidArgument: code("ParserInvalidArgument", 6),
	}
	p.errorNames = map[int32]string{}
	for name, v := range codes {
		p.errorNames[v] = name
	}
	p.vsets = map[string]*vsetDecl{}
	for i, v := range j.ParseVsets {
		p.vsets[v.Name] = &vsetDecl{name: v.Name, idx: i, bytes: (v.CompressedBitwidth + 7) / 8}
	}
	if len(j.Parsers) == 0 {
		return fmt.Errorf("the program has no parser")
	}
	if len(j.Parsers) > 1 {
		return fmt.Errorf("the program has %d parsers; v1model has one", len(j.Parsers))
	}
	jp := &j.Parsers[0]
	states := map[string]*parseState{}
	for i := range jp.ParseStates {
		states[jp.ParseStates[i].Name] = &parseState{name: jp.ParseStates[i].Name}
	}
	for i := range jp.ParseStates {
		js := &jp.ParseStates[i]
		st := states[js.Name]
		for oi := range js.ParserOps {
			op := &js.ParserOps[oi]
			c := &compiler{p: p, where: fmt.Sprintf("parser state %q, op %d (%s)", js.Name, oi, op.Op)}
			f, err := c.parserOp(op)
			if err != nil {
				return err
			}
			switch op.Op {
			case "extract", "extract_VL", "verify", "shift", "advance":
			default:
				if touched := p.touchedHeaders(op.Parameters); len(touched) > 0 {
					run := f
					f = func(k *pkt) bool { k.touch(touched); return run(k) }
				}
			}
			st.ops = append(st.ops, f)
		}
		c := &compiler{p: p, where: fmt.Sprintf("parser state %q, transition key", js.Name)}
		var keyFields []*field // nil where an element is not a field
		for _, kv := range js.TransitionKey {
			f, n, fld, err := c.selectKey(kv)
			if err != nil {
				return err
			}
			keyFields = append(keyFields, fld)
			st.key = append(st.key, f)
			st.keyLens = append(st.keyLens, n)
			st.keyBytes += n
		}
		p.maxKeyBytes = max(p.maxKeyBytes, st.keyBytes)
		for ti, t := range js.Transitions {
			pc := parseCase{vset: -1}
			if t.NextState != nil {
				nx, ok := states[*t.NextState]
				if !ok {
					return fmt.Errorf("parser state %q, transition %d: unknown next state %q", js.Name, ti, *t.NextState)
				}
				pc.next = nx
			}
			typ := t.Type
			if typ == "" {
				typ = "hexstr"
				if t.Value == nil || *t.Value == "default" {
					typ = "default"
				}
			}
			switch typ {
			case "default":
				pc.def = true
			case "hexstr":
				if t.Value == nil {
					return fmt.Errorf("parser state %q, transition %d: hexstr case without value", js.Name, ti)
				}
				v, err := hexBytes(*t.Value, st.keyBytes)
				if err != nil {
					return fmt.Errorf("parser state %q, transition %d: value: %w", js.Name, ti, err)
				}
				pc.value = v
				if t.Mask != nil {
					m, err := hexBytes(*t.Mask, st.keyBytes)
					if err != nil {
						return fmt.Errorf("parser state %q, transition %d: mask: %w", js.Name, ti, err)
					}
					pc.mask = m
					for b := range v {
						v[b] &= m[b]
					}
				}
			case "parse_vset":
				if t.Value == nil {
					return fmt.Errorf("parser state %q, transition %d: parse_vset case without a value set", js.Name, ti)
				}
				vs, ok := p.vsets[*t.Value]
				if !ok {
					return fmt.Errorf("parser state %q, transition %d: unknown parse_vset %q", js.Name, ti, *t.Value)
				}
				if vs.bytes != st.keyBytes {
					return fmt.Errorf("parser state %q, transition %d: parse_vset %q is %d bytes wide, the key %d", js.Name, ti, *t.Value, vs.bytes, st.keyBytes)
				}
				pc.vset = vs.idx
				if t.Mask != nil {
					m, err := hexBytes(*t.Mask, st.keyBytes)
					if err != nil {
						return fmt.Errorf("parser state %q, transition %d: mask: %w", js.Name, ti, err)
					}
					pc.mask = m
				}
			default:
				return fmt.Errorf("parser state %q, transition %d: unsupported transition type %q", js.Name, ti, typ)
			}
			st.cases = append(st.cases, pc)
		}
		st.shorten(keyFields)
	}
	init, ok := states[jp.InitState]
	if !ok {
		return fmt.Errorf("parser %q: unknown init_state %q", jp.Name, jp.InitState)
	}
	p.initState = init
	return nil
}

// hexBytes converts a hex string into exactly n big-endian bytes.
func hexBytes(s string, n int) ([]byte, error) {
	z, err := parseHex(s)
	if err != nil {
		return nil, err
	}
	if z.Sign() < 0 {
		return nil, fmt.Errorf("negative value %s", s)
	}
	if (z.BitLen()+7)/8 > n {
		return nil, fmt.Errorf("value %s does not fit in %d bytes", s, n)
	}
	return z.FillBytes(make([]byte, n)), nil
}

// selectKey compiles an element of a transition key: what writes it into
// its n bytes of the key, and the field it is when it is one.
func (c *compiler) selectKey(v *bmv2json.Value) (write func(k *pkt, dst []byte), n int, f *field, err error) {
	switch v.Type {
	case "field":
		hdr, name, ok := v.FieldRef()
		if !ok {
			return nil, 0, nil, c.errorf("bad field %s", v)
		}
		fi, err := c.p.lookupField(hdr, name)
		if err != nil {
			return nil, 0, nil, c.errorf("%v", err)
		}
		c.p.markRead(fi)
		f := &c.p.fields[fi]
		n := (f.width + 7) / 8
		return func(k *pkt, dst []byte) { k.fieldBytes(f, dst) }, n, f, nil
	case "stack_field":
		last, proto, off, err := c.stackField(v)
		if err != nil {
			return nil, 0, nil, err
		}
		c.markFieldOfType(proto, off)
		fields, headers := c.p.fields, c.p.headers
		n := (fields[proto.fields[off]].width + 7) / 8
		return func(k *pkt, dst []byte) { k.fieldBytes(&fields[headers[last(k)].fields[off]], dst) }, n, nil, nil
	case "lookahead":
		if len(v.Ints) != 2 || v.Ints[0] < 0 || v.Ints[1] <= 0 {
			return nil, 0, nil, c.errorf("bad lookahead %s", v)
		}
		off, w := v.Ints[0], v.Ints[1]
		n := (w + 7) / 8
		return func(k *pkt, dst []byte) { k.peek(off, w, dst) }, n, nil, nil
	}
	return nil, 0, nil, c.errorf("unsupported transition key %s", v)
}

// shorten sets st.short when its key (fields: each element's field, nil
// for another kind) and cases allow.
func (st *parseState) shorten(fields []*field) {
	if st.keyBytes > 8 {
		return
	}
	for _, f := range fields {
		if f == nil {
			return
		}
	}
	for _, pc := range st.cases {
		if pc.vset >= 0 {
			return
		}
	}
	for i := range st.cases {
		pc := &st.cases[i]
		pc.valueU, pc.maskU = shortKey(pc.value), mask64(8*st.keyBytes)
		if pc.mask != nil {
			pc.maskU = shortKey(pc.mask)
		}
	}
	st.short = fields
	if st.short == nil {
		st.short = []*field{} // a state without a key: only its default case matches
	}
}

// shortSelect is the key of a state with st.short as a number: shortKey
// of what the key's writers put in its bytes.
func (k *pkt) shortSelect(st *parseState) uint64 {
	var v uint64
	for i, f := range st.short {
		w := k.f[f.slot]
		if f.isValid {
			w = 0
			if k.valid[f.hdr] {
				w = 1
			}
		}
		v = v<<(8*uint(st.keyLens[i])) | w&mask64(8*st.keyLens[i])
	}
	return v
}

// peek copies w bits at bit offset off of the unparsed data into dst
// (right-aligned, ceil(w/8) bytes); bits past the end read as zero.
func (k *pkt) peek(off, w int, dst []byte) {
	data := k.buf[k.off:]
	clear(dst)
	pad := len(dst)*8 - w
	for b := 0; b < w; {
		n := min(w-b, 56)
		var v uint64
		start := off + b
		if (start+n+7)/8 <= len(data) {
			v = getBits(data, start, n)
		} else {
			for i := 0; i < n; i++ {
				bit := start + i
				v <<= 1
				if bit/8 < len(data) && data[bit/8]&(0x80>>uint(bit%8)) != 0 {
					v |= 1
				}
			}
		}
		putBits(dst, pad+b, n, v)
		b += n
	}
}

func (c *compiler) parserOp(op *bmv2json.Primitive) (func(k *pkt) bool, error) {
	ps := op.Parameters
	errs := &c.p.errs
	switch op.Op {
	case "extract", "extract_VL":
		var length func(k *pkt) uint64
		if op.Op == "extract_VL" {
			if len(ps) != 2 {
				return nil, c.errorf("takes 2 parameters, got %d", len(ps))
			}
			l, err := c.uintParam(ps[1])
			if err != nil {
				return nil, err
			}
			length = l
		} else if len(ps) != 1 {
			return nil, c.errorf("takes 1 parameter, got %d", len(ps))
		}
		target := ps[0]
		switch target.Type {
		case "regular", "header":
			hi, ok := c.p.headerByName[target.Str]
			if !ok {
				return nil, c.errorf("unknown header %q", target.Str)
			}
			if err := c.checkVL(hi, length != nil); err != nil {
				return nil, err
			}
			return func(k *pkt) bool { return k.extract(hi, length) }, nil
		case "stack":
			si, ok := c.p.stackByName[target.Str]
			if !ok {
				return nil, c.errorf("unknown header stack %q", target.Str)
			}
			hs := c.p.stacks[si].headers
			if err := c.checkVL(hs[0], length != nil); err != nil {
				return nil, err
			}
			return func(k *pkt) bool {
				n := k.next[si]
				if int(n) >= len(hs) {
					k.perr = errs.stackOutOfBounds
					return false
				}
				if !k.extract(hs[n], length) {
					return false
				}
				k.next[si]++
				return true
			}, nil
		case "union_stack":
			if len(target.Names) != 2 {
				return nil, c.errorf("union_stack target %s is not [stack, member]", target)
			}
			si, ok := c.p.unionStackByName[target.Names[0]]
			if !ok {
				return nil, c.errorf("unknown header union stack %q", target.Names[0])
			}
			us := c.p.unionStacks[si].unions
			member := -1
			for i, m := range c.p.unions[us[0]].members {
				if m == target.Names[1] {
					member = i
				}
			}
			if member < 0 {
				return nil, c.errorf("header union stack %q has no member %q", target.Names[0], target.Names[1])
			}
			unions := c.p.unions
			return func(k *pkt) bool {
				n := k.unext[si]
				if int(n) >= len(us) {
					k.perr = errs.stackOutOfBounds
					return false
				}
				if !k.extract(unions[us[n]].headers[member], length) {
					return false
				}
				k.unext[si]++
				return true
			}, nil
		}
		return nil, c.errorf("unsupported extract target %s", target)
	case "set":
		if len(ps) != 2 {
			return nil, c.errorf("takes 2 parameters, got %d", len(ps))
		}
		if ps[1].Type == "lookahead" {
			dst, _, err := c.lvalue(ps[0])
			if err != nil || dst == nil {
				return nil, c.errorf("set from lookahead needs a field destination: %v", err)
			}
			if len(ps[1].Ints) != 2 || ps[1].Ints[0] < 0 || ps[1].Ints[1] <= 0 {
				return nil, c.errorf("bad lookahead %s", ps[1])
			}
			off, w := ps[1].Ints[0], ps[1].Ints[1]
			return func(k *pkt) bool {
				if len(k.buf)-k.off < (off+w+7)/8 {
					k.perr = errs.packetTooShort
					return false
				}
				k.lookaheadInto(dst, off, w)
				return true
			}, nil
		}
		f, err := c.assign(ps[0], ps[1])
		if err != nil {
			return nil, err
		}
		return func(k *pkt) bool { f(k); return true }, nil
	case "verify":
		if len(ps) != 2 {
			return nil, c.errorf("takes 2 parameters, got %d", len(ps))
		}
		cond, err := c.boolean(ps[0])
		if err != nil {
			return nil, err
		}
		code, err := c.uintParam(ps[1])
		if err != nil {
			return nil, err
		}
		return func(k *pkt) bool {
			if cond(k) {
				return true
			}
			k.perr = int32(code(k))
			return false
		}, nil
	case "primitive":
		if len(ps) != 1 || ps[0].Kind != bmv2json.KindPrim {
			return nil, c.errorf("takes one primitive call")
		}
		f, err := c.primitive(ps[0].Prim, 1)
		if err != nil {
			return nil, err
		}
		if len(c.regs) > 0 {
			regs := &c.regs // rewritten to lock groups by groupRegisters
			c.p.regUsers = append(c.p.regUsers, regs)
			return func(k *pkt) bool {
				k.lockRegisters(*regs)
				defer k.unlockRegisters(*regs)
				f(k)
				return true
			}, nil
		}
		return func(k *pkt) bool { f(k); return true }, nil
	case "shift", "advance":
		if len(ps) != 1 {
			return nil, c.errorf("takes 1 parameter, got %d", len(ps))
		}
		amount, err := c.uintParam(ps[0])
		if err != nil {
			return nil, err
		}
		bytesUnit := op.Op == "shift"
		return func(k *pkt) bool {
			n := amount(k)
			if !bytesUnit {
				if n%8 != 0 {
					k.perr = errs.parserInvalidArgument
					return false
				}
				n /= 8
			}
			if uint64(len(k.buf)-k.off) < n {
				k.perr = errs.packetTooShort
				return false
			}
			k.off += int(n)
			return true
		}, nil
	}
	return nil, c.errorf("unsupported parser op %q", op.Op)
}

func (c *compiler) checkVL(hi int, vl bool) error {
	h := &c.p.headers[hi]
	if vl && h.varbit < 0 {
		return c.errorf("extract_VL of header %q, which has no varbit field", h.name)
	}
	if !vl && h.varbit >= 0 {
		return c.errorf("extract of header %q, which has a varbit field, without a length", h.name)
	}
	return nil
}

// extract parses header hi at the current offset; length, for a varbit
// header, gives the varbit field's length in bits.
func (k *pkt) extract(hi int, length func(k *pkt) uint64) bool {
	h := &k.prog.headers[hi]
	vbits := 0
	if length != nil {
		n := length(k)
		if n%8 != 0 {
			k.perr = k.prog.errs.parserInvalidArgument
			return false
		}
		if n > 1<<20 {
			k.perr = k.prog.errs.packetTooShort
			return false
		}
		vbits = int(n)
	}
	total := (h.fixedBit + vbits) / 8
	if len(k.buf)-k.off < total {
		k.perr = k.prog.errs.packetTooShort
		return false
	}
	if length != nil && total > h.maxBytes {
		k.perr = k.prog.errs.headerTooShort
		return false
	}
	data := k.buf[k.off:]
	if h.lazyBit != 0 {
		k.lazy |= h.lazyBit
	} else if h.simple != nil {
		k.extractSimple(h, data)
	} else {
		bit := 0
		for _, fi := range h.fields {
			f := &k.prog.fields[fi]
			w := f.width
			if f.varbit {
				w = vbits
				clear(k.f[f.slot : f.slot+f.words])
			}
			k.extractField(f, data, bit, w)
			bit += w
		}
	}
	k.vlen[hi] = int32(vbits)
	k.setValid(hi)
	k.clean(hi, k.off)
	k.off += total
	if k.tr != nil {
		k.tr.printf("Extracting header '%s'", h.name)
	}
	return true
}

// lookaheadInto sets field f from w bits at bit offset off of the unparsed data.
func (k *pkt) lookaheadInto(f *field, off, w int) {
	data := k.buf[k.off:]
	if w <= 64 && f.words == 1 {
		k.f[f.slot] = getBits(data, off, w) & mask64(f.width)
		return
	}
	z := k.tmpB.SetInt64(0)
	for b := 0; b < w; {
		n := min(w-b, 64)
		z.Lsh(z, uint(n))
		z.Or(z, k.tmpA.SetUint64(getBits(data, off+b, n)))
		b += n
	}
	if f.signed && z.Bit(w-1) == 1 {
		z.Sub(z, new(big.Int).Lsh(big.NewInt(1), uint(w)))
	}
	k.setBig(f, z)
}

// parse runs the parser over k.buf from offset 0.
func (p *Program) parse(k *pkt) {
	k.perr = p.errs.noError
	st := p.initState
	for steps := 0; st != nil; steps++ {
		if steps == maxParserSteps {
			k.perr = p.errs.parserTimeout
			break
		}
		if k.tr != nil {
			k.tr.printf("Parser 'parser' entering state '%s'", st.name)
		}
		ok := true
		for _, op := range st.ops {
			if !op(k) {
				ok = false
				break
			}
		}
		if !ok {
			if k.tr != nil {
				k.tr.printf("Exception while parsing: %s", p.errorName(k.perr))
			}
			break
		}
		var next *parseState
		matched := false
		if st.short != nil {
			u := k.shortSelect(st)
			for ci := range st.cases {
				if pc := &st.cases[ci]; pc.def || u&pc.maskU == pc.valueU {
					next, matched = pc.next, true
					break
				}
			}
		} else {
			key := k.key[:st.keyBytes]
			o := 0
			for i, kf := range st.key {
				kf(k, key[o:o+st.keyLens[i]])
				o += st.keyLens[i]
			}
			for ci := range st.cases {
				if pc := &st.cases[ci]; pc.matches(k, key) {
					next, matched = pc.next, true
					break
				}
			}
		}
		if !matched {
			k.perr = p.errs.noMatch
			if k.tr != nil {
				k.tr.printf("Exception while parsing: %s", p.errorName(k.perr))
			}
			break
		}
		st = next
	}
	p.verifyChecksums(k)
}

func (pc *parseCase) matches(k *pkt, key []byte) bool {
	if pc.def {
		return true
	}
	if pc.vset >= 0 {
		probe := key
		if pc.mask != nil {
			probe = k.key2[:len(key)]
			for i := range key {
				probe[i] = key[i] & pc.mask[i]
			}
		}
		vs := k.sw.vsets[pc.vset]
		vs.mu.RLock()
		ok := vs.set[string(probe)]
		vs.mu.RUnlock()
		return ok
	}
	if pc.mask == nil {
		return string(key) == string(pc.value)
	}
	for i := range key {
		if key[i]&pc.mask[i] != pc.value[i] {
			return false
		}
	}
	return true
}

func (p *Program) errorName(code int32) string {
	if n, ok := p.errorNames[code]; ok {
		return n
	}
	return fmt.Sprintf("error %d", code)
}
