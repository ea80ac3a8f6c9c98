package midend

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// constVal converts a compile-time constant of type t to a bmv2 value.
func (l *lowerer) constVal(n ast.Node, c *ast.Value, t ast.Type) (val, error) {
	switch c.Kind {
	case ast.ValBool:
		if c.Bool {
			return &scalarV{ref: hexInt(1, 1), t: ast.TBool}, nil
		}
		return &scalarV{ref: hexInt(0, 1), t: ast.TBool}, nil
	case ast.ValInt:
		w := 0
		if ti, ok := scalarType(t); ok {
			w = ti.width
		}
		return &scalarV{ref: hexBig(c.Int, w), t: t}, nil
	case ast.ValError:
		return &scalarV{ref: hexInt(int64(l.errorVals[c.Member]), 32), t: ast.TError}, nil
	case ast.ValEnum:
		ti, _ := scalarType(t)
		if c.Int != nil {
			return &scalarV{ref: hexBig(c.Int, ti.width), t: t}, nil
		}
		return &scalarV{ref: hexInt(int64(l.enumVals[c.Member]), 32), t: t}, nil
	case ast.ValTuple:
		tv := &tupleV{}
		var elemTypes []ast.Type
		if tt, ok := t.(*ast.TupleType); ok {
			elemTypes = tt.Elems
		}
		for i, e := range c.Elems {
			var et ast.Type = ast.TInt
			if i < len(elemTypes) {
				et = elemTypes[i]
			}
			v, err := l.constVal(n, e, et)
			if err != nil {
				return nil, err
			}
			tv.elems = append(tv.elems, v)
		}
		return tv, nil
	}
	return nil, unsupported(n, "constant %v", c)
}

