package midend

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// actx lowers straight-line code (action bodies, function bodies and the
// statements between tables in apply blocks) into a primitive list.
// if-statements become _jump_if_zero/_jump with absolute primitive
// indexes, as p4c emits for bmv2.
type actx struct {
	l     *lowerer
	sc    *scope
	prims *[]bmv2json.Primitive
	ret   *retCtx
	// inParser makes assignments parser "set" operations and rejects
	// control-only constructs.
	inParser bool
	// inAction is true inside an action body.
	inAction bool
	// inInlinedAction is true inside the body of an action an apply block
	// calls directly (inlined there).
	inInlinedAction bool
	// exits collects the jumps that follow an exit primitive: bmv2 stops
	// the pipeline after the action, the rest of the action is skipped.
	exits *[]int
	// loop is the innermost enclosing for loop (nil outside loops).
	loop *loopCtx
}

// loopCtx collects the jumps of break and continue statements of one for
// loop, patched once the loop's exit and update are placed.
type loopCtx struct {
	breaks, continues []int
}

// retCtx collects the jumps of `return` statements of an inlined function
// or action, patched to the end of its body.
type retCtx struct {
	jumps  []int
	stmts  []*ast.ReturnStmt // the return statement of each jump
	result *scalarV          // function return value, nil for void
	// resultVal is set when the function returns a non-scalar value.
	resultVal val
}

func (a *actx) emit(p bmv2json.Primitive) { *a.prims = append(*a.prims, p) }

func (a *actx) block(b *ast.BlockStmt) error {
	if b == nil {
		return nil
	}
	for _, s := range b.Stmts {
		if err := a.stmt(s); err != nil {
			return err
		}
	}
	return nil
}

func (a *actx) stmt(s ast.Stmt) error {
	switch x := s.(type) {
	case *ast.BlockStmt:
		return a.block(x)
	case *ast.EmptyStmt:
		return nil
	case *ast.AssignStmt:
		return a.assignStmt(x)
	case *ast.CallStmt:
		_, err := a.call(x.Call, true)
		return err
	case *ast.DeclStmt:
		return a.declStmt(x)
	case *ast.IfStmt:
		if a.inParser {
			// Reached only inside functions or actions called from a parser
			// state (the state's own ifs split the state).
			return unsupported(x, "if-statements in functions called from a parser")
		}
		return a.ifStmt(x)
	case *ast.ForStmt, *ast.ForInStmt:
		return a.forStmt(x)
	case *ast.BreakStmt, *ast.ContinueStmt:
		if a.loop == nil {
			return unsupported(x, "break or continue outside a loop of this block")
		}
		if _, ok := x.(*ast.BreakStmt); ok {
			a.loop.breaks = append(a.loop.breaks, len(*a.prims))
		} else {
			a.loop.continues = append(a.loop.continues, len(*a.prims))
		}
		a.emit(prim("_jump", hexInt(0, 32)))
		return nil
	case *ast.ExitStmt:
		if a.inParser {
			return unsupported(x, "exit in a parser")
		}
		a.emit(prim("exit"))
		if a.exits != nil {
			*a.exits = append(*a.exits, len(*a.prims))
			a.emit(prim("_jump", hexInt(0, 32)))
		}
		return nil
	case *ast.ReturnStmt:
		if a.ret == nil {
			return unsupported(x, "return here")
		}
		if x.Value != nil {
			v, err := a.value(x.Value)
			if err != nil {
				return err
			}
			switch {
			case a.ret.result != nil:
				if err := a.store(x, a.ret.result, v); err != nil {
					return err
				}
			case a.ret.resultVal != nil:
				if err := a.store(x, a.ret.resultVal, v); err != nil {
					return err
				}
			}
		}
		a.ret.jumps = append(a.ret.jumps, len(*a.prims))
		a.ret.stmts = append(a.ret.stmts, x)
		a.emit(prim("_jump", hexInt(0, 32)))
		return nil
	case *ast.SwitchStmt:
		return unsupported(x, "switch statements inside actions and functions")
	}
	return unsupported(s, "%s statement here", strings.TrimPrefix(fmt.Sprintf("%T", s), "*ast."))
}

