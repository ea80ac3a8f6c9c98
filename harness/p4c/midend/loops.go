package midend

import (
	"math/big"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// forStmt lowers a for loop. A loop whose trip count is known at compile
// time is unrolled (forward jumps only). Any other loop becomes a
// backward jump, the way p4c's bmv2 back end runs loops: the condition is
// tested before each iteration, continue jumps to the update, break past
// the loop. `for (T v in lo .. hi)` counts v from lo to hi inclusive
// (bounds evaluated once; unsigned only).
func (a *actx) forStmt(s ast.Stmt) error {
	if a.inParser {
		return unsupported(s, "for loops in parsers")
	}
	// Table and control applications inside a loop never get here: the
	// control lowering rejects them before lowering straight-line code.
	outer := a.loop
	a.loop = &loopCtx{}
	defer func() { a.loop = outer }()
	lp, err := a.loopStart(s)
	if err != nil {
		return err
	}
	if n, ok := tripCount(s); ok && a.l.unrolledCopies+n <= maxUnroll {
		a.l.unrolledCopies += n
		return a.unrolled(lp, n)
	}
	top := len(*a.prims)
	if lp.cond != nil {
		a.loop.breaks = append(a.loop.breaks, len(*a.prims))
		a.emit(prim("_jump_if_zero", param(b2d(lp.cond)), hexInt(0, 32)))
	}
	if err := a.stmt(lp.body); err != nil {
		return err
	}
	update := len(*a.prims)
	if lp.last != nil {
		// for ... in: leave after hi, before the counter could wrap.
		a.loop.breaks = append(a.loop.breaks, len(*a.prims))
		a.emit(prim("_jump_if_zero", param(b2d(exprOp("!=", lp.last[0], lp.last[1]))), hexInt(0, 32)))
	}
	if err := lp.step(); err != nil {
		return err
	}
	a.emit(prim("_jump", hexInt(int64(top), 32)))
	end := len(*a.prims)
	for _, j := range a.loop.breaks {
		// A conditional jump keeps its target in parameter 1.
		a.patch(j, len((*a.prims)[j].Parameters)-1, end)
	}
	for _, j := range a.loop.continues {
		a.patch(j, 0, update)
	}
	return nil
}

// loopParts are the pieces of a lowered loop header.
type loopParts struct {
	body ast.Stmt
	cond *bmv2json.Value // tested before each iteration; nil: none
	step func() error    // emits the update
	// last, for `for ... in`, is the counter and the upper bound: the loop
	// ends after the iteration where they are equal.
	last []*bmv2json.Value
}

// loopStart emits a loop's initialization and returns its other parts.
func (a *actx) loopStart(s ast.Stmt) (*loopParts, error) {
	switch x := s.(type) {
	case *ast.ForStmt:
		for _, st := range x.Init {
			if err := a.stmt(st); err != nil {
				return nil, err
			}
		}
		lp := &loopParts{body: x.Body, step: func() error {
			for _, st := range x.Update {
				if err := a.stmt(st); err != nil {
					return err
				}
			}
			return nil
		}}
		if x.Cond != nil {
			top := len(*a.prims)
			c, err := a.cond(x.Cond)
			if err != nil {
				return nil, err
			}
			if len(*a.prims) != top {
				return nil, unsupported(x.Cond, "a for-loop condition with side effects")
			}
			lp.cond = c
		}
		return lp, nil
	case *ast.ForInStmt:
		rng := x.Range.(*ast.Binary) // the checker accepts only lo .. hi
		vt := x.Var.Type.Resolved()
		ti, ok := scalarType(vt)
		if !ok || ti.signed {
			return nil, unsupported(x.Var, "for ... in over a range of type %v", vt)
		}
		v, err := a.l.alloc(x.Var, vt, x.Var.Name, x.Var.Name)
		if err != nil {
			return nil, err
		}
		a.sc.m[x.Var] = v
		iv := v.(*scalarV)
		lo, err := a.data(rng.X)
		if err != nil {
			return nil, err
		}
		hi, err := a.data(rng.Y)
		if err != nil {
			return nil, err
		}
		hiT := a.l.tempScalar(vt)
		a.emitPrim(a.assignPrim(hiT.ref, hi))
		a.emitPrim(a.assignPrim(iv.ref, lo))
		return &loopParts{
			body: x.Body,
			cond: exprOp("<=", iv.ref, hiT.ref),
			last: []*bmv2json.Value{iv.ref, hiT.ref},
			step: func() error {
				a.emitPrim(a.assignPrim(iv.ref, fixWidth(exprOp("+", iv.ref, hexInt(1, ti.width)), ti)))
				return nil
			},
		}, nil
	}
	return nil, unsupported(s, "this loop")
}

// maxUnroll bounds the loop body copies unrolling may make in a whole
// program (nested loops multiply); loops beyond it jump instead.
const maxUnroll = 256

// unrolled emits n copies of the loop body, each followed by the update;
// continue jumps to its copy's update, break past the last copy.
func (a *actx) unrolled(lp *loopParts, n int) error {
	for k := 0; k < n; k++ {
		a.loop.continues = nil
		if err := a.stmt(lp.body); err != nil {
			return err
		}
		for _, j := range a.loop.continues {
			a.patch(j, 0, len(*a.prims))
		}
		if err := lp.step(); err != nil {
			return err
		}
	}
	end := len(*a.prims)
	for _, j := range a.loop.breaks {
		a.patch(j, 0, end)
	}
	return nil
}

// tripCount returns how often a loop body runs when that is known at
// compile time: `for (bit<W> i = C0; i OP C1; i = i +/- C2)` or
// `for (bit<W> i in C0 .. C1)` whose body never writes i, at most
// maxUnroll times.
func tripCount(s ast.Stmt) (int, bool) {
	switch x := s.(type) {
	case *ast.ForInStmt:
		rng := x.Range.(*ast.Binary)
		lo, lok := constOf(rng.X)
		hi, hok := constOf(rng.Y)
		t, ok := x.Var.Type.Resolved().(*ast.BitsType)
		if !lok || !hok || !ok || t.Signed || writes(x.Body, x.Var) {
			return 0, false
		}
		if hi.Cmp(lo) < 0 {
			return 0, true
		}
		n := new(big.Int).Sub(hi, lo)
		if !n.IsInt64() || n.Int64() >= maxUnroll {
			return 0, false
		}
		return int(n.Int64()) + 1, true
	case *ast.ForStmt:
		if len(x.Init) != 1 || len(x.Update) != 1 || x.Cond == nil {
			return 0, false
		}
		ds, ok := x.Init[0].(*ast.DeclStmt)
		if !ok {
			return 0, false
		}
		d, ok := ds.Decl.(*ast.VarDecl)
		if !ok || d.Init == nil {
			return 0, false
		}
		t, ok := d.Type.Resolved().(*ast.BitsType)
		v, vok := constOf(d.Init)
		if !ok || t.Signed || !vok || writes(x.Body, d) || writes(x.Cond, d) {
			return 0, false
		}
		cmp, ok := x.Cond.(*ast.Binary)
		if !ok {
			return 0, false
		}
		bound, bok := constOf(cmp.Y)
		if !isVar(cmp.X, d) || !bok {
			return 0, false
		}
		up, ok := x.Update[0].(*ast.AssignStmt)
		if !ok || !isVar(up.LHS, d) {
			return 0, false
		}
		inc, ok := up.RHS.(*ast.Binary)
		if !ok || !isVar(inc.X, d) || (inc.Op != ast.OpAdd && inc.Op != ast.OpSub) {
			return 0, false
		}
		delta, dok := constOf(inc.Y)
		if !dok {
			return 0, false
		}
		m := new(big.Int).Lsh(big.NewInt(1), uint(t.Width))
		v = new(big.Int).Mod(v, m)
		for n := 0; n <= maxUnroll; n++ {
			holds, ok := compare(cmp.Op, v, bound)
			if !ok {
				return 0, false
			}
			if !holds {
				return n, true
			}
			if inc.Op == ast.OpAdd {
				v.Add(v, delta)
			} else {
				v.Sub(v, delta)
			}
			v.Mod(v, m)
		}
	}
	return 0, false
}

func constOf(e ast.Expr) (*big.Int, bool) {
	if c := e.Info().Const; c != nil && c.Int != nil {
		return new(big.Int).Set(c.Int), true
	}
	return nil, false
}

func isVar(e ast.Expr, d *ast.VarDecl) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Decl == d
}

