package midend

import (
	"fmt"
	"strings"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// slot is a not yet known successor in the pipeline graph (a table's
// next_tables entry, a conditional's branch, the pipeline entry); it is
// filled when the next node is created.
type slot func(next *string)

// cctx lowers an apply block into the pipeline graph, continuation style:
// dangling holds the slots the next created node is linked from.
// Straight-line statements accumulate in block and become a synthesized
// table with one hidden action (p4c's tbl_act) when a table or conditional
// follows.
type cctx struct {
	l        *lowerer
	pipe     *Pipeline
	sc       *scope
	block    []bmv2json.Primitive
	blockPos ast.Pos
	exits    []int
	dangling []slot
	rets     *[]slot
	// onExit are the copy-outs of the inlined controls enclosing this
	// one, outermost first: exit still copies out (P4 semantics).
	onExit []func(*actx) error
	// err records a failure inside flush (which has no error result).
	err error
}

// lowerPipeline lowers ingress or egress.
func (l *lowerer) lowerPipeline(d ast.Decl, name string, args []val) error {
	cd, ok := d.(*ast.ControlDecl)
	if !ok {
		return unsupported(d, "%s must be a control", name)
	}
	if len(cd.Params) != len(args) {
		return unsupported(cd, "%s control with %d parameters (want %d)", name, len(cd.Params), len(args))
	}
	pipe := &Pipeline{Name: name, Pos: cd.Pos}
	sc := newScope(nil, cpName(cd.Annos, cd.Name, ""))
	l.bindTopCtorArgs(cd.CtorParams, sc)
	for i, p := range cd.Params {
		sc.m[p] = args[i]
	}
	if err := l.prescanApplies(cd.Apply, sc.prefix); err != nil {
		return err
	}
	var rets []slot
	c := &cctx{l: l, pipe: pipe, sc: sc, rets: &rets}
	c.dangling = []slot{func(n *string) { pipe.Init = n }}
	if err := c.instantiateLocals(cd); err != nil {
		return err
	}
	if err := c.blockStmt(cd.Apply); err != nil {
		return err
	}
	c.flush()
	if c.err != nil {
		return c.err
	}
	if err := pipe.checkAcyclic(); err != nil {
		return err
	}
	if name == "ingress" {
		l.out.Ingress = pipe
	} else {
		l.out.Egress = pipe
	}
	return nil
}

// instantiateLocals creates the storage of a control's local variables and
// instances in c.sc (initializers run as straight-line code).
func (c *cctx) instantiateLocals(cd *ast.ControlDecl) error {
	for _, d := range cd.Locals {
		switch x := d.(type) {
		case *ast.VarDecl:
			if err := c.straight(&ast.DeclStmt{Pos: x.Pos, Decl: x}); err != nil {
				return err
			}
		case *ast.InstanceDecl:
			o, err := c.l.allocInstance(x, c.sc.prefix)
			if err != nil {
				return err
			}
			o.declScope = c.sc
			c.sc.m[x] = o
		case *ast.ValueSetDecl:
			return unsupported(x, "value sets")
		}
	}
	return nil
}

// actx returns a straight-line lowering context appending to the block.
func (c *cctx) actx() *actx {
	return &actx{l: c.l, sc: c.sc, prims: &c.block, exits: &c.exits}
}

// straight lowers a straight-line statement into the current block.
func (c *cctx) straight(s ast.Stmt) error {
	if len(c.block) == 0 {
		c.blockPos = s.Position()
	}
	return c.actx().stmt(s)
}

// link points every dangling slot at the node called name.
func (c *cctx) link(name string) {
	n := name
	for _, s := range c.dangling {
		s(&n)
	}
	c.dangling = nil
}

// flush turns the pending straight-line code into a synthesized table.
func (c *cctx) flush() {
	if len(c.block) == 0 {
		return
	}
	if err := c.exitPath(c.actx(), c.exits); err != nil {
		c.err = err
	}
	c.exits = nil
	base := fmt.Sprintf("%sl%d", c.l.base, c.blockPos.Line)
	act := &Action{Name: c.l.uniqueName(base), Prims: c.block, Pos: c.blockPos, Hidden: true}
	c.l.out.Actions = append(c.l.out.Actions, act)
	t := &Table{
		Name: c.l.uniqueName("tbl_" + act.Name), Pos: c.blockPos, Hidden: true,
		Actions: []ActionUse{{Action: act}}, Default: act, DefaultConst: true,
		Size: 1024, Next: map[string]*string{act.Name: nil},
	}
	c.pipe.Tables = append(c.pipe.Tables, t)
	c.block = nil
	c.link(t.Name)
	name := act.Name
	c.dangling = []slot{func(n *string) { t.Next[name] = n }}
}

func (c *cctx) blockStmt(b *ast.BlockStmt) error {
	if b == nil {
		return nil
	}
	for _, s := range b.Stmts {
		if c.dangling == nil && len(c.block) == 0 {
			return nil // unreachable after return/exit
		}
		if err := c.stmt(s); err != nil {
			return err
		}
	}
	return nil
}

func (c *cctx) stmt(s ast.Stmt) error {
	switch x := s.(type) {
	case *ast.BlockStmt:
		return c.blockStmt(x)
	case *ast.EmptyStmt:
		return nil
	case *ast.ExitStmt:
		if err := c.runOnExit(); err != nil {
			return err
		}
		c.flush()
		c.dangling = nil
		return nil
	case *ast.ReturnStmt:
		if x.Value != nil {
			return unsupported(x, "return with a value in a control")
		}
		c.flush()
		*c.rets = append(*c.rets, c.dangling...)
		c.dangling = nil
		return nil
	case *ast.IfStmt:
		return c.ifStmt(x)
	case *ast.SwitchStmt:
		return c.switchStmt(x)
	case *ast.CallStmt:
		switch x.Call.Kind {
		case ast.CallTableApply:
			t, succ, err := c.applyTable(x.Call, false)
			if err != nil {
				return err
			}
			for _, u := range t.Actions {
				c.dangling = append(c.dangling, succ(u.Action.Name))
			}
			return nil
		case ast.CallControlApply:
			return c.applyControl(x.Call)
		}
	}
	if err := c.hoistApplies(s); err != nil {
		return err
	}
	defer c.dropOverrides()
	return c.straight(s)
}

// dropOverrides forgets the temporaries hoisting substituted for
// sub-expressions: they hold values of this one evaluation.
func (c *cctx) dropOverrides() {
	for k := range c.l.override {
		delete(c.l.override, k)
	}
}

// hoistApplies lowers table applications nested in the expressions of a
// straight-line statement (`bool b = t.apply().hit;`): the table is applied
// first and its hit/miss result stored in a temporary the expression then
// reads. Short-circuit operators and ?: become conditionals so a table is
// applied only when P4 would evaluate it; operands to the left of an
// application are read into temporaries first (left-to-right order).
func (c *cctx) hoistApplies(n ast.Node) error {
	var err error
	ast.Inspect(n, func(x ast.Node) bool {
		if err != nil {
			return false
		}
		if e, ok := x.(ast.Expr); ok {
			err = c.hoistExpr(e)
			return false
		}
		return true
	})
	return err
}

// containsApply reports whether e applies a table or control.
func containsApply(e ast.Node) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if c, ok := n.(*ast.Call); ok && (c.Kind == ast.CallTableApply || c.Kind == ast.CallControlApply) {
			found = true
		}
		return !found
	})
	return found
}