func (a *actx) declStmt(x *ast.DeclStmt) error {
	switch d := x.Decl.(type) {
	case *ast.VarDecl:
		v, err := a.l.alloc(d, d.Type.Resolved(), d.Name, d.Name)
		if err != nil {
			return err
		}
		a.sc.m[d] = v
		if d.Init != nil {
			iv, err := a.value(d.Init)
			if err != nil {
				return err
			}
			return a.store(d, v, iv)
		}
		// An uninitialized header local starts invalid; a re-executed
		// inlined copy must not see a previous packet's validity.
		return a.invalidate(d, v)
	case *ast.ConstDecl:
		return nil // constants are folded by the checker
	case *ast.InstanceDecl:
		return unsupported(d, "instantiation inside a block")
	}
	return unsupported(x, "%s declaration here", strings.TrimPrefix(fmt.Sprintf("%T", x.Decl), "*ast."))
}

// overlaps reports whether src reads storage that dst holds.
func overlaps(dst, src val) bool {
	written := map[string]bool{} // "hdr" for whole headers, "hdr.f" for fields
	var collect func(v val)
	collect = func(v val) {
		switch x := v.(type) {
		case *scalarV:
			if h, f, ok := x.ref.FieldRef(); ok && isFieldRef(x.ref) {
				written[h+"."+f] = true
			}
		case *headerV:
			if x.h != nil {
				written[x.h.Name] = true
			} else if x.dyn != nil {
				written["*"] = true // some stack element: assume anything
			}
		case *varbitV:
			if h, f, ok := x.ref.FieldRef(); ok {
				written[h+"."+f] = true
			}
		case *structV:
			for _, f := range x.fields {
				collect(f)
			}
		case *tupleV:
			for _, e := range x.elems {
				collect(e)
			}
		case *stackV:
			for _, e := range x.elem {
				collect(e)
			}
		case *unionV:
			for _, h := range x.members {
				collect(h)
			}
		}
	}
	collect(dst)
	if written["*"] {
		return true
	}
	reads := false
	var walk func(v *bmv2json.Value)
	walk = func(v *bmv2json.Value) {
		if v == nil || reads {
			return
		}
		switch v.Kind {
		case bmv2json.KindNames:
			if len(v.Names) == 2 && (written[v.Names[0]] || written[v.Names[0]+"."+v.Names[1]]) {
				reads = true
			}
		case bmv2json.KindString:
			if written[v.Str] {
				reads = true
			}
		case bmv2json.KindInner:
			walk(v.Inner)
		case bmv2json.KindOp:
			walk(v.Op.Left)
			walk(v.Op.Right)
			walk(v.Op.Cond)
		}
	}
	var scan func(v val)
	scan = func(v val) {
		switch x := v.(type) {
		case *scalarV:
			walk(x.ref)
		case *varbitV:
			walk(x.ref)
		case *headerV:
			if x.h != nil && written[x.h.Name] {
				reads = true
			}
			if x.dyn != nil {
				walk(x.dyn)
			}
		case *structV:
			for _, f := range x.fields {
				scan(f)
			}
		case *tupleV:
			for _, e := range x.elems {
				scan(e)
			}
		case *stackV:
			for _, e := range x.elem {
				scan(e)
			}
		case *unionV, *unionStackV:
			reads = true // rare in initializers: be safe
		}
	}
	scan(src)
	return reads
}

// snapshotVal copies the scalars of an initializer into temporaries;
// ok is false when it holds anything else (headers, varbits), which
// cannot be copied aside.
func (a *actx) snapshotVal(v val) (val, bool) {
	switch x := v.(type) {
	case *scalarV:
		if x.ref.Type == "hexstr" || x.ref.Kind == bmv2json.KindBool {
			return x, true
		}
		if _, ok := scalarType(x.t); !ok {
			return nil, false
		}
		t := a.l.tempScalar(x.t)
		a.emitPrim(a.assignPrim(t.ref, x.ref))
		return &scalarV{ref: t.ref, t: x.t}, true
	case *structV:
		out := &structV{decl: x.decl, fields: map[string]val{}}
		for _, f := range x.decl.Fields {
			fv := x.fields[f.Name]
			if fv == nil {
				continue
			}
			s, ok := a.snapshotVal(fv)
			if !ok {
				return nil, false
			}
			out.fields[f.Name] = s
		}
		return out, true
	case *tupleV:
		out := &tupleV{}
		for _, e := range x.elems {
			s, ok := a.snapshotVal(e)
			if !ok {
				return nil, false
			}
			out.elems = append(out.elems, s)
		}
		return out, true
	}
	return nil, false
}