func compare(op ast.BinaryOp, a, b *big.Int) (bool, bool) {
	c := a.Cmp(b)
	switch op {
	case ast.OpLt:
		return c < 0, true
	case ast.OpLe:
		return c <= 0, true
	case ast.OpGt:
		return c > 0, true
	case ast.OpGe:
		return c >= 0, true
	case ast.OpEq:
		return c == 0, true
	case ast.OpNe:
		return c != 0, true
	}
	return false, false
}

// writes reports whether n may write the variable d: an assignment to it
// (or a slice of it) or an out/inout argument mentioning it.
func writes(n ast.Node, d *ast.VarDecl) bool {
	found := false
	mentions := func(e ast.Expr) bool {
		m := false
		ast.Inspect(e, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Decl == d {
				m = true
			}
			return !m
		})
		return m
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			lhs := x.LHS
			for {
				sl, ok := lhs.(*ast.Slice)
				if !ok {
					break
				}
				lhs = sl.X
			}
			if isVar(lhs, d) {
				found = true
			}
		case *ast.Call:
			for i, arg := range x.Args {
				if i < len(x.ArgParams) && x.ArgParams[i] != nil && x.ArgParams[i].Dir != ast.DirOut && x.ArgParams[i].Dir != ast.DirInOut {
					continue
				}
				if mentions(arg.Value) {
					found = true
				}
			}
		}
		return !found
	})
	return found
}
