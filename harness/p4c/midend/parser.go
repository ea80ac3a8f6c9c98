package midend

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// packetV is the packet_in / packet_out parameter of a parser or deparser.
type packetV struct{}

func (*packetV) isVal() {}

// lowerParser lowers the v1model parser, inlining sub-parsers.
func (l *lowerer) lowerParser(pd *ast.ParserDecl, shared map[int]val) error {
	sc := newScope(nil, cpName(pd.Annos, pd.Name, ""))
	l.bindTopCtorArgs(pd.CtorParams, sc)
	sc.m[pd.Params[0]] = &packetV{}
	for i, v := range shared {
		sc.m[pd.Params[i]] = v
	}
	l.out.Parser = &Parser{}
	var initOps []bmv2json.Primitive
	init := &actx{l: l, sc: sc, prims: &initOps, inParser: true}
	if err := l.parserLocals(pd, init); err != nil {
		return err
	}
	start, err := l.parserStates(pd, sc, func(s *ast.StateDecl) string { return s.Name }, "")
	if err != nil {
		return err
	}
	l.out.Parser.Init = start.Name
	start.Ops = append(initOps, start.Ops...)
	return nil
}

// parserLocals creates a parser's local variables and instances; their
// initializers are lowered through a.
func (l *lowerer) parserLocals(pd *ast.ParserDecl, a *actx) error {
	for _, d := range pd.Locals {
		switch x := d.(type) {
		case *ast.VarDecl:
			if err := a.declStmt(&ast.DeclStmt{Pos: x.Pos, Decl: x}); err != nil {
				return err
			}
		case *ast.InstanceDecl:
			o, err := l.allocInstance(x, a.sc.prefix)
			if err != nil {
				return err
			}
			o.declScope = a.sc
			a.sc.m[x] = o
		case *ast.ValueSetDecl:
			vs, err := l.valueSet(x, a.sc.prefix)
			if err != nil {
				return err
			}
			a.sc.m[x] = &vsetV{set: vs}
		}
	}
	return nil
}

// parserStates lowers the states of pd in scope sc; stateName gives the
// bmv2 name of each state and accept continues at acceptNext ("" for the
// end of parsing). It returns the lowered start state.
func (l *lowerer) parserStates(pd *ast.ParserDecl, sc *scope, stateName func(*ast.StateDecl) string, acceptNext string) (*ParseState, error) {
	names := map[*ast.StateDecl]string{}
	for _, s := range pd.States {
		names[s] = stateName(s)
	}
	target := func(id *ast.Ident) (string, error) {
		sd, ok := id.Decl.(*ast.StateDecl)
		if !ok {
			return "", unsupported(id, "transition to %s", id.Name)
		}
		switch {
		case sd == ast.AcceptState || sd.Name == "accept" && names[sd] == "":
			return acceptNext, nil
		case sd == ast.RejectState || sd.Name == "reject" && names[sd] == "":
			return "", nil
		}
		n, ok := names[sd]
		if !ok {
			return "", unsupported(id, "transition to state %s of another parser", sd.Name)
		}
		return n, nil
	}
	var start *ParseState
	for _, s := range pd.States {
		ps := &ParseState{Name: names[s]}
		l.names[ps.Name] = true
		if s.Name == "start" {
			start = ps
		}
		l.out.Parser.States = append(l.out.Parser.States, ps)
		cur, err := l.stateStmts(s.Stmts, sc, ps, names[s])
		if err != nil {
			return nil, err
		}
		if err := l.transition(s, sc, cur, target); err != nil {
			return nil, err
		}
	}
	if start == nil {
		return nil, srcError(pd, "parser %s has no start state", pd.Name)
	}
	return start, nil
}

// stateStmts lowers the statements of a parser state starting in cur and
// returns the state the last of them ends in: sub-parser calls and
// if-statements split the state (bmv2 parser states have no branches
// except their transition).
func (l *lowerer) stateStmts(stmts []ast.Stmt, sc *scope, cur *ParseState, stateName string) (*ParseState, error) {
	for _, st := range stmts {
		switch x := st.(type) {
		case *ast.CallStmt:
			if x.Call.Kind == ast.CallParserApply {
				next, err := l.inlineSubparser(x.Call, sc, cur, stateName)
				if err != nil {
					return nil, err
				}
				cur = next
				continue
			}
			if ix := runtimeIndexedExtract(x.Call); ix != nil {
				next, err := l.stateExtractIndexed(ix, sc, cur, stateName)
				if err != nil {
					return nil, err
				}
				cur = next
				continue
			}
		case *ast.BlockStmt:
			next, err := l.stateStmts(x.Stmts, sc, cur, stateName)
			if err != nil {
				return nil, err
			}
			cur = next
			continue
		case *ast.IfStmt:
			next, err := l.stateIf(x, sc, cur, stateName)
			if err != nil {
				return nil, err
			}
			cur = next
			continue
		}
		a := &actx{l: l, sc: sc, prims: &cur.Ops, inParser: true}
		if err := a.stmt(st); err != nil {
			return nil, err
		}
	}
	return cur, nil
}