// storeRuntimeElement writes a whole header into the stack element
// chosen at run time by d (hs[i] or hs.last), as p4c does: one guarded
// copy per element, so an index out of range writes nothing.
func (a *actx) storeRuntimeElement(n ast.Node, d *headerV, src val) error {
	if a.inParser || len(d.path) > 0 || d.dyn.Kind != bmv2json.KindOp || d.dyn.Op.Op != "dereference_header_stack" {
		return unsupported(n, "copying into a stack element chosen at run time here")
	}
	name := d.dyn.Op.Left.Str
	var st *Stack
	for _, s := range a.l.out.Stacks {
		if s.Name == name {
			st = s
		}
	}
	if st == nil {
		return unsupported(n, "copying into a stack element chosen at run time here")
	}
	// Evaluate the index once, before any element changes (it may be a
	// field of the stack itself). A run-time index is already a field
	// (see value's *ast.Index); hs.last's index is below the stack size.
	idx := d.dyn.Op.Right
	width := 32
	if h, f, ok := idx.FieldRef(); ok {
		width = a.l.fieldWidth(h, f)
	}
	t := a.l.tempScalar(&ast.BitsType{Width: width})
	a.emitPrim(a.assignPrim(t.ref, idx))
	idx = t.ref
	for i, e := range st.Elems {
		jz := len(*a.prims)
		a.emit(prim("_jump_if_zero", param(b2d(exprOp("==", idx, hexInt(int64(i), 32)))), hexInt(0, 32)))
		if err := a.store(n, &headerV{h: e, decl: d.decl}, src); err != nil {
			return err
		}
		a.patch(jz, 1, len(*a.prims))
	}
	return nil
}

// fieldWidth is the width of field f of header instance h (32 when
// unknown, which cannot happen for references the lowering made).
func (l *lowerer) fieldWidth(h, f string) int {
	for _, x := range l.out.Headers {
		if x.Name != h {
			continue
		}
		for _, fd := range x.Type.Fields {
			if fd.Name == f {
				return fd.Bitwidth
			}
		}
	}
	return 32
}

