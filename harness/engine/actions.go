package engine

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// action is a compiled compound action.
type action struct {
	name     string
	id       int
	idx      int // index in Program.actions; -1 for the implicit empty action
	params   []paramInfo
	argWords int
	prims    []func(k *pkt)
	jumps    bool   // some primitive is a _jump or _jump_if_zero, which set k.pc
	regs     []int  // lock groups of the registers the action uses, held while it runs
	touches  []int  // the headers its primitives name (clean.go)
	needs    uint64 // the lazily extracted headers its primitives name (lazy.go)
}

// run executes the action with its data (words per parameter).
func (a *action) run(k *pkt, args []uint64) {
	k.args = args
	if k.lazy&a.needs != 0 {
		k.materialize(a.needs)
	}
	k.touch(a.touches)
	if len(a.regs) > 0 {
		k.lockRegisters(a.regs)
		defer k.unlockRegisters(a.regs)
	}
	if !a.jumps {
		for _, prim := range a.prims {
			prim(k)
		}
		return
	}
	// p4c's loops (for, in actions) jump backwards; a budget of steps stops
	// one that never ends, which would hang bmv2 instead.
	for k.pc, k.steps = 0, 0; k.pc < len(a.prims) && k.failed == ""; k.steps++ {
		if k.steps == maxActionSteps {
			k.failed = fmt.Sprintf("action %s ran %d primitives without finishing (a loop that does not end)", a.name, maxActionSteps)
			return
		}
		pc := k.pc
		k.pc++
		a.prims[pc](k)
	}
}

// maxActionSteps bounds the primitives one run of an action with jumps executes.
const maxActionSteps = 1 << 20

func (p *Program) compileAction(j *bmv2json.Action) (*action, error) {
	a := &action{name: j.Name, id: j.ID}
	for _, rd := range j.RuntimeData {
		if rd.Bitwidth <= 0 {
			return nil, fmt.Errorf("action %q: parameter %q has bitwidth %d", j.Name, rd.Name, rd.Bitwidth)
		}
		w := (rd.Bitwidth + 63) / 64
		a.params = append(a.params, paramInfo{name: rd.Name, width: rd.Bitwidth, slot: a.argWords, words: w})
		a.argWords += w
	}
	c := &compiler{p: p, params: a.params}
	var named, all []*bmv2json.Value
	for i := range j.Primitives {
		pr := &j.Primitives[i]
		named = append(named, mayWrite(pr)...)
		all = append(all, pr.Parameters...)
		c.where = fmt.Sprintf("action %q, primitive %d (%s)%s", j.Name, i, pr.Op, srcInfo(pr.SourceInfo))
		c.pc = i
		f, err := c.primitive(pr, len(j.Primitives))
		if err != nil {
			return nil, err
		}
		a.prims = append(a.prims, f)
		a.jumps = a.jumps || pr.Op == "_jump" || pr.Op == "_jump_if_zero"
	}
	a.touches = p.touchedHeaders(named)
	a.needs = p.lazyMask(all...)
	a.regs = c.regs
	if len(a.regs) > 0 {
		p.regUsers = append(p.regUsers, &a.regs)
	}
	return a, nil
}

func srcInfo(si *bmv2json.SourceInfo) string {
	if si == nil {
		return ""
	}
	return fmt.Sprintf(" at %s:%d %q", si.Filename, si.Line, si.SourceFragment)
}

func (c *compiler) nparams(pr *bmv2json.Primitive, n int) error {
	if len(pr.Parameters) != n {
		return c.errorf("takes %d parameters, got %d", n, len(pr.Parameters))
	}
	return nil
}