// runtimeIndexedExtract returns the stack element of `pkt.extract(hs[i])`
// when i is not a compile-time constant, else nil.
func runtimeIndexedExtract(c *ast.Call) *ast.Index {
	if c.Kind != ast.CallExternMethod || c.Method == nil || c.Method.Name != "extract" || len(c.Args) != 1 {
		return nil
	}
	ix, ok := c.Args[0].Value.(*ast.Index)
	if !ok || ix.Index.Info().Const != nil {
		return nil
	}
	if _, ok := ix.X.Info().Type.(*ast.StackType); !ok {
		return nil
	}
	return ix
}

// stateExtractIndexed lowers extract(hs[i]) with i known only at run time,
// which bmv2 cannot extract: cur selects on i, a state per element
// extracts hs[k], all continuing in a new state; an i out of range ends
// parsing, as a reject does (p4c unrolls such parsers to the same effect).
func (l *lowerer) stateExtractIndexed(ix *ast.Index, sc *scope, cur *ParseState, stateName string) (*ParseState, error) {
	a := &actx{l: l, sc: sc, prims: &cur.Ops, inParser: true}
	st, ok := ix.X.Info().Type.(*ast.StackType)
	if !ok {
		return nil, unsupported(ix, "extract into this value")
	}
	base, err := a.value(ix.X)
	if err != nil {
		return nil, err
	}
	sv, ok := base.(*stackV)
	if !ok || len(sv.elem) != st.Size {
		return nil, unsupported(ix, "extract into an element of this stack chosen at run time")
	}
	idx, err := a.data(ix.Index)
	if err != nil {
		return nil, err
	}
	it, ok := scalarType(ix.Index.Info().Type)
	if !ok || it.width == 0 || it.width > 32 {
		return nil, unsupported(ix.Index, "a stack index of type %v", ix.Index.Info().Type)
	}
	tmp := l.tempScalar(&ast.BitsType{Width: it.width})
	a.emit(prim("set", tmp.ref, param(idx)))
	cont := &ParseState{Name: l.uniqueName(stateName + "_0")}
	cur.Key, cur.KeyWidths = []*bmv2json.Value{tmp.ref}, []int{it.width}
	cur.Transitions = nil
	for k, h := range sv.elem {
		if uint(it.width) < 63 && int64(k) >= int64(1)<<uint(it.width) {
			break
		}
		es := &ParseState{Name: l.uniqueName(fmt.Sprintf("%s_extract%d", stateName, k))}
		es.Ops = append(es.Ops, prim("extract", bmv2json.Named("regular", h.h.Name)))
		es.Transitions = []*Transition{{Default: true, Next: cont.Name}}
		l.out.Parser.States = append(l.out.Parser.States, es)
		cur.Transitions = append(cur.Transitions, &Transition{Value: "0x" + fmt.Sprintf("%0*x", (it.width+7)/8*2, k), Next: es.Name})
	}
	cur.Transitions = append(cur.Transitions, &Transition{Default: true})
	l.out.Parser.States = append(l.out.Parser.States, cont)
	return cont, nil
}

// stateIf lowers an if-statement in a parser state: the condition becomes
// the transition key of cur, each branch a state of its own, both
// continuing in a new state that the rest of the statements go to.
func (l *lowerer) stateIf(x *ast.IfStmt, sc *scope, cur *ParseState, stateName string) (*ParseState, error) {
	a := &actx{l: l, sc: sc, prims: &cur.Ops, inParser: true}
	c, err := a.data(x.Cond)
	if err != nil {
		return nil, err
	}
	tmp := l.tempScalar(ast.TBool)
	a.emit(prim("set", tmp.ref, param(c)))
	cont := &ParseState{Name: l.uniqueName(stateName + "_0")}
	branch := func(s ast.Stmt, suffix string) (string, error) {
		bs := &ParseState{Name: l.uniqueName(stateName + suffix)}
		l.out.Parser.States = append(l.out.Parser.States, bs)
		end := bs
		if s != nil {
			var stmts []ast.Stmt
			if b, ok := s.(*ast.BlockStmt); ok {
				stmts = b.Stmts
			} else {
				stmts = []ast.Stmt{s}
			}
			if end, err = l.stateStmts(stmts, sc, bs, bs.Name); err != nil {
				return "", err
			}
		}
		end.Transitions = []*Transition{{Default: true, Next: cont.Name}}
		return bs.Name, nil
	}
	thenName, err := branch(x.Then, "_then")
	if err != nil {
		return nil, err
	}
	elseName, err := branch(x.Else, "_else")
	if err != nil {
		return nil, err
	}
	cur.Key, cur.KeyWidths = []*bmv2json.Value{tmp.ref}, []int{1}
	cur.Transitions = []*Transition{{Value: "0x01", Next: thenName}, {Default: true, Next: elseName}}
	l.out.Parser.States = append(l.out.Parser.States, cont)
	return cont, nil
}