// invalidate marks every header inside v invalid.
func (a *actx) invalidate(n ast.Node, v val) error {
	switch x := v.(type) {
	case *headerV:
		if x.h == nil {
			return unsupported(n, "an out header argument chosen at run time")
		}
		if x.h.Metadata {
			return nil // metadata (standard_metadata's copies) has no validity
		}
		a.emitPrim(prim("remove_header", bmv2json.Named("header", x.h.Name)))
	case *structV:
		for _, f := range x.decl.Fields {
			if err := a.invalidate(n, x.fields[f.Name]); err != nil {
				return err
			}
		}
	case *stackV:
		for _, e := range x.elem {
			a.emitPrim(prim("remove_header", bmv2json.Named("header", e.h.Name)))
		}
	case *unionV:
		for _, h := range x.u.Members {
			a.emitPrim(prim("remove_header", bmv2json.Named("header", h.Name)))
		}
	case *unionStackV:
		for _, e := range x.elem {
			if err := a.invalidate(n, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// emitPrim emits a primitive; in parsers, p4c wraps primitives in a
// "primitive" parser op.
func (a *actx) emitPrim(p bmv2json.Primitive) {
	if a.inParser && p.Op != "set" && p.Op != "extract" && p.Op != "verify" && p.Op != "advance" {
		a.emit(bmv2json.Primitive{Op: "primitive", Parameters: []*bmv2json.Value{{Kind: bmv2json.KindPrim, Prim: &bmv2json.Primitive{Op: p.Op, Parameters: p.Parameters}}}})
		return
	}
	a.emit(p)
}

func (a *actx) assignStmt(x *ast.AssignStmt) error {
	if sl, ok := x.LHS.(*ast.Slice); ok {
		return a.assignSlice(x, sl)
	}
	dst, err := a.value(x.LHS)
	if err != nil {
		return err
	}
	src, err := a.value(x.RHS)
	if err != nil {
		return err
	}
	return a.store(x, dst, src)
}

// assignSlice lowers `f[h:l] = v` to a read-modify-write of f.
func (a *actx) assignSlice(x *ast.AssignStmt, sl *ast.Slice) error {
	v, err := a.data(x.RHS)
	if err != nil {
		return err
	}
	return a.storeSlice(x, sl, v)
}

// storeSlice writes the data value v into the slice sl of a field.
func (a *actx) storeSlice(n ast.Node, sl *ast.Slice, v *bmv2json.Value) error {
	// x[h1:l1][h2:l2] is x[l1+h2 : l1+l2].
	baseExpr, hi, lo := sl.X, sl.HiVal, sl.LoVal
	for {
		inner, ok := baseExpr.(*ast.Slice)
		if !ok {
			break
		}
		hi, lo = inner.LoVal+hi, inner.LoVal+lo
		baseExpr = inner.X
	}
	base, err := a.value(baseExpr)
	if err != nil {
		return err
	}
	bs, ok := base.(*scalarV)
	if !ok || !bs.loc {
		return unsupported(n, "assignment to a slice of this expression")
	}
	bt, _ := scalarType(bs.t)
	w := hi - lo + 1
	sliceMask := new(big.Int).Lsh(mask(w), uint(lo))
	keep := exprOp("&", bs.ref, hexBig(new(big.Int).Xor(mask(bt.width), sliceMask), bt.width))
	ins := exprOp("&", exprOp("<<", v, hexInt(int64(lo), 0)), hexBig(sliceMask, bt.width))
	a.emitPrim(a.assignPrim(bs.ref, exprOp("|", keep, ins)))
	return nil
}

// assignPrim is "assign" (or the parser's "set") of a scalar.
func (a *actx) assignPrim(dst, src *bmv2json.Value) bmv2json.Primitive {
	if a.inParser {
		return prim("set", dst, param(src))
	}
	return prim("assign", dst, param(src))
}

// structInHeader returns the fields (flattened into the header) of the
// struct h.path selects inside a header, in declaration order.
func (a *actx) structInHeader(n ast.Node, h *headerV) ([]*scalarV, error) {
	if h.dyn != nil || h.last != nil {
		return nil, unsupported(n, "struct fields of a stack element chosen at run time")
	}
	sd := h.decl
	for _, p := range h.path {
		var next *ast.StructDecl
		for _, f := range sd.Fields {
			if f.Name == p {
				next, _ = f.Type.Resolved().(*ast.StructDecl)
			}
		}
		if next == nil {
			return nil, unsupported(n, "struct field %s", p)
		}
		sd = next
	}
	ht := a.l.headerT[h.decl]
	var out []*scalarV
	var walk func(sd *ast.StructDecl, path []string) error
	walk = func(sd *ast.StructDecl, path []string) error {
		for _, f := range sd.Fields {
			fp := append(append([]string(nil), path...), f.Name)
			if inner, ok := f.Type.Resolved().(*ast.StructDecl); ok {
				if err := walk(inner, fp); err != nil {
					return err
				}
				continue
			}
			name, ok := ht.flat[strings.Join(fp, ".")]
			if !ok {
				return unsupported(n, "field %s", strings.Join(fp, "."))
			}
			out = append(out, &scalarV{ref: bmv2json.Field(h.h.Name, name), t: f.Type.Resolved(), loc: true})
		}
		return nil
	}
	return out, walk(sd, h.path)
}

// storeStructInHeader copies a struct into, or out of, a struct field of a
// header, field by field.
func (a *actx) storeStructInHeader(n ast.Node, dst, src val) error {
	leaves := func(v val) ([]val, error) {
		switch x := v.(type) {
		case *headerV:
			if len(x.path) == 0 {
				break
			}
			fs, err := a.structInHeader(n, x)
			out := make([]val, len(fs))
			for i, f := range fs {
				out[i] = f
			}
			return out, err
		case *tupleV:
			return x.elems, nil
		case *structV:
			var out []val
			for _, f := range x.decl.Fields {
				out = append(out, x.fields[f.Name])
			}
			return out, nil
		}
		return nil, unsupported(n, "copying %s into a struct inside a header", kindOf(v))
	}
	d, err := leaves(dst)
	if err != nil {
		return err
	}
	s, err := leaves(src)
	if err != nil {
		return err
	}
	if len(d) != len(s) {
		return unsupported(n, "copying a struct inside a header from a value of another shape")
	}
	for i := range d {
		if err := a.store(n, d[i], s[i]); err != nil {
			return err
		}
	}
	return nil
}

// store writes src into the location dst (scalars, headers, structs,
// stacks), field by field where bmv2 has no whole-value primitive.
func (a *actx) store(n ast.Node, dst, src val) error {
	switch src.(type) {
	case *tupleV, *structV:
		// An initializer is copied field by field: when it reads what the
		// copy overwrites (s = {s.y, s.x}), read it all first.
		if _, scalar := dst.(*scalarV); !scalar && overlaps(dst, src) {
			snap, ok := a.snapshotVal(src)
			if !ok {
				return unsupported(n, "an initializer that reads headers or varbits this assignment overwrites")
			}
			src = snap
		}
	}
	switch d := dst.(type) {
	case *scalarV:
		if !d.loc {
			return unsupported(n, "assignment to a value that is not a location")
		}
		s, ok := src.(*scalarV)
		if !ok {
			return unsupported(n, "assignment of a non-scalar to a scalar")
		}
		if s.ref == d.ref {
			return nil
		}
		a.emitPrim(a.assignPrim(d.ref, s.ref))
		return nil
	case *headerV:
		if hs, ok := src.(*headerV); ok && hs.dyn != nil {
			if d.dyn != nil || len(d.path) > 0 || len(hs.path) > 0 || hs.last != nil || d.h.Metadata || a.inParser {
				return unsupported(n, "copying from a stack element chosen at run time")
			}
			// As p4c writes it: assign_header from the dereference.
			a.emitPrim(prim("assign_header", bmv2json.Named("header", d.h.Name), param(hs.dyn)))
			return nil
		}
		if d.dyn != nil {
			return a.storeRuntimeElement(n, d, src)
		}
		if hs, ok := src.(*headerV); len(d.path) > 0 || ok && len(hs.path) > 0 {
			return a.storeStructInHeader(n, d, src)
		}
		switch s := src.(type) {
		case *headerV:
			if s.h == d.h {
				return nil
			}
			if d.h.Metadata || s.h.Metadata {
				// Metadata (standard_metadata and its copies) has no
				// validity: copy it field by field, as p4c does.
				for _, f := range a.l.headerFields(d) {
					a.emitPrim(a.assignPrim(bmv2json.Field(d.h.Name, f.name), bmv2json.Field(s.h.Name, f.name)))
				}
				return nil
			}
			a.emitPrim(prim("assign_header", bmv2json.Named("header", d.h.Name), bmv2json.Named("header", s.h.Name)))
			return nil
		case *tupleV, *structV:
			if hasVarbit(d.h.Type) {
				return unsupported(n, "initializing a header with a varbit field")
			}
			// Header initializer: the header becomes valid with these fields.
			a.emitPrim(prim("add_header", bmv2json.Named("header", d.h.Name)))
			if len(a.l.headerFields(d)) != len(d.decl.Fields) {
				return unsupported(n, "initializing a header that contains structs")
			}
			for i, f := range d.decl.Fields {
				var fv val
				if t, ok := s.(*tupleV); ok && i < len(t.elems) {
					fv = t.elems[i]
				} else if sv, ok := s.(*structV); ok {
					fv = sv.fields[f.Name]
				}
				if fv == nil {
					continue
				}
				if err := a.store(n, &scalarV{ref: bmv2json.Field(d.h.Name, f.Name), t: f.Type.Resolved(), loc: true}, fv); err != nil {
					return err
				}
			}
			return nil
		}
	case *structV:
		switch s := src.(type) {
		case *structV:
			if s == d {
				return nil
			}
			for _, f := range d.decl.Fields {
				if s.fields[f.Name] == nil {
					continue
				}
				if err := a.store(n, d.fields[f.Name], s.fields[f.Name]); err != nil {
					return err
				}
			}
			return nil
		case *tupleV:
			for i, f := range d.decl.Fields {
				if i < len(s.elems) {
					if err := a.store(n, d.fields[f.Name], s.elems[i]); err != nil {
						return err
					}
				}
			}
			return nil
		}
	case *tupleV:
		if s, ok := src.(*tupleV); ok && len(s.elems) == len(d.elems) {
			if s == d {
				return nil
			}
			return a.storeEach(n, d.elems, s.elems)
		}
	case *varbitV:
		if s, ok := src.(*varbitV); ok {
			if s.ref != d.ref {
				a.emitPrim(prim("assign_VL", d.ref, s.ref))
			}
			return nil
		}
	case *unionV:
		if s, ok := src.(*unionV); ok && s.decl == d.decl {
			if s != d {
				a.emitPrim(prim("assign_union", bmv2json.Named("header_union", d.u.Name), bmv2json.Named("header_union", s.u.Name)))
			}
			return nil
		}
	case *unionStackV:
		if s, ok := src.(*unionStackV); ok && len(s.elem) == len(d.elem) {
			if s != d {
				a.emitPrim(prim("assign_union_stack", bmv2json.Named("header_union_stack", d.s.Name), bmv2json.Named("header_union_stack", s.s.Name)))
			}
			return nil
		}
	case *stackV:
		if s, ok := src.(*stackV); ok && len(s.elem) == len(d.elem) {
			if s == d {
				return nil
			}
			dsts, srcs := make([]val, len(d.elem)), make([]val, len(s.elem))
			for i := range d.elem {
				dsts[i], srcs[i] = d.elem[i], s.elem[i]
			}
			return a.storeEach(n, dsts, srcs)
		}
	}
	return unsupported(n, "assigning %s to %s", kindOf(src), kindOf(dst))
}

// storeEach stores srcs[i] into dsts[i] in order.
func (a *actx) storeEach(n ast.Node, dsts, srcs []val) error {
	for i := range dsts {
		if err := a.store(n, dsts[i], srcs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (a *actx) ifStmt(x *ast.IfStmt) error {
	c, err := a.cond(x.Cond)
	if err != nil {
		return err
	}
	if c.Kind == bmv2json.KindBool {
		// Constant condition: keep only the live branch.
		if c.Bool {
			return a.stmt(x.Then)
		}
		if x.Else != nil {
			return a.stmt(x.Else)
		}
		return nil
	}
	jz := len(*a.prims)
	a.emit(prim("_jump_if_zero", param(b2d(c)), hexInt(0, 32)))
	if err := a.stmt(x.Then); err != nil {
		return err
	}
	if x.Else == nil {
		a.patch(jz, 1, len(*a.prims))
		return nil
	}
	j := len(*a.prims)
	a.emit(prim("_jump", hexInt(0, 32)))
	a.patch(jz, 1, len(*a.prims))
	if err := a.stmt(x.Else); err != nil {
		return err
	}
	a.patch(j, 0, len(*a.prims))
	return nil
}

// patch sets the jump target (parameter i of primitive at) to target.
func (a *actx) patch(at, i, target int) {
	(*a.prims)[at].Parameters[i] = bmv2json.Hexstr(fmt.Sprintf("0x%x", target))
}

// finishReturns points the collected return jumps at the current end.
// Parser states have no jumps: there a return that is the function's last
// statement loses its (needless) jump, and an earlier one is unsupported.
func (a *actx) finishReturns(r *retCtx) error {
	if a.inParser {
		if n := len(r.jumps); n > 0 && r.jumps[n-1] == len(*a.prims)-1 {
			*a.prims = (*a.prims)[:len(*a.prims)-1]
			r.jumps, r.stmts = r.jumps[:n-1], r.stmts[:n-1]
		}
		if len(r.jumps) > 0 {
			return unsupported(r.stmts[0], "return before the end of a function called in a parser")
		}
	}
	end := len(*a.prims)
	for _, j := range r.jumps {
		a.patch(j, 0, end)
	}
	return nil
}