// snapshot reads a non-constant operand into a temporary so that a table
// applied later in the same expression cannot change what it reads.
func (c *cctx) snapshot(e ast.Expr) error {
	if e.Info().Const != nil {
		return nil
	}
	if err := c.hoistExpr(e); err != nil {
		return err
	}
	v, err := c.actx().value(e)
	if err != nil {
		return err
	}
	s, ok := v.(*scalarV)
	if !ok {
		return nil
	}
	if len(c.block) == 0 {
		c.blockPos = e.Position()
	}
	t := c.l.tempScalar(s.t)
	c.block = append(c.block, prim("assign", t.ref, param(s.ref)))
	c.l.override[e] = &scalarV{ref: t.ref, t: s.t}
	return nil
}

func (c *cctx) hoistExpr(e ast.Expr) error {
	if e == nil || !containsApply(e) {
		return nil
	}
	if _, done := c.l.override[e]; done {
		return nil
	}
	switch x := e.(type) {
	case *ast.Member:
		if x.Kind == ast.MemberTableHit || x.Kind == ast.MemberTableMiss {
			call, ok := x.X.(*ast.Call)
			if !ok || call.Kind != ast.CallTableApply {
				return unsupported(x, ".%s on this expression", x.Name)
			}
			tmp := c.l.tempScalar(ast.TBool)
			_, succ, err := c.applyTable(call, true)
			if err != nil {
				return err
			}
			hitVal, missVal := int64(1), int64(0)
			if x.Kind == ast.MemberTableMiss {
				hitVal, missVal = 0, 1
			}
			c.dangling = []slot{succ("__HIT__")}
			c.blockPos = x.Pos
			c.block = append(c.block, prim("assign", tmp.ref, hexInt(hitVal, 1)))
			c.flush()
			after := c.dangling
			c.dangling = []slot{succ("__MISS__")}
			c.blockPos = x.Pos
			c.block = append(c.block, prim("assign", tmp.ref, hexInt(missVal, 1)))
			c.flush()
			c.dangling = append(after, c.dangling...)
			c.l.override[x] = &scalarV{ref: tmp.ref, t: ast.TBool}
			return nil
		}
		return c.hoistExpr(x.X)
	case *ast.Binary:
		if (x.Op == ast.OpAnd || x.Op == ast.OpOr) && containsApply(x.Y) {
			return c.hoistChoice(x, x.X, nil, nil)
		}
		if containsApply(x.Y) {
			if err := c.snapshot(x.X); err != nil {
				return err
			}
		} else if err := c.hoistExpr(x.X); err != nil {
			return err
		}
		return c.hoistExpr(x.Y)
	case *ast.Ternary:
		if containsApply(x.Then) || containsApply(x.Else) {
			if cv := x.Cond.Info().Const; cv != nil && cv.Kind == ast.ValBool {
				live := x.Then
				if !cv.Bool {
					live = x.Else
				}
				if err := c.hoistExpr(live); err != nil {
					return err
				}
				v, err := c.actx().value(live)
				if err != nil {
					return err
				}
				c.l.override[x] = v
				return nil
			}
			return c.hoistChoice(x, x.Cond, x.Then, x.Else)
		}
		return c.hoistExpr(x.Cond)
	case *ast.Unary:
		return c.hoistExpr(x.X)
	case *ast.Call:
		if x.Kind == ast.CallTableApply || x.Kind == ast.CallControlApply {
			break
		}
		for i, arg := range x.Args {
			later := false
			for _, rest := range x.Args[i+1:] {
				later = later || containsApply(rest.Value)
			}
			if later && (x.ArgParams == nil || i >= len(x.ArgParams) || x.ArgParams[i].Dir == ast.DirIn || x.ArgParams[i].Dir == ast.DirNone) {
				if err := c.snapshot(arg.Value); err != nil {
					return err
				}
				continue
			}
			if err := c.hoistExpr(arg.Value); err != nil {
				return err
			}
		}
		return nil
	case *ast.Cast:
		return c.hoistExpr(x.X)
	case *ast.Slice:
		return c.hoistExpr(x.X)
	}
	return unsupported(e, "table or control application inside this expression")
}