// inlineSubparser lowers `p.apply(args)` inside state cur: cur jumps to the
// sub-parser's start, whose accept continues in a new state that runs the
// copy-out and the rest of the calling state.
func (l *lowerer) inlineSubparser(call *ast.Call, sc *scope, cur *ParseState, stateName string) (*ParseState, error) {
	a := &actx{l: l, sc: sc, prims: &cur.Ops, inParser: true}
	rv, err := a.value(call.Receiver())
	if err != nil {
		return nil, err
	}
	o, ok := rv.(*objV)
	if !ok {
		return nil, unsupported(call, "apply on this value")
	}
	spd, ok := o.typ.Decl.(*ast.ParserDecl)
	if !ok {
		return nil, unsupported(call, "apply of %s", o.typ.Decl.DeclName())
	}
	sub := newScope(nil, o.name)
	if err := l.bindCtorParams(o, spd.CtorParams, sub); err != nil {
		return nil, err
	}
	done, err := a.bindParams(call, spd.Params, sub, false, nil)
	if err != nil {
		return nil, err
	}
	if err := l.parserLocals(spd, &actx{l: l, sc: sub, prims: &cur.Ops, inParser: true}); err != nil {
		return nil, err
	}
	cont := &ParseState{Name: l.uniqueName(stateName + "_0")}
	prefix := strings.ReplaceAll(spd.Name+"_"+o.inst.Name, ".", "_")
	subStart, err := l.parserStates(spd, sub, func(s *ast.StateDecl) string {
		return l.uniqueName(prefix + "_" + s.Name)
	}, cont.Name)
	if err != nil {
		return nil, err
	}
	n := subStart.Name
	cur.Transitions = []*Transition{{Default: true, Next: n}}
	l.out.Parser.States = append(l.out.Parser.States, cont)
	ca := &actx{l: l, sc: sc, prims: &cont.Ops, inParser: true}
	if err := done(ca); err != nil {
		return nil, err
	}
	return cont, nil
}

// transition lowers the transition of state s into ps.
func (l *lowerer) transition(s *ast.StateDecl, sc *scope, ps *ParseState, target func(*ast.Ident) (string, error)) error {
	tr := s.Transition
	if tr == nil {
		ps.Transitions = []*Transition{{Default: true}}
		return nil
	}
	if tr.Next != nil {
		n, err := target(tr.Next)
		if err != nil {
			return err
		}
		ps.Transitions = []*Transition{{Default: true, Next: n}}
		return nil
	}
	sel := tr.Select
	a := &actx{l: l, sc: sc, prims: &ps.Ops, inParser: true}
	for _, e := range sel.Exprs {
		k, w, err := l.selectKey(a, e)
		if err != nil {
			return err
		}
		ps.Key = append(ps.Key, k)
		ps.KeyWidths = append(ps.KeyWidths, w)
	}
	for _, cs := range sel.Cases {
		next, err := target(cs.State)
		if err != nil {
			return err
		}
		var ts []*Transition
		if vs := valueSetKeyset(cs, sc); vs != nil {
			ts = []*Transition{{ValueSet: vs.Name}}
		} else if ts, err = selectCase(cs, ps.KeyWidths); err != nil {
			return err
		}
		for _, t := range ts {
			t.Next = next
		}
		ps.Transitions = append(ps.Transitions, ts...)
		if len(ts) == 1 && ts[0].Default {
			break
		}
	}
	if n := len(ps.Transitions); n == 0 || !ps.Transitions[n-1].Default {
		// No match: p4c's bmv2 back end rejects with error.NoMatch; the
		// packet goes on to ingress, as for any reject on v1model.
		ps.Transitions = append(ps.Transitions, &Transition{Default: true})
	}
	return nil
}

// selectKey lowers one select expression to a transition key component:
// a field, a lookahead, or a temporary computed before the transition.
func (l *lowerer) selectKey(a *actx, e ast.Expr) (*bmv2json.Value, int, error) {
	v, err := a.value(e)
	if err != nil {
		return nil, 0, err
	}
	s, ok := v.(*scalarV)
	if !ok {
		return nil, 0, unsupported(e, "select on a non-scalar value")
	}
	st, _ := scalarType(s.t)
	if st.width == 0 {
		return nil, 0, unsupported(e, "select on a value without a width")
	}
	if isFieldRef(s.ref) || s.ref.Type == "lookahead" || s.ref.Type == "stack_field" {
		return s.ref, st.width, nil
	}
	t := l.tempScalar(s.t)
	a.emit(prim("set", t.ref, param(s.ref)))
	return t.ref, st.width, nil
}