// value lowers an expression to what it denotes. Function calls inside it
// are inlined into a.prims before the value is used.
func (a *actx) value(e ast.Expr) (val, error) {
	if v, ok := a.l.override[e]; ok {
		return v, nil
	}
	info := e.Info()
	if c := info.Const; c != nil {
		if _, ok := e.(*ast.ListExpr); !ok || c.Kind != ast.ValTuple {
			return a.l.constVal(e, c, info.Type)
		}
	}
	switch x := e.(type) {
	case *ast.Ident:
		if v, ok := a.sc.lookup(x.Decl); ok {
			return v, nil
		}
		switch d := x.Decl.(type) {
		case *ast.InstanceDecl:
			// Not bound in any scope: a top-level instance.
			return a.l.allocInstance(d, "")
		case *ast.ControlDecl, *ast.ParserDecl:
			// Direct application `C.apply(...)` of a control or parser
			// type: an implicit instance named after the type.
			return &objV{name: cpName(nil, d.DeclName(), a.sc.prefix), typ: &ast.ObjectType{Decl: d}, inst: &ast.InstanceDecl{Pos: x.Pos, Name: d.DeclName()}}, nil
		case *ast.ConstDecl:
			if c := d.Value.Info().Const; c != nil {
				return a.l.constVal(x, c, d.Type.Resolved())
			}
		}
		return nil, unsupported(x, "reference to %s here", x.Name)
	case *ast.Member:
		return a.member(x)
	case *ast.Index:
		base, err := a.value(x.X)
		if err != nil {
			return nil, err
		}
		if tv, ok := base.(*tupleV); ok {
			c := x.Index.Info().Const
			if c == nil || c.Int == nil || !c.Int.IsInt64() || c.Int.Int64() < 0 || c.Int.Int64() >= int64(len(tv.elems)) {
				return nil, srcError(x.Index, "a tuple index must be a constant below %d", len(tv.elems))
			}
			return tv.elems[c.Int.Int64()], nil
		}
		if us, ok := base.(*unionStackV); ok {
			c := x.Index.Info().Const
			if c == nil {
				c = a.l.constLocal(x.Index)
			}
			if c == nil || c.Int == nil {
				return nil, unsupported(x.Index, "a header union stack index that is not a compile-time constant")
			}
			i := int(c.Int.Int64())
			if i < 0 || i >= len(us.elem) {
				return nil, srcError(x, "index %d out of bounds of stack of size %d", i, len(us.elem))
			}
			return us.elem[i], nil
		}
		st, ok := base.(*stackV)
		if !ok {
			return nil, unsupported(x, "indexing a non-stack value")
		}
		if c := x.Index.Info().Const; c != nil && c.Int != nil {
			i := int(c.Int.Int64())
			if i < 0 || i >= len(st.elem) {
				return nil, srcError(x, "index %d out of bounds of stack of size %d", i, len(st.elem))
			}
			return st.elem[i], nil
		}
		idx, err := a.data(x.Index)
		if err != nil {
			return nil, err
		}
		if !isFieldRef(idx) {
			t := a.l.tempScalar(x.Index.Info().Type)
			a.emitPrim(a.assignPrim(t.ref, idx))
			idx = t.ref
		}
		return &headerV{decl: st.decl, dyn: exprOp("dereference_header_stack", bmv2json.Named("header_stack", st.s.Name), idx)}, nil
	case *ast.Slice:
		v, err := a.data(x.X)
		if err != nil {
			return nil, err
		}
		w := x.HiVal - x.LoVal + 1
		if v.Type == "lookahead" && len(v.Ints) == 2 {
			// Bits of a lookahead are a narrower lookahead (bmv2 reads a
			// lookahead only as a whole operand, never inside an expression).
			off := v.Ints[0] + v.Ints[1] - 1 - x.HiVal
			return &scalarV{ref: &bmv2json.Value{Type: "lookahead", Kind: bmv2json.KindInts, Ints: []int{off, w}}, t: info.Type}, nil
		}
		r := v
		if x.LoVal > 0 {
			r = exprOp(">>", r, hexInt(int64(x.LoVal), 0))
		}
		r = exprOp("&", r, maskHex(w))
		return &scalarV{ref: r, t: info.Type}, nil
	case *ast.Call:
		return a.callExpr(x)
	case *ast.Unary:
		return a.unary(x)
	case *ast.Binary:
		return a.binary(x)
	case *ast.Ternary:
		if hasCall(x.Then) || hasCall(x.Else) {
			return a.choose(x)
		}
		c, err := a.cond(x.Cond)
		if err != nil {
			return nil, err
		}
		t, err := a.data(x.Then)
		if err != nil {
			return nil, err
		}
		f, err := a.data(x.Else)
		if err != nil {
			return nil, err
		}
		if _, ok := scalarType(info.Type); !ok {
			return nil, unsupported(x, "?: on values of type %v", info.Type)
		}
		r := exprOp("?", t, f)
		r.Op.Cond = c
		return &scalarV{ref: r, t: info.Type}, nil
	case *ast.Cast:
		return a.cast(x)
	case *ast.ListExpr:
		snapped, err := a.snapshotBeforeCalls(x.Elems)
		defer a.dropSnapshots(snapped)
		if err != nil {
			return nil, err
		}
		tv := &tupleV{}
		for _, el := range x.Elems {
			v, err := a.value(el)
			if err != nil {
				return nil, err
			}
			tv.elems = append(tv.elems, v)
		}
		return tv, nil
	case *ast.StructInit:
		sd, ok := info.Type.(*ast.StructDecl)
		if !ok {
			return nil, unsupported(x, "struct initializer of type %v", info.Type)
		}
		vals := make([]ast.Expr, len(x.Fields))
		for i, f := range x.Fields {
			vals[i] = f.Value
		}
		snapped, err := a.snapshotBeforeCalls(vals)
		defer a.dropSnapshots(snapped)
		if err != nil {
			return nil, err
		}
		sv := &structV{decl: sd, fields: map[string]val{}}
		for _, f := range x.Fields {
			v, err := a.value(f.Value)
			if err != nil {
				return nil, err
			}
			sv.fields[f.Name] = v
		}
		if x.Dots {
			for _, f := range sd.Fields {
				if sv.fields[f.Name] != nil {
					continue
				}
				v, err := defaultValue(x, f.Type.Resolved())
				if err != nil {
					return nil, err
				}
				sv.fields[f.Name] = v
			}
		}
		return sv, nil
	}
	return nil, unsupported(e, "expression %s here", strings.TrimPrefix(fmt.Sprintf("%T", e), "*ast."))
}