// lvalue resolves an assignable field: a field, a field of a stack element
// chosen at run time, or the last element's field.
func (c *compiler) lvalue(v *bmv2json.Value) (static *field, dyn func(k *pkt) *field, err error) {
	for v != nil && v.Kind == bmv2json.KindInner {
		v = v.Inner
	}
	if v == nil {
		return nil, nil, c.errorf("missing destination")
	}
	switch {
	case v.Type == "field":
		if len(v.Names) != 2 {
			return nil, nil, c.errorf("field reference %s is not [header, field]", v)
		}
		fi, err := c.p.lookupField(v.Names[0], v.Names[1])
		if err != nil {
			return nil, nil, c.errorf("%v", err)
		}
		if c.p.fields[fi].isValid {
			return nil, nil, c.errorf("cannot assign to %s", c.p.fields[fi].name)
		}
		return &c.p.fields[fi], nil, nil
	case v.Kind == bmv2json.KindOp && v.Op.Op == "access_field":
		h, err := c.any(v.Op.Left)
		if err != nil {
			return nil, nil, err
		}
		proto := c.protoHeader(v.Op.Left)
		if h.kind != kHeader || proto == nil || v.Op.Right == nil || v.Op.Right.Kind != bmv2json.KindInt || v.Op.Right.Int < 0 || v.Op.Right.Int >= len(proto.fields) {
			return nil, nil, c.errorf("bad access_field destination %s", v)
		}
		off, hf := v.Op.Right.Int, h.h
		fields, headers := c.p.fields, c.p.headers
		return nil, func(k *pkt) *field { return &fields[headers[hf(k)].fields[off]] }, nil
	case v.Type == "stack_field":
		last, _, off, err := c.stackField(v)
		if err != nil {
			return nil, nil, err
		}
		fields, headers := c.p.fields, c.p.headers
		return nil, func(k *pkt) *field { return &fields[headers[last(k)].fields[off]] }, nil
	}
	return nil, nil, c.errorf("cannot assign to %s", v)
}

// assign compiles dst = src.
func (c *compiler) assign(dv, sv *bmv2json.Value) (func(k *pkt), error) {
	dst, dyn, err := c.lvalue(dv)
	if err != nil {
		return nil, err
	}
	src, err := c.data(sv)
	if err != nil {
		return nil, err
	}
	if dst != nil {
		if dst.varbit {
			return nil, c.errorf("assign to varbit field %s (use assign_VL)", dst.name)
		}
		return c.store(dst, src), nil
	}
	if src.fast != nil {
		fe := src.fast
		return func(k *pkt) {
			f := dyn(k)
			if f.words == 1 {
				k.f[f.slot] = uint64(fe(k)) & mask64(f.width)
				return
			}
			k.setBig(f, k.tmpA.SetInt64(fe(k)))
		}, nil
	}
	s := src.slow
	return func(k *pkt) { k.setBig(dyn(k), s(k)) }, nil
}

// headerParam resolves a header parameter (possibly a stack element).
func (c *compiler) headerParam(v *bmv2json.Value) (func(k *pkt) int, error) {
	h, _, err := c.headerRef(v)
	return h, err
}

func (c *compiler) stackParam(v *bmv2json.Value) (si int, unionStack bool, err error) {
	a, err := c.any(v)
	if err != nil {
		return 0, false, err
	}
	switch a.kind {
	case kStack:
		return a.stack, false, nil
	case kUnionStack:
		return a.stack, true, nil
	}
	return 0, false, c.errorf("expected a header stack, got %s", v)
}

func (c *compiler) named(v *bmv2json.Value, typ string) (string, error) {
	if v == nil || v.Type != typ || v.Kind != bmv2json.KindString {
		return "", c.errorf("expected a %s, got %s", typ, v)
	}
	return v.Str, nil
}

// uintParam compiles a parameter evaluated as an unsigned 64-bit value.
func (c *compiler) uintParam(v *bmv2json.Value) (func(k *pkt) uint64, error) {
	d, err := c.data(v)
	if err != nil {
		return nil, err
	}
	return c.uintOf(d), nil
}

// uintOf evaluates d as an unsigned index or amount.
func (c *compiler) uintOf(d *dataExpr) func(k *pkt) uint64 {
	if d.fast != nil {
		f := d.fast
		return func(k *pkt) uint64 { return uint64(f(k)) }
	}
	s := d.slow
	return func(k *pkt) uint64 { return truncBig(s(k)) }
}