// keyPart is one (value, mask) alternative of a keyset component.
type keyPart struct{ v, m *big.Int }

// rangeParts splits lo..hi into aligned power-of-two blocks, each a
// value/mask pair (bmv2 transitions have no ranges; p4c does the same).
func rangeParts(lo, hi *big.Int, w int) []keyPart {
	full := mask(w)
	var out []keyPart
	cur := new(big.Int).Set(lo)
	one := big.NewInt(1)
	for cur.Cmp(hi) <= 0 {
		k := 0
		for k < w {
			size := new(big.Int).Lsh(one, uint(k+1))
			if new(big.Int).Mod(cur, size).Sign() != 0 {
				break
			}
			end := new(big.Int).Add(cur, size)
			end.Sub(end, one)
			if end.Cmp(hi) > 0 {
				break
			}
			k++
		}
		block := new(big.Int).Lsh(one, uint(k))
		m := new(big.Int).Xor(full, new(big.Int).Sub(block, one))
		out = append(out, keyPart{v: new(big.Int).Set(cur), m: m})
		cur.Add(cur, block)
	}
	return out
}

// keysetParts returns the value/mask alternatives of one keyset component
// and whether they are masked.
func keysetParts(k ast.Expr, w int) ([]keyPart, bool, error) {
	full := mask(w)
	if x, ok := k.(*ast.Binary); ok && x.Op == ast.OpRange {
		lo, ok1 := bigOf(x.X)
		hi, ok2 := bigOf(x.Y)
		if !ok1 || !ok2 || lo.Sign() < 0 || hi.Cmp(full) > 0 {
			return nil, false, unsupported(k, "range keyset whose bounds are not constants within the key width")
		}
		if lo.Cmp(hi) > 0 {
			return nil, false, nil
		}
		parts := rangeParts(lo, hi, w)
		if len(parts) > 64 {
			return nil, false, unsupported(k, "range keyset needing %d masked transitions", len(parts))
		}
		return parts, true, nil
	}
	v, m, err := keyValueMask(k, w)
	if err != nil {
		return nil, false, err
	}
	return []keyPart{{v: new(big.Int).And(v, full), m: m}}, m.Cmp(full) != 0, nil
}

// valueSet lowers a parser value set declared in the parser named prefix.
func (l *lowerer) valueSet(d *ast.ValueSetDecl, prefix string) (*ValueSet, error) {
	size, ok := bigOf(d.Size)
	if !ok {
		return nil, unsupported(d.Size, "value_set size that is not a constant")
	}
	vs := &ValueSet{Name: l.uniqueName(cpName(d.Annos, d.Name, prefix)), Pos: d.Pos, Annos: d.Annos, Size: int(size.Int64())}
	var field func(name string, t ast.Type, annos ast.Annotations) error
	field = func(name string, t ast.Type, annos ast.Annotations) error {
		if sd, ok := t.(*ast.StructDecl); ok && sd.Kind == ast.KindStruct {
			for _, f := range sd.Fields {
				if err := field(f.Name, f.Type.Resolved(), f.Annos); err != nil {
					return err
				}
			}
			return nil
		}
		st, ok := scalarType(t)
		if !ok || st.width == 0 {
			return unsupported(d, "value_set element of type %v", t)
		}
		f := ValueSetField{Name: name, Width: st.width, Annos: annos}
		if e, ok := t.(*ast.EnumDecl); ok {
			f.Enum = e.Name
		}
		vs.Fields = append(vs.Fields, f)
		return nil
	}
	if err := field("", d.Type.Resolved(), nil); err != nil {
		return nil, err
	}
	l.out.ValueSets = append(l.out.ValueSets, vs)
	return vs, nil
}

// valueSetKeyset returns the value set a select case's keyset names, if
// it names one.
func valueSetKeyset(cs *ast.SelectCase, sc *scope) *ValueSet {
	if len(cs.Keys) != 1 {
		return nil
	}
	id, ok := cs.Keys[0].(*ast.Ident)
	if !ok {
		return nil
	}
	if v, ok := sc.lookup(id.Decl); ok {
		if vs, ok := v.(*vsetV); ok {
			return vs.set
		}
	}
	return nil
}