// defaultValue is the value `...` gives a field left out of a struct
// initializer: zero (false) for scalars, recursively for structs.
func defaultValue(n ast.Node, t ast.Type) (val, error) {
	if ti, ok := scalarType(t); ok {
		return &scalarV{ref: hexInt(0, ti.width), t: t}, nil
	}
	if sd, ok := t.(*ast.StructDecl); ok && sd.Kind == ast.KindStruct {
		sv := &structV{decl: sd, fields: map[string]val{}}
		for _, f := range sd.Fields {
			v, err := defaultValue(n, f.Type.Resolved())
			if err != nil {
				return nil, err
			}
			sv.fields[f.Name] = v
		}
		return sv, nil
	}
	return nil, unsupported(n, "`...` leaving a field of type %v to its default", t)
}

// data lowers a scalar expression to a data value (bools as 0/1).
func (a *actx) data(e ast.Expr) (*bmv2json.Value, error) {
	v, err := a.value(e)
	if err != nil {
		return nil, err
	}
	s, ok := v.(*scalarV)
	if !ok {
		return nil, unsupported(e, "a non-scalar value where a scalar is needed")
	}
	return s.ref, nil
}

// cond lowers a boolean expression to a bmv2 boolean expression.
func (a *actx) cond(e ast.Expr) (*bmv2json.Value, error) {
	if c := e.Info().Const; c != nil && c.Kind == ast.ValBool {
		return bmv2json.Bool(c.Bool), nil
	}
	d, err := a.data(e)
	if err != nil {
		return nil, err
	}
	return toBool(d), nil
}

// toBool converts a 0/1 data value to a boolean expression.
func toBool(d *bmv2json.Value) *bmv2json.Value {
	if d.Type == "hexstr" {
		return bmv2json.Bool(d.Str != "0x0" && d.Str != "0x00" && d.Str != "0x0000")
	}
	return d2b(d)
}