// hoistChoice lowers `a && b`, `a || b` (then/els nil) or `cond ? then :
// els` whose later operands apply tables: a conditional on the first
// operand, each branch computing the result into a temporary.
func (c *cctx) hoistChoice(e ast.Expr, cond, then, els ast.Expr) error {
	if err := c.hoistExpr(cond); err != nil {
		return err
	}
	if len(c.block) == 0 {
		c.blockPos = e.Position()
	}
	cv, err := c.actx().cond(cond)
	if err != nil {
		return err
	}
	rt := e.Info().Type
	tmp := c.l.tempScalar(rt)
	c.flush()
	cn := &Cond{Name: c.l.nodeName(), Pos: e.Position(), Expr: cv}
	c.pipe.Conds = append(c.pipe.Conds, cn)
	c.link(cn.Name)
	branch := func(s slot, ex ast.Expr, constant int64) ([]slot, error) {
		c.dangling = []slot{s}
		c.blockPos = e.Position()
		if ex == nil {
			c.block = append(c.block, prim("assign", tmp.ref, hexInt(constant, 1)))
		} else {
			if err := c.hoistExpr(ex); err != nil {
				return nil, err
			}
			d, err := c.actx().data(ex)
			if err != nil {
				return nil, err
			}
			c.block = append(c.block, prim("assign", tmp.ref, param(d)))
		}
		c.flush()
		return c.dangling, nil
	}
	trueSlot := func(n *string) { cn.True = n }
	falseSlot := func(n *string) { cn.False = n }
	var a, b []slot
	switch {
	case then != nil:
		if a, err = branch(trueSlot, then, 0); err != nil {
			return err
		}
		if b, err = branch(falseSlot, els, 0); err != nil {
			return err
		}
	case e.(*ast.Binary).Op == ast.OpAnd:
		if a, err = branch(trueSlot, e.(*ast.Binary).Y, 0); err != nil {
			return err
		}
		if b, err = branch(falseSlot, nil, 0); err != nil {
			return err
		}
	default:
		if a, err = branch(trueSlot, nil, 1); err != nil {
			return err
		}
		if b, err = branch(falseSlot, e.(*ast.Binary).Y, 0); err != nil {
			return err
		}
	}
	c.dangling = append(a, b...)
	c.l.override[e] = &scalarV{ref: tmp.ref, t: rt}
	return nil
}