// primitive compiles one primitive call; n is the action's length, for jumps.
func (c *compiler) primitive(pr *bmv2json.Primitive, n int) (func(k *pkt), error) {
	ps := pr.Parameters
	switch pr.Op {
	case "assign", "modify_field":
		if err := c.nparams(pr, 2); err != nil {
			return nil, err
		}
		if ps[0].Type == "header" {
			return c.assignHeader(ps[0], ps[1])
		}
		return c.assign(ps[0], ps[1])
	case "assign_VL":
		if err := c.nparams(pr, 2); err != nil {
			return nil, err
		}
		return c.assignVL(ps[0], ps[1])
	case "assign_header", "copy_header":
		if err := c.nparams(pr, 2); err != nil {
			return nil, err
		}
		return c.assignHeader(ps[0], ps[1])
	case "assign_union":
		if err := c.nparams(pr, 2); err != nil {
			return nil, err
		}
		d, err := c.any(ps[0])
		if err != nil {
			return nil, err
		}
		s, err := c.any(ps[1])
		if err != nil {
			return nil, err
		}
		if d.kind != kUnion || s.kind != kUnion {
			return nil, c.errorf("assign_union needs two header unions")
		}
		du, su, unions := d.u, s.u, c.p.unions
		return func(k *pkt) {
			a, b := unions[du(k)].headers, unions[su(k)].headers
			for i := range a {
				k.copyHeader(a[i], b[i])
			}
		}, nil
	case "assign_header_stack", "assign_union_stack":
		if err := c.nparams(pr, 2); err != nil {
			return nil, err
		}
		d, du, err := c.stackParam(ps[0])
		if err != nil {
			return nil, err
		}
		s, su, err := c.stackParam(ps[1])
		if err != nil {
			return nil, err
		}
		if du != su {
			return nil, c.errorf("assigning between a header stack and a union stack")
		}
		if !du {
			dh, sh := c.p.stacks[d].headers, c.p.stacks[s].headers
			return func(k *pkt) {
				k.next[d] = k.next[s]
				for i := range dh {
					k.copyHeader(dh[i], sh[i])
				}
			}, nil
		}
		dus, sus, unions := c.p.unionStacks[d].unions, c.p.unionStacks[s].unions, c.p.unions
		return func(k *pkt) {
			k.unext[d] = k.unext[s]
			for i := range dus {
				a, b := unions[dus[i]].headers, unions[sus[i]].headers
				for j := range a {
					k.copyHeader(a[j], b[j])
				}
			}
		}, nil
	case "add_header", "setValid", "add_header_fast":
		if err := c.nparams(pr, 1); err != nil {
			return nil, err
		}
		h, err := c.headerParam(ps[0])
		if err != nil {
			return nil, err
		}
		return func(k *pkt) {
			hi := h(k)
			if !k.valid[hi] {
				k.zeroHeader(hi)
				k.setValid(hi)
				k.lenReg += k.headerBits(hi) / 8
			}
		}, nil
	case "remove_header", "setInvalid":
		if err := c.nparams(pr, 1); err != nil {
			return nil, err
		}
		h, err := c.headerParam(ps[0])
		if err != nil {
			return nil, err
		}
		return func(k *pkt) {
			hi := h(k)
			if k.valid[hi] {
				k.lenReg -= k.headerBits(hi) / 8
				k.valid[hi] = false
			}
		}, nil
	case "mark_to_drop", "drop":
		if len(ps) > 1 {
			return nil, c.errorf("takes at most 1 parameter, got %d", len(ps))
		}
		spec, mg := c.p.std.egressSpec, c.p.std.mcastGrp
		return func(k *pkt) {
			k.setU(spec, uint64(k.sw.cfg.DropPort))
			if mg >= 0 {
				k.setU(mg, 0)
			}
		}, nil
	case "exit":
		return func(k *pkt) { k.exit = true }, nil
	case "no_op":
		return func(*pkt) {}, nil
	case "_jump":
		if err := c.nparams(pr, 1); err != nil {
			return nil, err
		}
		t, err := c.jumpTarget(ps[0], n)
		if err != nil {
			return nil, err
		}
		return func(k *pkt) { k.pc = t }, nil
	case "_jump_if_zero":
		if err := c.nparams(pr, 2); err != nil {
			return nil, err
		}
		cond, err := c.data(ps[0])
		if err != nil {
			return nil, err
		}
		t, err := c.jumpTarget(ps[1], n)
		if err != nil {
			return nil, err
		}
		isTrue := c.dataToBool(cond)
		return func(k *pkt) {
			if !isTrue(k) {
				k.pc = t
			}
		}, nil
	case "push", "pop":
		if err := c.nparams(pr, 2); err != nil {
			return nil, err
		}
		si, isUnion, err := c.stackParam(ps[0])
		if err != nil {
			return nil, err
		}
		cnt, err := c.uintParam(ps[1])
		if err != nil {
			return nil, err
		}
		return c.stackShift(pr.Op == "push", si, isUnion, cnt), nil
	case "register_read":
		if err := c.nparams(pr, 3); err != nil {
			return nil, err
		}
		return c.registerRead(ps[0], ps[1], ps[2])
	case "register_write":
		if err := c.nparams(pr, 3); err != nil {
			return nil, err
		}
		return c.registerWrite(ps[0], ps[1], ps[2])
	case "count":
		if err := c.nparams(pr, 2); err != nil {
			return nil, err
		}
		return c.count(ps[0], ps[1])
	case "execute_meter":
		if err := c.nparams(pr, 3); err != nil {
			return nil, err
		}
		return c.executeMeter(ps[0], ps[1], ps[2])
	case "clone_ingress_pkt_to_egress", "clone_egress_pkt_to_egress":
		if err := c.nparams(pr, 2); err != nil {
			return nil, err
		}
		sess, err := c.uintParam(ps[0])
		if err != nil {
			return nil, err
		}
		fl, err := c.fieldListParam(ps[1])
		if err != nil {
			return nil, err
		}
		return func(k *pkt) {
			k.cloneSess = int32(sess(k)) + 1
			k.cloneList = fl
		}, nil
	case "resubmit", "recirculate":
		if err := c.nparams(pr, 1); err != nil {
			return nil, err
		}
		fl, err := c.fieldListParam(ps[0])
		if err != nil {
			return nil, err
		}
		if pr.Op == "resubmit" {
			return func(k *pkt) { k.resubmit = fl }, nil
		}
		return func(k *pkt) { k.recirculate = fl }, nil
	case "modify_field_with_hash_based_offset":
		if err := c.nparams(pr, 4); err != nil {
			return nil, err
		}
		return c.hashOffset(ps)
	case "modify_field_rng_uniform":
		if err := c.nparams(pr, 3); err != nil {
			return nil, err
		}
		dst, _, err := c.lvalue(ps[0])
		if err != nil || dst == nil {
			return nil, c.errorf("modify_field_rng_uniform needs a field destination: %v", err)
		}
		lo, err := c.uintParam(ps[1])
		if err != nil {
			return nil, err
		}
		hi, err := c.uintParam(ps[2])
		if err != nil {
			return nil, err
		}
		return func(k *pkt) {
			a, b := lo(k), hi(k)
			v := a
			if b > a {
				v = a + rand.Uint64N(b-a+1)
			}
			k.setBig(dst, k.tmpA.SetUint64(v))
		}, nil
	case "truncate":
		if err := c.nparams(pr, 1); err != nil {
			return nil, err
		}
		l, err := c.uintParam(ps[0])
		if err != nil {
			return nil, err
		}
		return func(k *pkt) { k.truncLen = int(min(l(k), 1<<20)) }, nil
	case "assert", "assume":
		if err := c.nparams(pr, 1); err != nil {
			return nil, err
		}
		cond, err := c.boolean(ps[0])
		if err != nil {
			return nil, err
		}
		where := c.where
		op := pr.Op
		return func(k *pkt) {
			if !cond(k) {
				k.failed = op + " failed: " + where
			}
		}, nil
	case "log_msg":
		return c.logMsg(ps)
	case "generate_digest":
		if err := c.nparams(pr, 2); err != nil {
			return nil, err
		}
		d, err := c.data(ps[1])
		if err != nil {
			return nil, err
		}
		if d.cval == nil || !d.cval.IsInt64() {
			return nil, c.errorf("learn list id must be a constant, got %s", ps[1])
		}
		id := int32(d.cval.Int64())
		if _, ok := c.p.learnLists[int(id)]; !ok {
			return nil, c.errorf("no learn list with id %d", id)
		}
		return func(k *pkt) { k.learnID = id }, nil
	}
	return nil, c.errorf("unsupported primitive %q", pr.Op)
}