// selectCase encodes a keyset as bmv2 transition values/masks: each key
// component takes whole bytes; a range becomes several transitions.
func selectCase(cs *ast.SelectCase, widths []int) ([]*Transition, error) {
	if len(cs.Keys) == 1 {
		switch cs.Keys[0].(type) {
		case *ast.Default, *ast.DontCare:
			return []*Transition{{Default: true}}, nil
		}
	}
	if len(cs.Keys) != len(widths) {
		return nil, srcError(cs, "keyset has %d components, select has %d", len(cs.Keys), len(widths))
	}
	type partial struct {
		val, msk string
		masked   bool
	}
	acc := []partial{{}}
	for i, k := range cs.Keys {
		parts, masked, err := keysetParts(k, widths[i])
		if err != nil {
			return nil, err
		}
		bytes := (widths[i] + 7) / 8
		var next []partial
		for _, a := range acc {
			for _, p := range parts {
				next = append(next, partial{
					val:    a.val + fmt.Sprintf("%0*x", bytes*2, p.v),
					msk:    a.msk + fmt.Sprintf("%0*x", bytes*2, p.m),
					masked: a.masked || masked,
				})
			}
		}
		acc = next
	}
	var out []*Transition
	for _, a := range acc {
		t := &Transition{Value: "0x" + a.val}
		if a.masked {
			t.Mask = "0x" + a.msk
		}
		out = append(out, t)
	}
	return out, nil
}

// packetIn lowers packet_in methods (extract, lookahead, advance).
func (a *actx) packetIn(c *ast.Call) (val, error) {
	if !a.inParser {
		return nil, unsupported(c, "packet_in.%s outside the parser", c.Method.Name)
	}
	switch c.Method.Name {
	case "extract":
		if len(c.Args) == 2 {
			return a.extractVarbit(c)
		}
		if len(c.Args) != 1 {
			return nil, unsupported(c, "extract with %d arguments", len(c.Args))
		}
		arg := c.Args[0].Value
		if ht, ok := arg.Info().Type.(*ast.StructDecl); ok && ht.Kind == ast.KindHeader && declHasVarbit(ht) {
			return nil, srcError(arg, "header %s has a varbit field: extract it with two arguments, extract(hdr, lengthInBits)", ht.Name)
		}
		if _, ok := arg.(*ast.DontCare); ok {
			// extract(_): parse into a scratch header nobody reads.
			ht, ok := arg.Info().Type.(*ast.StructDecl)
			if !ok {
				for _, t := range c.TypeBindings {
					if sd, isS := t.(*ast.StructDecl); isS {
						ht = sd
					}
				}
			}
			if ht == nil || ht.Kind != ast.KindHeader {
				return nil, unsupported(arg, "extract into _ without a header type")
			}
			v, err := a.l.alloc(arg, ht, "dontcare_"+ht.Name, "")
			if err != nil {
				return nil, err
			}
			a.emit(prim("extract", bmv2json.Named("regular", v.(*headerV).h.Name)))
			return nil, nil
		}
		if m, ok := arg.(*ast.Member); ok && m.Kind == ast.MemberStackNext {
			sv, err := a.value(m.X)
			if err != nil {
				return nil, err
			}
			st, ok := sv.(*stackV)
			if !ok {
				return nil, unsupported(m, ".next of a non-stack")
			}
			a.emit(prim("extract", bmv2json.Named("stack", st.s.Name)))
			return nil, nil
		}
		if m, ok := arg.(*ast.Member); ok && m.Kind == ast.MemberField {
			if next, ok := m.X.(*ast.Member); ok && next.Kind == ast.MemberStackNext {
				// hs.next.member of a header union stack.
				sv, err := a.value(next.X)
				if err != nil {
					return nil, err
				}
				if us, ok := sv.(*unionStackV); ok {
					a.emit(prim("extract", &bmv2json.Value{Type: "union_stack", Kind: bmv2json.KindNames, Names: []string{us.s.Name, m.Name}}))
					return nil, nil
				}
			}
		}
		v, err := a.value(arg)
		if err != nil {
			return nil, err
		}
		h, ok := v.(*headerV)
		if !ok || h.dyn != nil {
			return nil, unsupported(arg, "extract into this value")
		}
		a.emit(prim("extract", bmv2json.Named("regular", h.h.Name)))
		return nil, nil
	case "lookahead":
		t := c.Info().Type
		if sd, ok := t.(*ast.StructDecl); ok && (sd.Kind == ast.KindHeader || sd.Kind == ast.KindStruct) {
			return a.lookaheadValue(c, sd)
		}
		st, ok := scalarType(t)
		if !ok {
			return nil, unsupported(c, "lookahead of type %v", t)
		}
		return &scalarV{ref: &bmv2json.Value{Type: "lookahead", Kind: bmv2json.KindInts, Ints: []int{0, st.width}}, t: t}, nil
	case "advance":
		n, err := a.argData(c, 0)
		if err != nil {
			return nil, err
		}
		a.emit(prim("advance", param(n)))
		return nil, nil
	}
	return nil, unsupported(c, "packet_in.%s", c.Method.Name)
}