// hitMissCond recognises `t.apply().hit`, `.miss` and their negations.
func hitMissCond(e ast.Expr) (call *ast.Call, hit bool, ok bool) {
	neg := false
	for {
		u, isU := e.(*ast.Unary)
		if !isU || u.Op != ast.OpNot {
			break
		}
		neg = !neg
		e = u.X
	}
	m, isM := e.(*ast.Member)
	if !isM || (m.Kind != ast.MemberTableHit && m.Kind != ast.MemberTableMiss) {
		return nil, false, false
	}
	call, isC := m.X.(*ast.Call)
	if !isC || call.Kind != ast.CallTableApply {
		return nil, false, false
	}
	hit = m.Kind == ast.MemberTableHit
	if neg {
		hit = !hit
	}
	return call, hit, true
}

func (c *cctx) ifStmt(x *ast.IfStmt) error {
	var trueSlot, falseSlot slot
	if call, hit, ok := hitMissCond(x.Cond); ok {
		c.flush()
		_, succ, err := c.applyTable(call, true)
		if err != nil {
			return err
		}
		hk, mk := "__HIT__", "__MISS__"
		if !hit {
			hk, mk = mk, hk
		}
		trueSlot, falseSlot = succ(hk), succ(mk)
	} else {
		if err := c.hoistApplies(x.Cond); err != nil {
			return err
		}
		if len(c.block) == 0 {
			c.blockPos = x.Pos
		}
		cond, err := c.actx().cond(x.Cond)
		c.dropOverrides()
		if err != nil {
			return err
		}
		if cond.Kind == bmv2json.KindBool {
			if cond.Bool {
				return c.stmt(x.Then)
			}
			if x.Else != nil {
				return c.stmt(x.Else)
			}
			return nil
		}
		c.flush()
		cn := &Cond{Name: c.l.nodeName(), Pos: x.Pos, Expr: cond}
		c.pipe.Conds = append(c.pipe.Conds, cn)
		c.link(cn.Name)
		trueSlot = func(n *string) { cn.True = n }
		falseSlot = func(n *string) { cn.False = n }
	}
	c.dangling = []slot{trueSlot}
	if err := c.stmt(x.Then); err != nil {
		return err
	}
	c.flush()
	afterThen := c.dangling
	c.dangling = []slot{falseSlot}
	if x.Else != nil {
		if err := c.stmt(x.Else); err != nil {
			return err
		}
		c.flush()
	}
	c.dangling = append(afterThen, c.dangling...)
	return nil
}

func (l *lowerer) nodeName() string {
	for {
		n := fmt.Sprintf("node_%d", l.nodeSeq)
		l.nodeSeq++
		if !l.names[n] {
			l.names[n] = true
			return n
		}
	}
}