func (c *compiler) jumpTarget(v *bmv2json.Value, n int) (int, error) {
	d, err := c.data(v)
	if err != nil {
		return 0, err
	}
	if d.cval == nil || !d.cval.IsInt64() || d.cval.Int64() < 0 || d.cval.Int64() > int64(n) {
		return 0, c.errorf("jump target %s is not a primitive of the action (%d primitives)", v, n)
	}
	return int(d.cval.Int64()), nil
}

func (c *compiler) fieldListParam(v *bmv2json.Value) (int32, error) {
	d, err := c.data(v)
	if err != nil {
		return 0, err
	}
	if d.cval == nil || !d.cval.IsInt64() || d.cval.Int64() < 0 {
		return 0, c.errorf("field list id must be a constant, got %s", v)
	}
	id := int(d.cval.Int64())
	if id == 0 {
		return 0, nil
	}
	if _, ok := c.p.fieldLists[id]; !ok {
		return 0, c.errorf("no field list with id %d", id)
	}
	return int32(id), nil
}

func (c *compiler) assignHeader(dv, sv *bmv2json.Value) (func(k *pkt), error) {
	d, dp, err := c.headerRef(dv)
	if err != nil {
		return nil, err
	}
	s, sp, err := c.headerRef(sv)
	if err != nil {
		return nil, err
	}
	if dp != nil && sp != nil && dp.typeName != sp.typeName {
		return nil, c.errorf("assign_header between header types %q and %q", dp.typeName, sp.typeName)
	}
	return func(k *pkt) { k.copyHeader(d(k), s(k)) }, nil
}