// lookaheadValue lowers lookahead<T>() of a header or a struct (of
// headers, stacks and bit fields) as p4c does: one lookahead of all its
// bits into a temporary, then each field its slice, each header valid.
func (a *actx) lookaheadValue(c *ast.Call, sd *ast.StructDecl) (val, error) {
	if declHasVarbit(sd) {
		return nil, unsupported(c, "lookahead of %s with a varbit field", sd.Name)
	}
	v, err := a.l.alloc(c, sd, "lookahead_"+sd.Name, "")
	if err != nil {
		return nil, err
	}
	type leaf struct {
		ref   *bmv2json.Value
		width int
	}
	var leaves []leaf
	var headers []*headerV
	var walk func(v val) error
	walk = func(v val) error {
		switch x := v.(type) {
		case *headerV:
			if declHasVarbit(x.decl) {
				return unsupported(c, "lookahead of a header with a varbit field")
			}
			headers = append(headers, x)
			for _, f := range a.l.headerFields(x) {
				st, _ := scalarType(f.t)
				leaves = append(leaves, leaf{bmv2json.Field(x.h.Name, f.name), st.width})
			}
		case *stackV:
			for _, e := range x.elem {
				if err := walk(e); err != nil {
					return err
				}
			}
		case *structV:
			for _, f := range x.decl.Fields {
				if err := walk(x.fields[f.Name]); err != nil {
					return err
				}
			}
		case *scalarV:
			st, _ := scalarType(x.t)
			leaves = append(leaves, leaf{x.ref, st.width})
		default:
			return unsupported(c, "lookahead of %s (a %s inside it)", sd.Name, kindOf(v))
		}
		return nil
	}
	if err := walk(v); err != nil {
		return nil, err
	}
	width := 0
	for _, lf := range leaves {
		width += lf.width
	}
	bits := a.l.tempScalar(&ast.BitsType{Width: width})
	a.emit(prim("set", bits.ref, &bmv2json.Value{Type: "lookahead", Kind: bmv2json.KindInts, Ints: []int{0, width}}))
	for _, h := range headers {
		a.emitPrim(prim("add_header", bmv2json.Named("header", h.h.Name)))
	}
	off := 0
	for _, lf := range leaves {
		r := bits.ref
		if sh := width - off - lf.width; sh > 0 {
			r = exprOp(">>", r, hexInt(int64(sh), 0))
		}
		a.emit(prim("set", lf.ref, param(exprOp("&", r, maskHex(lf.width)))))
		off += lf.width
	}
	return v, nil
}

// extractVarbit lowers extract(hdr, bits) into bmv2's extract_VL: bits is
// the length of the header's varbit field.
func (a *actx) extractVarbit(c *ast.Call) (val, error) {
	arg := c.Args[0].Value
	ht, ok := arg.Info().Type.(*ast.StructDecl)
	if !ok || ht.Kind != ast.KindHeader || !declHasVarbit(ht) {
		return nil, srcError(arg, "two-argument extract needs a header with a varbit field, not %v", arg.Info().Type)
	}
	n, err := a.data(c.Args[1].Value)
	if err != nil {
		return nil, err
	}
	var dst *bmv2json.Value
	if m, ok := arg.(*ast.Member); ok && m.Kind == ast.MemberStackNext {
		sv, err := a.value(m.X)
		if err != nil {
			return nil, err
		}
		st, ok := sv.(*stackV)
		if !ok {
			return nil, unsupported(m, ".next of a non-stack")
		}
		dst = bmv2json.Named("stack", st.s.Name)
	} else if us := a.unionStackNext(arg); us != nil {
		// hs.next.member of a header union stack, as bmv2 writes it.
		dst = &bmv2json.Value{Type: "union_stack", Kind: bmv2json.KindNames, Names: []string{us.s.Name, arg.(*ast.Member).Name}}
	} else {
		v, err := a.value(arg)
		if err != nil {
			return nil, err
		}
		h, ok := v.(*headerV)
		if !ok || h.dyn != nil || h.h == nil {
			return nil, unsupported(arg, "extract into this value")
		}
		dst = bmv2json.Named("regular", h.h.Name)
	}
	a.emit(prim("extract_VL", dst, bmv2json.Wrap(n)))
	return nil, nil
}

// unionStackNext returns the header union stack of `hs.next.member`, or
// nil when arg is not that.
func (a *actx) unionStackNext(arg ast.Expr) *unionStackV {
	m, ok := arg.(*ast.Member)
	if !ok || m.Kind != ast.MemberField {
		return nil
	}
	next, ok := m.X.(*ast.Member)
	if !ok || next.Kind != ast.MemberStackNext {
		return nil
	}
	sv, err := a.value(next.X)
	if err != nil {
		return nil
	}
	us, _ := sv.(*unionStackV)
	return us
}