func (c *cctx) switchStmt(x *ast.SwitchStmt) error {
	m, ok := x.Expr.(*ast.Member)
	if !ok || m.Kind != ast.MemberTableActionRun {
		return c.valueSwitch(x)
	}
	call, ok := m.X.(*ast.Call)
	if !ok || call.Kind != ast.CallTableApply {
		return unsupported(x, "switch on this expression")
	}
	c.flush()
	t, succ, err := c.applyTable(call, false)
	if err != nil {
		return err
	}
	// Map each action's next_tables entry to the case body it selects.
	handled := map[string]bool{}
	var after []slot
	var pending []slot
	actionOf := func(label ast.Expr) (string, error) {
		id, ok := label.(*ast.Ident)
		if !ok {
			return "", unsupported(label, "switch label of this form")
		}
		ad, ok := id.Decl.(*ast.ActionDecl)
		if !ok {
			return "", unsupported(label, "switch label that is not an action")
		}
		for _, u := range t.Actions {
			if u.decl == ad {
				return u.Action.Name, nil
			}
		}
		return "", srcError(label, "action %s is not an action of table %s", ad.Name, t.Name)
	}
	var defaultBody *ast.BlockStmt
	hasDefault := false
	for _, cs := range x.Cases {
		if _, isDef := cs.Label.(*ast.Default); isDef {
			hasDefault = true
			defaultBody = cs.Body
			pending = nil
			continue
		}
		an, err := actionOf(cs.Label)
		if err != nil {
			return err
		}
		handled[an] = true
		name := an
		pending = append(pending, succ(name))
		if cs.Body == nil {
			continue // falls through to the next case's body
		}
		c.dangling = pending
		pending = nil
		if err := c.blockStmt(cs.Body); err != nil {
			return err
		}
		c.flush()
		after = append(after, c.dangling...)
	}
	var rest []slot
	for _, u := range t.Actions {
		if !handled[u.Action.Name] {
			rest = append(rest, succ(u.Action.Name))
		}
	}
	if hasDefault {
		c.dangling = append(pending, rest...)
		if err := c.blockStmt(defaultBody); err != nil {
			return err
		}
		c.flush()
		after = append(after, c.dangling...)
	} else {
		after = append(after, rest...)
	}
	c.dangling = after
	return nil
}

// valueSwitch lowers a switch on a bit/enum value to a chain of conditionals.
func (c *cctx) valueSwitch(x *ast.SwitchStmt) error {
	if err := c.hoistApplies(x.Expr); err != nil {
		return err
	}
	if len(c.block) == 0 {
		c.blockPos = x.Pos
	}
	a := c.actx()
	v, err := a.data(x.Expr)
	c.dropOverrides()
	if err != nil {
		return err
	}
	if !isFieldRef(v) {
		t := c.l.tempScalar(x.Expr.Info().Type)
		c.block = append(c.block, prim("assign", t.ref, param(v)))
		v = t.ref
	}
	var after []slot
	var labels []*bmv2json.Value
	for i, cs := range x.Cases {
		if _, isDef := cs.Label.(*ast.Default); isDef {
			if err := c.blockStmt(cs.Body); err != nil {
				return err
			}
			c.flush()
			c.dangling = append(after, c.dangling...)
			return nil
		}
		lv, err := a.data(cs.Label)
		if err != nil {
			return err
		}
		labels = append(labels, lv)
		if cs.Body == nil && i+1 < len(x.Cases) {
			continue
		}
		var cond *bmv2json.Value
		for _, l := range labels {
			eq := exprOp("==", v, l)
			if cond == nil {
				cond = eq
			} else {
				cond = exprOp("or", cond, eq)
			}
		}
		labels = nil
		c.flush()
		cn := &Cond{Name: c.l.nodeName(), Pos: cs.Pos, Expr: cond}
		c.pipe.Conds = append(c.pipe.Conds, cn)
		c.link(cn.Name)
		c.dangling = []slot{func(n *string) { cn.True = n }}
		if err := c.blockStmt(cs.Body); err != nil {
			return err
		}
		c.flush()
		after = append(after, c.dangling...)
		c.dangling = []slot{func(n *string) { cn.False = n }}
	}
	c.dangling = append(after, c.dangling...)
	return nil
}