func (c *compiler) assignVL(dv, sv *bmv2json.Value) (func(k *pkt), error) {
	field := func(v *bmv2json.Value) (*field, error) {
		hdr, name, ok := v.FieldRef()
		if !ok {
			return nil, c.errorf("assign_VL needs field references, got %s", v)
		}
		fi, err := c.p.lookupField(hdr, name)
		if err != nil {
			return nil, c.errorf("%v", err)
		}
		return &c.p.fields[fi], nil
	}
	d, err := field(dv)
	if err != nil {
		return nil, err
	}
	s, err := field(sv)
	if err != nil {
		return nil, err
	}
	if !d.varbit || !s.varbit {
		return nil, c.errorf("assign_VL between %s and %s: both must be varbit", d.name, s.name)
	}
	return func(k *pkt) {
		n := min(d.words, s.words)
		clear(k.f[d.slot : d.slot+d.words])
		copy(k.f[d.slot:d.slot+n], k.f[s.slot:s.slot+n])
		k.vlen[d.hdr] = min(k.vlen[s.hdr], int32(d.width))
	}, nil
}

// stackShift compiles push_front / pop_front with P4_16 semantics.
func (c *compiler) stackShift(push bool, si int, isUnion bool, cnt func(k *pkt) uint64) func(k *pkt) {
	// elements are header indices, or for union stacks whole unions
	var size int
	var swap func(k *pkt, i, j int)
	var invalidate func(k *pkt, i int)
	var next func(k *pkt) *int32
	if !isUnion {
		hs := c.p.stacks[si].headers
		size = len(hs)
		swap = func(k *pkt, i, j int) { k.swapHeaders(hs[i], hs[j]) }
		invalidate = func(k *pkt, i int) { k.valid[hs[i]] = false }
		next = func(k *pkt) *int32 { return &k.next[si] }
	} else {
		us, unions := c.p.unionStacks[si].unions, c.p.unions
		size = len(us)
		swap = func(k *pkt, i, j int) {
			a, b := unions[us[i]].headers, unions[us[j]].headers
			for x := range a {
				k.swapHeaders(a[x], b[x])
			}
		}
		invalidate = func(k *pkt, i int) {
			for _, h := range unions[us[i]].headers {
				k.valid[h] = false
			}
		}
		next = func(k *pkt) *int32 { return &k.unext[si] }
	}
	if push {
		return func(k *pkt) {
			num := int(min(cnt(k), uint64(size)))
			if num == 0 {
				return
			}
			nx := next(k)
			*nx = int32(min(size, int(*nx)+num))
			for i := size - 1; i > num-1; i-- {
				swap(k, i, i-num)
			}
			for i := 0; i < num; i++ {
				invalidate(k, i)
			}
		}
	}
	return func(k *pkt) {
		num := int(min(cnt(k), uint64(size)))
		if num == 0 {
			return
		}
		nx := next(k)
		*nx -= int32(min(int(*nx), num))
		i := 0
		for ; i < size-num; i++ {
			swap(k, i, i+num)
		}
		for ; i < size; i++ {
			invalidate(k, i)
		}
	}
}

func (c *compiler) logMsg(ps []*bmv2json.Value) (func(k *pkt), error) {
	if len(ps) < 1 || ps[0].Kind != bmv2json.KindString {
		return nil, c.errorf("log_msg needs a format string")
	}
	format := ps[0].Str
	var args []*dataExpr
	if len(ps) > 1 {
		vec := ps[1]
		if vec.Kind == bmv2json.KindRaw {
			var items []*bmv2json.Value
			if err := jsonUnmarshal(vec.Raw, &items); err != nil {
				return nil, c.errorf("log_msg arguments: %v", err)
			}
			for _, it := range items {
				d, err := c.data(it)
				if err != nil {
					return nil, err
				}
				args = append(args, d)
			}
		}
	}
	slows := make([]func(k *pkt) *big.Int, len(args))
	for i, a := range args {
		slows[i] = c.slowOf(a)
	}
	return func(k *pkt) {
		if k.tr == nil {
			return
		}
		var b strings.Builder
		rest := format
		for _, s := range slows {
			i := strings.Index(rest, "{}")
			if i < 0 {
				break
			}
			b.WriteString(rest[:i])
			b.WriteString(s(k).String())
			rest = rest[i+2:]
		}
		b.WriteString(rest)
		k.tr.printf("log_msg: %s", b.String())
	}, nil
}