// declHasVarbit reports whether a header declaration has a varbit field.
func declHasVarbit(d *ast.StructDecl) bool {
	for _, f := range d.Fields {
		if _, ok := f.Type.Resolved().(*ast.VarbitType); ok {
			return true
		}
	}
	return false
}

// lowerDeparser collects the emit order of the deparser.
func (l *lowerer) lowerDeparser(d ast.Decl, hdrs val) error {
	cd, ok := d.(*ast.ControlDecl)
	if !ok || len(cd.Params) != 2 {
		return unsupported(d, "deparser must be a control with 2 parameters")
	}
	dp := &Deparser{Name: "deparser", Pos: cd.Pos}
	sc := newScope(nil, cd.Name)
	sc.m[cd.Params[0]] = &packetV{}
	sc.m[cd.Params[1]] = hdrs
	a := &actx{l: l, sc: sc, prims: new([]bmv2json.Primitive)}
	var emit func(n ast.Node, v val) error
	emit = func(n ast.Node, v val) error {
		switch x := v.(type) {
		case *headerV:
			if x.dyn != nil {
				return unsupported(n, "emitting a stack element chosen at run time")
			}
			dp.Order = append(dp.Order, x.h.Name)
		case *stackV:
			for _, e := range x.elem {
				dp.Order = append(dp.Order, e.h.Name)
			}
		case *unionV:
			for _, h := range x.u.Members {
				dp.Order = append(dp.Order, h.Name)
			}
		case *unionStackV:
			for _, e := range x.elem {
				if err := emit(n, e); err != nil {
					return err
				}
			}
		case *structV:
			for _, f := range x.decl.Fields {
				if err := emit(n, x.fields[f.Name]); err != nil {
					return err
				}
			}
		default:
			return unsupported(n, "emitting a value that is not a header")
		}
		return nil
	}
	for _, loc := range cd.Locals {
		return unsupported(loc, "local declarations in the deparser")
	}
	err := callsOnly(cd.Apply, "the deparser (only packet.emit is supported)", func(c *ast.Call) (bool, error) {
		if c.Kind != ast.CallExternMethod || c.Method.Extern.Name != "packet_out" || c.Method.Name != "emit" {
			return false, nil
		}
		v, err := a.value(c.Args[0].Value)
		if err != nil {
			return true, err
		}
		return true, emit(c, v)
	})
	if err != nil {
		return err
	}
	l.out.Deparser = dp
	return nil
}

// lowerChecksumControl lowers VerifyChecksum / ComputeChecksum controls,
// which may only call verify_checksum / update_checksum (and their
// _with_payload forms).
func (l *lowerer) lowerChecksumControl(d ast.Decl, verify bool, args []val) error {
	cd, ok := d.(*ast.ControlDecl)
	if !ok || len(cd.Params) != 2 {
		return unsupported(d, "checksum control must be a control with 2 parameters")
	}
	sc := newScope(nil, cd.Name)
	sc.m[cd.Params[0]] = args[0]
	sc.m[cd.Params[1]] = args[1]
	return l.checksumBody(cd, sc, verify)
}

// checksumBody lowers the apply block of a checksum control, or of a
// control it applies (its parameters bound to the arguments' storage:
// checksums only read fields and write the checksum field in place).
func (l *lowerer) checksumBody(cd *ast.ControlDecl, sc *scope, verify bool) error {
	for _, loc := range cd.Locals {
		if id, ok := loc.(*ast.InstanceDecl); ok && len(id.Args) == 0 {
			if ot, ok := id.Type.Resolved().(*ast.ObjectType); ok {
				if _, isControl := ot.Decl.(*ast.ControlDecl); isControl {
					continue // applied below (checksumSubControl)
				}
			}
		}
		return unsupported(loc, "local declarations in checksum controls")
	}
	return callsOnly(cd.Apply, "a checksum control (only verify_checksum/update_checksum and applying controls of those are supported)", func(c *ast.Call) (bool, error) {
		if c.Kind == ast.CallControlApply {
			return true, l.checksumSubControl(c, sc, verify)
		}
		if c.Kind != ast.CallExternFunction {
			return false, nil
		}
		switch c.ExternFunc.Name {
		case "verify_checksum", "update_checksum", "verify_checksum_with_payload", "update_checksum_with_payload":
			return true, l.checksum(c, sc, verify)
		}
		return false, nil
	})
}