func (a *actx) member(x *ast.Member) (val, error) {
	switch x.Kind {
	case ast.MemberField:
		base, err := a.value(x.X)
		if err != nil {
			return nil, err
		}
		switch b := base.(type) {
		case *structV:
			if f, ok := b.fields[x.Name]; ok {
				return f, nil
			}
		case *unionV:
			if h, ok := b.members[x.Name]; ok {
				return h, nil
			}
		case *headerV:
			if vb, ok := x.Info().Type.(*ast.VarbitType); ok {
				if b.dyn != nil || b.last != nil || len(b.path) > 0 {
					return nil, unsupported(x, "a varbit field of a stack element chosen at run time")
				}
				return &varbitV{ref: bmv2json.Field(b.h.Name, x.Name), t: vb}, nil
			}
			if sd, ok := x.Info().Type.(*ast.StructDecl); ok && sd.Kind == ast.KindStruct {
				return &headerV{h: b.h, decl: b.decl, dyn: b.dyn, last: b.last, path: append(append([]string(nil), b.path...), x.Name)}, nil
			}
			if len(b.path) > 0 {
				if b.dyn != nil || b.last != nil {
					return nil, unsupported(x, "struct fields of a stack element chosen at run time")
				}
				ht := a.l.headerT[b.decl]
				name, ok := ht.flat[strings.Join(append(append([]string(nil), b.path...), x.Name), ".")]
				if !ok {
					return nil, unsupported(x, "field %s", x.Name)
				}
				return &scalarV{ref: bmv2json.Field(b.h.Name, name), t: x.Info().Type, loc: true}, nil
			}
			if b.last != nil && a.inParser {
				return &scalarV{ref: &bmv2json.Value{Type: "stack_field", Kind: bmv2json.KindNames, Names: []string{b.last.s.Name, x.Name}}, t: x.Info().Type}, nil
			}
			if b.dyn != nil {
				off := -1
				for i, f := range a.l.headerFields(b) {
					if f.name == x.Name {
						off = i
					}
				}
				if off < 0 {
					return nil, unsupported(x, "field %s", x.Name)
				}
				return &scalarV{ref: exprOp("access_field", b.dyn, &bmv2json.Value{Kind: bmv2json.KindInt, Int: off}), t: x.Info().Type, loc: true}, nil
			}
			return &scalarV{ref: bmv2json.Field(b.h.Name, x.Name), t: x.Info().Type, loc: true}, nil
		case *tupleV:
			// A list standing for a struct (a default argument {0, 0}):
			// its elements are the fields in order.
			if sd, ok := x.X.Info().Type.(*ast.StructDecl); ok {
				for i, f := range sd.Fields {
					if f.Name == x.Name && i < len(b.elems) {
						return b.elems[i], nil
					}
				}
			}
		}
		return nil, unsupported(x, "field %s of this value", x.Name)
	case ast.MemberStackLast:
		base, err := a.value(x.X)
		if err != nil {
			return nil, err
		}
		if st, ok := base.(*stackV); ok {
			stack := bmv2json.Named("header_stack", st.s.Name)
			return &headerV{decl: st.decl, last: st, dyn: exprOp("dereference_header_stack", stack, exprOp("last_stack_index", nil, stack))}, nil
		}
	case ast.MemberStackLastIndex:
		base, err := a.value(x.X)
		if err != nil {
			return nil, err
		}
		if st, ok := base.(*stackV); ok {
			return &scalarV{ref: exprOp("last_stack_index", nil, bmv2json.Named("header_stack", st.s.Name)), t: x.Info().Type}, nil
		}
	case ast.MemberStackSize:
		base, err := a.value(x.X)
		if err != nil {
			return nil, err
		}
		if st, ok := base.(*stackV); ok {
			return &scalarV{ref: hexInt(int64(len(st.elem)), 32), t: x.Info().Type}, nil
		}
	}
	return nil, unsupported(x, "member .%s here", x.Name)
}

// ti returns the storage of the type of expression e (32-bit when it is not
// a sized scalar).
func ti(e ast.Expr) typeInfo {
	if t, ok := scalarType(e.Info().Type); ok {
		return t
	}
	return typeInfo{}
}

// fixWidth truncates an arithmetic result to the width of its type:
// `& mask` for bit<W>, two_comp_mod for int<W> (what p4c emits).
func fixWidth(r *bmv2json.Value, t typeInfo) *bmv2json.Value {
	if t.width == 0 {
		return r
	}
	if t.signed {
		return exprOp("two_comp_mod", r, hexInt(int64(t.width), 0))
	}
	return exprOp("&", r, maskHex(t.width))
}

func (a *actx) unary(x *ast.Unary) (val, error) {
	t := x.Info().Type
	switch x.Op {
	case ast.OpNot:
		c, err := a.cond(x.X)
		if err != nil {
			return nil, err
		}
		return &scalarV{ref: b2d(exprOp("not", nil, c)), t: t}, nil
	case ast.OpPlus:
		return a.value(x.X)
	}
	d, err := a.data(x.X)
	if err != nil {
		return nil, err
	}
	info := ti(x)
	if info.width == 0 {
		return nil, unsupported(x, "%s on a value without a width", x.Op)
	}
	switch x.Op {
	case ast.OpNeg:
		return &scalarV{ref: fixWidth(exprOp("-", hexInt(0, 0), d), info), t: t}, nil
	case ast.OpBitNot:
		return &scalarV{ref: fixWidth(exprOp("~", nil, d), info), t: t}, nil
	}
	return nil, unsupported(x, "operator %s", x.Op)
}