// applyControl inlines `c.apply(args)` of a control instance.
func (c *cctx) applyControl(call *ast.Call) error {
	a := c.actx()
	rv, err := a.value(call.Receiver())
	if err != nil {
		return err
	}
	o, ok := rv.(*objV)
	if !ok {
		return unsupported(call, "apply on this value")
	}
	cd, ok := o.typ.Decl.(*ast.ControlDecl)
	if !ok {
		return unsupported(call, "apply of %s", o.typ.Decl.DeclName())
	}
	if len(c.block) == 0 {
		c.blockPos = call.Pos
	}
	sc := newScope(nil, o.name)
	if err := c.l.bindCtorParams(o, cd.CtorParams, sc); err != nil {
		return err
	}
	if err := c.l.prescanApplies(cd.Apply, sc.prefix); err != nil {
		return err
	}
	done, err := a.bindParams(call, cd.Params, sc, false, nil)
	if err != nil {
		return err
	}
	var rets []slot
	inner := &cctx{l: c.l, pipe: c.pipe, sc: sc, block: c.block, blockPos: c.blockPos, exits: c.exits, dangling: c.dangling, rets: &rets}
	inner.onExit = append(append([]func(*actx) error(nil), c.onExit...), done)
	if err := inner.instantiateLocals(cd); err != nil {
		return err
	}
	if err := inner.blockStmt(cd.Apply); err != nil {
		return err
	}
	if len(rets) > 0 {
		inner.flush()
		inner.dangling = append(inner.dangling, rets...)
	}
	if inner.err != nil {
		return inner.err
	}
	c.block, c.blockPos, c.exits, c.dangling = inner.block, inner.blockPos, inner.exits, inner.dangling
	if c.dangling == nil && len(c.block) == 0 {
		return nil
	}
	if len(c.block) == 0 {
		c.blockPos = call.Pos
	}
	return done(c.actx())
}

// ExprText renders an expression as P4 source, the way p4c names table
// keys in P4Info and bmv2 JSON.
func ExprText(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.Member:
		return ExprText(x.X) + "." + x.Name
	case *ast.Index:
		return ExprText(x.X) + "[" + ExprText(x.Index) + "]"
	case *ast.Slice:
		return fmt.Sprintf("%s[%d:%d]", ExprText(x.X), x.HiVal, x.LoVal)
	case *ast.IntLit:
		if x.Text != "" {
			return x.Text
		}
		return x.Value.String()
	case *ast.BoolLit:
		return fmt.Sprint(x.Value)
	case *ast.Call:
		var args []string
		for _, a := range x.Args {
			args = append(args, ExprText(a.Value))
		}
		return ExprText(x.Fun) + "(" + strings.Join(args, ", ") + ")"
	case *ast.Binary:
		return ExprText(x.X) + " " + x.Op.String() + " " + ExprText(x.Y)
	case *ast.Unary:
		return x.Op.String() + ExprText(x.X)
	case *ast.Cast:
		return "(" + typeText(x.Type) + ")" + ExprText(x.X)
	}
	return fmt.Sprintf("%T", e)
}

func typeText(t ast.TypeExpr) string {
	if r := t.Resolved(); r != nil {
		return r.String()
	}
	return "?"
}

// runOnExit emits the copy-outs of the enclosing inlined controls,
// innermost first, into the current block.
func (c *cctx) runOnExit() error {
	if len(c.onExit) > 0 && len(c.block) == 0 {
		c.blockPos = c.pipe.Pos
	}
	for i := len(c.onExit) - 1; i >= 0; i-- {
		if err := c.onExit[i](c.actx()); err != nil {
			return err
		}
	}
	return nil
}

// exitPath ends the primitive list of a with the target of its exit jumps.
// Inside inlined controls an exit still copies out their parameters (P4
// semantics), so the exit path runs those copy-outs, innermost first,
// while the normal path jumps over them. The exit primitive itself has
// already flagged the packet: bmv2 ends the control after this action.
func (c *cctx) exitPath(a *actx, exits []int) error {
	if len(exits) > 0 && len(c.onExit) > 0 {
		skip := len(*a.prims)
		a.emit(prim("_jump", hexInt(0, 32)))
		for _, j := range exits {
			a.patch(j, 0, len(*a.prims))
		}
		for i := len(c.onExit) - 1; i >= 0; i-- {
			if err := c.onExit[i](a); err != nil {
				return err
			}
		}
		a.patch(skip, 0, len(*a.prims))
		return nil
	}
	for _, j := range exits {
		a.patch(j, 0, len(*a.prims))
	}
	return nil
}

// hasExit reports whether an exit statement occurs in n or in the actions
// and functions it calls.
func hasExit(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(x ast.Node) bool {
		switch y := x.(type) {
		case *ast.ExitStmt:
			found = true
		case *ast.Call:
			if y.Action != nil && hasExit(y.Action.Body) || y.Function != nil && hasExit(y.Function.Body) {
				found = true
			}
		}
		return !found
	})
	return found
}