// checksumSubControl lowers a control applied inside a checksum control.
func (l *lowerer) checksumSubControl(c *ast.Call, sc *scope, verify bool) error {
	var cd *ast.ControlDecl
	if id, ok := c.Receiver().(*ast.Ident); ok {
		switch d := id.Decl.(type) {
		case *ast.ControlDecl:
			cd = d
		case *ast.InstanceDecl:
			if ot, ok := d.Type.Resolved().(*ast.ObjectType); ok {
				cd, _ = ot.Decl.(*ast.ControlDecl)
			}
		}
	}
	if cd == nil || len(cd.CtorParams) > 0 || len(c.Args) != len(cd.Params) {
		return unsupported(c, "applying this control in a checksum control")
	}
	a := &actx{l: l, sc: sc, prims: new([]bmv2json.Primitive)}
	inner := newScope(nil, sc.prefix+"."+cd.Name)
	for i, p := range cd.Params {
		v, err := a.value(c.Args[i].Value)
		if err != nil {
			return err
		}
		inner.m[p] = v
	}
	if len(*a.prims) > 0 {
		return unsupported(c, "arguments that need computing, in a checksum control")
	}
	return l.checksumBody(cd, inner, verify)
}

// callsOnly walks a block that may hold only (nested blocks of) calls;
// visit reports whether it handles a call. Anything else is unsupported
// "in where".
func callsOnly(b *ast.BlockStmt, where string, visit func(*ast.Call) (bool, error)) error {
	for _, s := range b.Stmts {
		if call := guardedEmit(s); call != nil {
			// `if (h.isValid()) emit(h);` is `emit(h)`: emit skips
			// invalid headers anyway.
			s = &ast.CallStmt{Pos: call.Pos, Call: call}
		}
		switch x := s.(type) {
		case *ast.BlockStmt:
			if err := callsOnly(x, where, visit); err != nil {
				return err
			}
			continue
		case *ast.EmptyStmt:
			continue
		case *ast.CallStmt:
			handled, err := visit(x.Call)
			if err != nil {
				return err
			}
			if handled {
				continue
			}
		}
		return unsupported(s, "this statement in %s", where)
	}
	return nil
}

func (l *lowerer) checksum(c *ast.Call, sc *scope, verify bool) error {
	name := c.ExternFunc.Name
	if strings.HasPrefix(name, "verify") != verify {
		return unsupported(c, "%s in this control", name)
	}
	if len(c.Args) != 4 {
		return unsupported(c, "%s with %d arguments", name, len(c.Args))
	}
	var scratch []bmv2json.Primitive
	a := &actx{l: l, sc: sc, prims: &scratch}
	cond, err := a.cond(c.Args[0].Value)
	if err != nil {
		return err
	}
	inputs, err := a.calcInputs(c.Args[1].Value)
	if err != nil {
		return err
	}
	target, err := a.argField(c, 2)
	if err != nil {
		return err
	}
	al, err := l.algo(c, c.Args[3].Value)
	if err != nil {
		return err
	}
	if len(scratch) > 0 {
		return unsupported(c.Args[1].Value, "checksum inputs that are computed expressions")
	}
	if strings.HasSuffix(name, "_with_payload") {
		inputs = append(inputs, bmv2json.CalcInput{Type: "payload", Value: &bmv2json.Value{Kind: bmv2json.KindNull}})
	}
	calc := &Calculation{Name: l.uniqueName("calc"), Pos: c.Pos, Algo: al, Input: inputs}
	l.out.Calculations = append(l.out.Calculations, calc)
	h, f, _ := target.FieldRef()
	if cond.Kind == bmv2json.KindBool && !cond.Bool {
		return nil
	}
	l.out.Checksums = append(l.out.Checksums, &Checksum{
		Name: l.uniqueName("cksum"), Pos: c.Pos, Target: []string{h, f},
		Calculation: calc.Name, Verify: verify, IfCond: cond,
	})
	return nil
}

// guardedEmit recognises `if (X.isValid()) { pkt.emit(X); }` and returns
// the emit call.
func guardedEmit(s ast.Stmt) *ast.Call {
	x, ok := s.(*ast.IfStmt)
	if !ok || x.Else != nil {
		return nil
	}
	cond, ok := x.Cond.(*ast.Call)
	if !ok || cond.Kind != ast.CallBuiltin || cond.Builtin != "isValid" {
		return nil
	}
	body := x.Then
	if b, ok := body.(*ast.BlockStmt); ok {
		if len(b.Stmts) != 1 {
			return nil
		}
		body = b.Stmts[0]
	}
	cs, ok := body.(*ast.CallStmt)
	if !ok || cs.Call.Kind != ast.CallExternMethod || cs.Call.Method.Name != "emit" || len(cs.Call.Args) != 1 {
		return nil
	}
	if ExprText(cs.Call.Args[0].Value) != ExprText(cond.Receiver()) {
		return nil
	}
	return cs.Call
}