var cmpOps = map[ast.BinaryOp]string{
	ast.OpEq: "==", ast.OpNe: "!=", ast.OpLt: "<", ast.OpLe: "<=", ast.OpGt: ">", ast.OpGe: ">=",
}

// hasCall reports whether evaluating e calls a function, action or extern
// (something that may write state an earlier operand reads).
func hasCall(e ast.Node) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if c, ok := n.(*ast.Call); ok && c.Kind != ast.CallBuiltin {
			found = true
		}
		return !found
	})
	return found
}

// snapshotBeforeCalls reads the elements of an initializer that precede a
// call into temporaries: P4 evaluates them left to right, so a later
// call's side effects must not show in earlier elements ({x, f(x)}).
// The snapshots are overrides that value() returns until dropSnapshots
// (they hold this evaluation's values only); a nested initializer that
// contains the call snapshots its own elements when it is evaluated.
func (a *actx) snapshotBeforeCalls(elems []ast.Expr) ([]ast.Expr, error) {
	last := -1
	for i, e := range elems {
		if hasCall(e) {
			last = i
		}
	}
	var snapped []ast.Expr
	for _, e := range elems[:max(last, 0)] {
		switch e.(type) {
		case *ast.ListExpr, *ast.StructInit:
			inner, err := a.snapshotBeforeCalls(subExprs(e))
			snapped = append(snapped, inner...)
			if err != nil {
				return snapped, err
			}
			continue
		}
		if err := a.snapshot(e); err != nil {
			return snapped, err
		}
		snapped = append(snapped, e)
	}
	return snapped, nil
}

func (a *actx) dropSnapshots(es []ast.Expr) {
	for _, e := range es {
		delete(a.l.override, e)
	}
}

// subExprs are the elements of a list or struct initializer.
func subExprs(e ast.Expr) []ast.Expr {
	switch x := e.(type) {
	case *ast.ListExpr:
		return x.Elems
	case *ast.StructInit:
		var out []ast.Expr
		for _, f := range x.Fields {
			out = append(out, f.Value)
		}
		return out
	}
	return nil
}

// snapshot evaluates e into a temporary when a later operand has side
// effects, so that P4's left-to-right evaluation order holds.
func (a *actx) snapshot(e ast.Expr) error {
	if e.Info().Const != nil {
		return nil
	}
	v, err := a.value(e)
	if err != nil {
		return err
	}
	s, ok := v.(*scalarV)
	if !ok {
		return nil
	}
	t := a.l.tempScalar(s.t)
	a.emitPrim(a.assignPrim(t.ref, s.ref))
	a.l.override[e] = &scalarV{ref: t.ref, t: s.t}
	return nil
}

func (a *actx) binary(x *ast.Binary) (val, error) {
	t := x.Info().Type
	if x.Op != ast.OpAnd && x.Op != ast.OpOr && hasCall(x.Y) {
		if err := a.snapshot(x.X); err != nil {
			return nil, err
		}
		// The snapshot belongs to this evaluation only: the same syntax
		// lowered again (a function inlined twice) must read afresh.
		defer delete(a.l.override, x.X)
	}
	switch x.Op {
	case ast.OpAnd, ast.OpOr:
		if hasCall(x.Y) {
			return a.shortCircuit(x)
		}
		l, err := a.cond(x.X)
		if err != nil {
			return nil, err
		}
		r, err := a.cond(x.Y)
		if err != nil {
			return nil, err
		}
		op := "and"
		if x.Op == ast.OpOr {
			op = "or"
		}
		return &scalarV{ref: b2d(exprOp(op, l, r)), t: t}, nil
	case ast.OpEq, ast.OpNe:
		// Equality of headers and structs compares field by field.
		lv, err := a.value(x.X)
		if err != nil {
			return nil, err
		}
		rv, err := a.value(x.Y)
		if err != nil {
			return nil, err
		}
		c, err := a.equal(x, lv, rv)
		if err != nil {
			return nil, err
		}
		if x.Op == ast.OpNe {
			c = exprOp("not", nil, c)
		}
		return &scalarV{ref: b2d(c), t: t}, nil
	}
	l, err := a.data(x.X)
	if err != nil {
		return nil, err
	}
	r, err := a.data(x.Y)
	if err != nil {
		return nil, err
	}
	if op, ok := cmpOps[x.Op]; ok {
		return &scalarV{ref: b2d(exprOp(op, l, r)), t: t}, nil
	}
	info := ti(x)
	switch x.Op {
	case ast.OpAdd, ast.OpSub, ast.OpMul, ast.OpShl:
		op := map[ast.BinaryOp]string{ast.OpAdd: "+", ast.OpSub: "-", ast.OpMul: "*", ast.OpShl: "<<"}[x.Op]
		return &scalarV{ref: fixWidth(exprOp(op, l, r), info), t: t}, nil
	case ast.OpShr:
		return &scalarV{ref: fixWidth(exprOp(">>", l, r), info), t: t}, nil
	case ast.OpBitAnd, ast.OpBitOr, ast.OpBitXor:
		op := map[ast.BinaryOp]string{ast.OpBitAnd: "&", ast.OpBitOr: "|", ast.OpBitXor: "^"}[x.Op]
		return &scalarV{ref: fixWidth(exprOp(op, l, r), info), t: t}, nil
	case ast.OpDiv, ast.OpMod:
		if info.signed || info.width == 0 {
			return nil, unsupported(x, "operator %s on values of type %v known only at run time", x.Op, t)
		}
		// Like p4c, a power-of-two divisor becomes a shift or a mask;
		// otherwise bmv2's own / and % (the result never exceeds the
		// dividend, so no width fix is needed).
		if c := x.Y.Info().Const; c != nil && c.Int != nil && c.Int.Sign() > 0 && c.Int.BitLen()-1 == int(c.Int.TrailingZeroBits()) {
			k := int(c.Int.TrailingZeroBits())
			if x.Op == ast.OpDiv {
				return &scalarV{ref: exprOp(">>", l, hexInt(int64(k), 0)), t: t}, nil
			}
			return &scalarV{ref: exprOp("&", l, maskHex(min(k, info.width))), t: t}, nil
		}
		op := "/"
		if x.Op == ast.OpMod {
			op = "%"
		}
		return &scalarV{ref: exprOp(op, l, r), t: t}, nil
	case ast.OpAddSat, ast.OpSubSat:
		op := "+"
		if x.Op == ast.OpSubSat {
			op = "-"
		}
		sat := "usat_cast"
		if info.signed {
			sat = "sat_cast"
		}
		return &scalarV{ref: exprOp(sat, exprOp(op, l, r), hexInt(int64(info.width), 0)), t: t}, nil
	case ast.OpConcat:
		lt, rt := ti(x.X), ti(x.Y)
		if lt.width == 0 || rt.width == 0 {
			return nil, unsupported(x, "++ on values without a width")
		}
		if lt.signed {
			l = exprOp("&", l, maskHex(lt.width))
		}
		if rt.signed {
			r = exprOp("&", r, maskHex(rt.width))
		}
		sh := exprOp("&", exprOp("<<", l, hexInt(int64(rt.width), 0)), maskHex(lt.width+rt.width))
		res := exprOp("|", sh, r)
		if info.signed {
			res = fixWidth(res, info)
		}
		return &scalarV{ref: res, t: t}, nil
	}
	return nil, unsupported(x, "operator %s outside compile-time constants", x.Op)
}

// equal compares two values of the same type.
func (a *actx) equal(n ast.Node, lv, rv val) (*bmv2json.Value, error) {
	switch l := lv.(type) {
	case *scalarV:
		r, ok := rv.(*scalarV)
		if !ok {
			return nil, unsupported(n, "comparison of mismatched values")
		}
		return exprOp("==", l.ref, r.ref), nil
	case *varbitV:
		r, ok := rv.(*varbitV)
		if !ok {
			return nil, unsupported(n, "comparison of mismatched values")
		}
		// bmv2 compares varbit fields by their current length and bytes.
		return exprOp("==", l.ref, r.ref), nil
	case *headerV:
		r, ok := rv.(*headerV)
		if !ok || l.dyn != nil || r.dyn != nil {
			return nil, unsupported(n, "comparison of this header with a header")
		}
		// Two headers are equal when both are invalid, or both valid with equal fields.
		lvld := toBool(bmv2json.Field(l.h.Name, "$valid$"))
		rvld := toBool(bmv2json.Field(r.h.Name, "$valid$"))
		same := exprOp("==", bmv2json.Field(l.h.Name, "$valid$"), bmv2json.Field(r.h.Name, "$valid$"))
		if len(l.path) > 0 || len(r.path) > 0 {
			return nil, unsupported(n, "comparison of structs inside headers")
		}
		fields := bmv2json.Bool(true)
		for _, f := range a.l.headerFields(l) {
			fields = and(fields, exprOp("==", bmv2json.Field(l.h.Name, f.name), bmv2json.Field(r.h.Name, f.name)))
		}
		bothValid := exprOp("and", lvld, rvld)
		return exprOp("and", same, exprOp("or", exprOp("not", nil, bothValid), fields)), nil
	case *stackV:
		r, ok := rv.(*stackV)
		if !ok || len(r.elem) != len(l.elem) {
			return nil, unsupported(n, "comparison of a header stack with a different value")
		}
		res := bmv2json.Bool(true)
		for i := range l.elem {
			c, err := a.equal(n, l.elem[i], r.elem[i])
			if err != nil {
				return nil, err
			}
			res = and(res, c)
		}
		return res, nil
	case *structV:
		if _, ok := rv.(*tupleV); ok {
			return a.equal(n, rv, lv) // a list compares field by field
		}
		r, ok := rv.(*structV)
		if !ok {
			return nil, unsupported(n, "comparison of a struct with a non-struct")
		}
		res := bmv2json.Bool(true)
		for _, f := range l.decl.Fields {
			c, err := a.equal(n, l.fields[f.Name], r.fields[f.Name])
			if err != nil {
				return nil, err
			}
			res = and(res, c)
		}
		return res, nil
	case *tupleV:
		if s, ok := rv.(*structV); ok {
			res := bmv2json.Bool(true)
			for i, f := range s.decl.Fields {
				if i >= len(l.elems) {
					break
				}
				c, err := a.equal(n, l.elems[i], s.fields[f.Name])
				if err != nil {
					return nil, err
				}
				res = and(res, c)
			}
			return res, nil
		}
	}
	if _, ok := rv.(*tupleV); ok {
		return a.equal(n, rv, lv)
	}
	return nil, unsupported(n, "comparison of these values")
}

func and(l, r *bmv2json.Value) *bmv2json.Value {
	if l.Kind == bmv2json.KindBool && l.Bool {
		return r
	}
	return exprOp("and", l, r)
}

func (a *actx) cast(x *ast.Cast) (val, error) {
	to := x.Type.Resolved()
	from := x.X.Info().Type
	v, err := a.value(x.X)
	if err != nil {
		return nil, err
	}
	s, ok := v.(*scalarV)
	if !ok {
		// Casts of structs/headers (e.g. `(H){...}`) only change the static type.
		if tv, isTuple := v.(*tupleV); isTuple {
			if sd, ok := to.(*ast.StructDecl); ok {
				sv := &structV{decl: sd, fields: map[string]val{}}
				for i, f := range sd.Fields {
					if i < len(tv.elems) {
						sv.fields[f.Name] = tv.elems[i]
					}
				}
				return sv, nil
			}
		}
		return v, nil
	}
	if _, toInt := to.(*ast.IntLitType); toInt {
		return s, nil // a run-time value cast to int keeps its width
	}
	tt, ok1 := scalarType(to)
	ft, ok2 := scalarType(from)
	if !ok1 {
		return nil, unsupported(x, "cast to %v", to)
	}
	if _, isInt := from.(*ast.IntLitType); isInt || !ok2 {
		return &scalarV{ref: s.ref, t: to}, nil
	}
	r := s.ref
	switch {
	case tt.isBool && !ft.isBool:
		r = b2d(exprOp("!=", r, hexInt(0, ft.width)))
	case ft.isBool:
		// bool is already stored as 0/1
	case tt.signed:
		if tt.width < ft.width || !ft.signed {
			r = exprOp("two_comp_mod", r, hexInt(int64(tt.width), 0))
		}
	default:
		if tt.width < ft.width || ft.signed {
			r = exprOp("&", r, maskHex(tt.width))
		}
	}
	return &scalarV{ref: r, t: to}, nil
}

// bigOf returns the integer value of a constant expression (booleans are
// 0 and 1, serializable enum members their value).
func bigOf(e ast.Expr) (*big.Int, bool) {
	c := e.Info().Const
	switch {
	case c == nil:
		return nil, false
	case c.Kind == ast.ValBool && c.Bool:
		return big.NewInt(1), true
	case c.Kind == ast.ValBool:
		return big.NewInt(0), true
	case c.Int == nil:
		return nil, false
	}
	return c.Int, true
}

// shortCircuit lowers `a && b` / `a || b` whose right operand has side
// effects: b is evaluated (with jumps) only when it decides the result.
func (a *actx) shortCircuit(x *ast.Binary) (val, error) {
	if a.inParser {
		return nil, unsupported(x, "calls in the right operand of %s in a parser", x.Op)
	}
	tmp := a.l.tempScalar(ast.TBool)
	l, err := a.data(x.X)
	if err != nil {
		return nil, err
	}
	a.emit(prim("assign", tmp.ref, param(l)))
	skipIf := param(tmp.ref)
	if x.Op == ast.OpOr {
		skipIf = param(b2d(exprOp("not", nil, d2b(tmp.ref))))
	}
	j := len(*a.prims)
	a.emit(prim("_jump_if_zero", skipIf, hexInt(0, 32)))
	r, err := a.data(x.Y)
	if err != nil {
		return nil, err
	}
	a.emit(prim("assign", tmp.ref, param(r)))
	a.patch(j, 1, len(*a.prims))
	return &scalarV{ref: tmp.ref, t: ast.TBool}, nil
}

// choose lowers `c ? t : e` whose branches have side effects: only the
// selected branch is evaluated.
func (a *actx) choose(x *ast.Ternary) (val, error) {
	if a.inParser {
		return nil, unsupported(x, "calls in the branches of ?: in a parser")
	}
	if _, ok := scalarType(x.Info().Type); !ok {
		return nil, unsupported(x, "?: on values of type %v", x.Info().Type)
	}
	c, err := a.cond(x.Cond)
	if err != nil {
		return nil, err
	}
	tmp := a.l.tempScalar(x.Info().Type)
	jz := len(*a.prims)
	a.emit(prim("_jump_if_zero", param(b2d(c)), hexInt(0, 32)))
	t, err := a.data(x.Then)
	if err != nil {
		return nil, err
	}
	a.emit(prim("assign", tmp.ref, param(t)))
	j := len(*a.prims)
	a.emit(prim("_jump", hexInt(0, 32)))
	a.patch(jz, 1, len(*a.prims))
	e, err := a.data(x.Else)
	if err != nil {
		return nil, err
	}
	a.emit(prim("assign", tmp.ref, param(e)))
	a.patch(j, 0, len(*a.prims))
	return &scalarV{ref: tmp.ref, t: x.Info().Type}, nil
}
