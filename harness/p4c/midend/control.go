package midend

import (
	"fmt"
	"math/big"
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
	done, err := a.bindParams(call, cd.Params, sc, false)
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

// multiApply is a table applied at several places of one control body.
// bmv2 has one node per table, so every site records its number in a
// scalar before the table, and the table's successors are chains of
// conditionals on that number leading to each site's continuation (the
// sites are mutually exclusive; two on one path would be a loop, which
// checkAcyclic rejects).
type multiApply struct {
	sites   int
	hitMiss bool // the sites use .hit/.miss (else the action run)
	next    int  // sites lowered so far
	siteVar *scalarV
	// chains maps a next_tables key to the slot of each site.
	chains map[string][]slot
	// keyPrep recomputes key temporaries before each site.
	keyPrep []bmv2json.Primitive
}

// prescanApplies finds the tables applied more than once in body and
// records them for the control instance whose prefix is given.
func (l *lowerer) prescanApplies(body *ast.BlockStmt, prefix string) error {
	count := map[*ast.TableDecl]int{}
	hm := map[*ast.Call]bool{}
	var calls []*ast.Call
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Call:
			if x.Kind == ast.CallTableApply {
				count[x.Table]++
				calls = append(calls, x)
			}
		case *ast.Member:
			if x.Kind == ast.MemberTableHit || x.Kind == ast.MemberTableMiss {
				if c, ok := x.X.(*ast.Call); ok {
					hm[c] = true
				}
			}
		}
		return true
	})
	for _, c := range calls {
		if count[c.Table] < 2 {
			continue
		}
		key := tableKey{decl: c.Table, prefix: prefix}
		m := l.multi[key]
		if m == nil {
			m = &multiApply{sites: count[c.Table], hitMiss: hm[c]}
			l.multi[key] = m
		}
		if m.hitMiss != hm[c] {
			return unsupported(c, "table %s applied both for .hit/.miss and for its action", c.Table.Name)
		}
	}
	return nil
}

// applyTable lowers `t.apply()` and links it into the graph. It returns
// the table and, for this application, the slot each successor key (an
// action name, or "__HIT__"/"__MISS__" when hitMiss) is linked from.
func (c *cctx) applyTable(call *ast.Call, hitMiss bool) (*Table, func(key string) slot, error) {
	td := call.Table
	key := tableKey{decl: td, prefix: c.sc.prefix}
	m := c.l.multi[key]
	if m != nil && m.hitMiss != hitMiss {
		return nil, nil, unsupported(call, "table %s applied both for .hit/.miss and for its action", td.Name)
	}
	if t, dup := c.l.tables[key]; dup {
		if m == nil || m.next >= m.sites {
			return nil, nil, unsupported(call, "applying table %s more than once here", td.Name)
		}
		site := m.next
		m.next++
		if len(c.block) == 0 {
			c.blockPos = call.Pos
		}
		c.block = append(c.block, m.keyPrep...)
		c.block = append(c.block, prim("assign", m.siteVar.ref, hexInt(int64(site), 8)))
		c.flush()
		c.link(t.Name)
		return t, func(k string) slot { return m.chains[k][site] }, nil
	}
	t := &Table{Name: cpName(td.Annos, td.Name, c.sc.prefix), Pos: td.Pos, Annos: td.Annos, Next: map[string]*string{}}
	c.l.tables[key] = t
	c.l.names[t.Name] = true
	if len(c.block) == 0 {
		c.blockPos = call.Pos
	}
	a := c.actx()
	before := len(c.block)
	if err := c.tableKeys(a, td, t); err != nil {
		return nil, nil, err
	}
	if err := c.tableActions(a, td, t); err != nil {
		return nil, nil, err
	}
	if err := c.tableProps(td, t); err != nil {
		return nil, nil, err
	}
	keys := []string{"__HIT__", "__MISS__"}
	if !hitMiss {
		keys = nil
		for _, u := range t.Actions {
			keys = append(keys, u.Action.Name)
		}
	}
	for _, k := range keys {
		t.Next[k] = nil
	}
	if m != nil {
		m.keyPrep = append([]bmv2json.Primitive(nil), c.block[before:]...)
		m.siteVar = c.l.tempScalar(&ast.BitsType{Width: 8})
		c.block = append(c.block, prim("assign", m.siteVar.ref, hexInt(0, 8)))
		m.next = 1
	}
	c.flush()
	c.pipe.Tables = append(c.pipe.Tables, t)
	c.link(t.Name)
	if m == nil {
		return t, func(k string) slot { return func(n *string) { t.Next[k] = n } }, nil
	}
	m.chains = map[string][]slot{}
	for _, k := range keys {
		k := k
		m.chains[k] = c.dispatch(call, m, func(n *string) { t.Next[k] = n })
	}
	return t, func(k string) slot { return m.chains[k][0] }, nil
}

// dispatch builds the chain of conditionals `site == i` hanging off entry
// and returns the slot of each site's continuation.
func (c *cctx) dispatch(n ast.Node, m *multiApply, entry slot) []slot {
	slots := make([]slot, m.sites)
	prev := entry
	for i := 0; i < m.sites-1; i++ {
		cn := &Cond{Name: c.l.nodeName(), Pos: n.Position(), Expr: exprOp("==", m.siteVar.ref, hexInt(int64(i), 8))}
		c.pipe.Conds = append(c.pipe.Conds, cn)
		name := cn.Name
		prev(&name)
		slots[i] = func(x *string) { cn.True = x }
		prev = func(x *string) { cn.False = x }
	}
	slots[m.sites-1] = prev
	return slots
}

// checkAcyclic rejects a pipeline graph with a cycle (a table applied
// twice on one path).
func (p *Pipeline) checkAcyclic() error {
	succ := map[string][]*string{}
	pos := map[string]ast.Pos{}
	for _, t := range p.Tables {
		pos[t.Name] = t.Pos
		for _, n := range t.Next {
			succ[t.Name] = append(succ[t.Name], n)
		}
	}
	for _, cn := range p.Conds {
		pos[cn.Name] = cn.Pos
		succ[cn.Name] = append(succ[cn.Name], cn.True, cn.False)
	}
	state := map[string]int{} // 1 on the stack, 2 done
	var visit func(n string) error
	visit = func(n string) error {
		switch state[n] {
		case 1:
			return &Error{Pos: pos[n], Unsupported: true, Msg: fmt.Sprintf("%s is reached again after itself (a table applied twice on one path)", n)}
		case 2:
			return nil
		}
		state[n] = 1
		for _, s := range succ[n] {
			if s != nil {
				if err := visit(*s); err != nil {
					return err
				}
			}
		}
		state[n] = 2
		return nil
	}
	if p.Init != nil {
		return visit(*p.Init)
	}
	return nil
}

var matchKinds = map[string]bool{"exact": true, "lpm": true, "ternary": true, "range": true, "optional": true}

func (c *cctx) tableKeys(a *actx, td *ast.TableDecl, t *Table) error {
	for _, k := range td.Keys {
		mk := k.MatchKind.Name
		if !matchKinds[mk] {
			return unsupported(k, "match kind %s", mk)
		}
		name := ExprText(k.Expr)
		if n, ok := k.Annos.StringArg("name"); ok {
			name = n
		}
		ke := KeyElem{MatchType: mk, Name: name, Annos: k.Annos}
		expr := k.Expr
		if sl, ok := expr.(*ast.Slice); ok {
			base, err := a.value(sl.X)
			if err != nil {
				return err
			}
			if s, ok := base.(*scalarV); ok && isFieldRef(s.ref) {
				bt, _ := scalarType(s.t)
				h, f, _ := s.ref.FieldRef()
				ke.Target = []string{h, f}
				ke.Mask = hexConst(new(big.Int).Lsh(mask(sl.HiVal-sl.LoVal+1), uint(sl.LoVal)), bt.width)
				ke.Width = sl.HiVal - sl.LoVal + 1
				if sl.LoVal != 0 {
					// bmv2 does not shift masked keys; compute the slice instead.
					ke.Mask = ""
					ke.Target = nil
				} else {
					t.Keys = append(t.Keys, ke)
					continue
				}
			}
		}
		v, err := a.value(expr)
		if err != nil {
			return err
		}
		s, ok := v.(*scalarV)
		if !ok {
			return unsupported(k, "table key of this type")
		}
		st, _ := scalarType(s.t)
		ke.Width = st.width
		switch x := s.t.(type) {
		case *ast.ErrorType:
			ke.Opaque = true
		case *ast.EnumDecl:
			ke.Opaque = x.Underlying == nil
			if x.Underlying != nil {
				ke.Enum = x.Name
			}
		}
		if !isFieldRef(s.ref) {
			tmp := c.l.tempScalar(s.t)
			c.block = append(c.block, prim("assign", tmp.ref, param(s.ref)))
			s = tmp
		}
		h, f, _ := s.ref.FieldRef()
		ke.Target = []string{h, f}
		t.Keys = append(t.Keys, ke)
	}
	return nil
}

// tableAction returns the lowered action for an entry of a table's action
// list, lowering it on first use.
func (c *cctx) tableAction(a *actx, ref *ast.ActionRef) (*Action, int, error) {
	ad, ok := ref.Name.Decl.(*ast.ActionDecl)
	if !ok {
		return nil, 0, unsupported(ref, "action reference to %s", ref.Name.Name)
	}
	prefix := ""
	if ad.Control != nil {
		prefix = c.sc.prefix
	} else if len(c.onExit) > 0 && hasExit(ad.Body) {
		// Its exit path would carry this control instance's copy-outs,
		// but a top-level action is shared by every control.
		return nil, 0, unsupported(ref, "top-level action %s that exits, used by a table of an inlined control", ad.Name)
	}
	var boundText []string
	for _, arg := range ref.Args {
		boundText = append(boundText, ExprText(arg.Value))
	}
	key := actionKey{decl: ad, prefix: prefix, bound: strings.Join(boundText, ",")}
	nb := len(ref.Args)
	if act, ok := c.l.actions[key]; ok {
		return act, nb, nil
	}
	act := &Action{Name: cpName(ad.Annos, ad.Name, prefix), Pos: ad.Pos, Annos: ad.Annos}
	if c.l.names[act.Name] && !c.l.actionNames[act.Name] {
		act.Name = c.l.uniqueName(act.Name)
	}
	c.l.names[act.Name] = true
	c.l.actionNames[act.Name] = true
	sc := newScope(c.sc, c.sc.prefix)
	if nb > len(ad.Params) {
		return nil, 0, srcError(ref, "too many arguments for action %s", ad.Name)
	}
	for i, p := range ad.Params {
		if i < nb {
			v, err := a.value(ref.Args[i].Value)
			if err != nil {
				return nil, 0, err
			}
			sc.m[p] = v
			continue
		}
		if p.Dir != ast.DirNone {
			return nil, 0, unsupported(p, "action parameter %s with a direction not bound in the actions list", p.Name)
		}
		st, ok := scalarType(p.Type.Resolved())
		if !ok {
			return nil, 0, unsupported(p, "action data of type %v", p.Type.Resolved())
		}
		sc.m[p] = &scalarV{ref: bmv2json.Param(len(act.Params)), t: p.Type.Resolved()}
		prm := Param{Name: p.Name, Width: st.width, Annos: p.Annos}
		if ed, ok := p.Type.Resolved().(*ast.EnumDecl); ok && ed.Underlying != nil {
			prm.Enum = ed.Name
		}
		act.Params = append(act.Params, prm)
	}
	var exits []int
	ax := &actx{l: c.l, sc: sc, prims: &act.Prims, inAction: true, exits: &exits}
	r := &retCtx{}
	ax.ret = r
	if err := ax.block(ad.Body); err != nil {
		return nil, 0, err
	}
	ax.finishReturns(r)
	if err := c.exitPath(ax, exits); err != nil {
		return nil, 0, err
	}
	c.l.actions[key] = act
	c.l.out.Actions = append(c.l.out.Actions, act)
	return act, nb, nil
}

// constArgs converts the constant arguments of an action reference (after
// the bound ones) to hex strings of the parameter widths.
func constArgs(ref *ast.ActionRef, act *Action, nb int) ([]string, error) {
	var out []string
	for i, arg := range ref.Args[nb:] {
		v, ok := bigOf(arg.Value)
		if !ok {
			return nil, unsupported(arg.Value, "action argument that is not a constant")
		}
		if i >= len(act.Params) {
			return nil, srcError(arg.Value, "too many arguments for action %s", act.Name)
		}
		w := act.Params[i].Width
		if v.Sign() < 0 {
			v = new(big.Int).And(v, mask(w))
		}
		out = append(out, hexConst(v, w))
	}
	return out, nil
}

func (c *cctx) tableActions(a *actx, td *ast.TableDecl, t *Table) error {
	for _, ref := range td.Actions {
		act, _, err := c.tableAction(a, ref)
		if err != nil {
			return err
		}
		t.Actions = append(t.Actions, ActionUse{
			Action: act, decl: ref.Name.Decl.(*ast.ActionDecl), Annos: ref.Annos,
			DefaultOnly: ref.Annos.Get("defaultonly") != nil, TableOnly: ref.Annos.Get("tableonly") != nil,
		})
	}
	dref := td.DefaultAction
	if dref == nil {
		na, ok := c.l.prog.Lookup("NoAction").(*ast.ActionDecl)
		if !ok {
			return unsupported(td, "table without default_action when NoAction is not declared")
		}
		act, _, err := c.tableAction(a, &ast.ActionRef{Pos: td.Pos, Name: &ast.Ident{Pos: td.Pos, Name: "NoAction", Decl: na}})
		if err != nil {
			return err
		}
		found := false
		for _, u := range t.Actions {
			found = found || u.Action == act
		}
		if !found {
			t.Actions = append(t.Actions, ActionUse{Action: act, decl: na, DefaultOnly: true})
		}
		t.Default = act
		return nil
	}
	// The default action is one of the listed ones: bound args are the
	// same; the rest are the constant action data.
	ad, ok := dref.Name.Decl.(*ast.ActionDecl)
	if !ok {
		return unsupported(dref, "default_action of this form")
	}
	var use *ActionUse
	for i := range t.Actions {
		if t.Actions[i].decl == ad {
			use = &t.Actions[i]
		}
	}
	if use == nil {
		return srcError(dref, "default action %s is not in the actions list of table %s", ad.Name, td.Name)
	}
	nb := len(ad.Params) - len(use.Action.Params)
	if len(dref.Args) < nb {
		nb = len(dref.Args)
	}
	args, err := constArgs(dref, use.Action, nb)
	if err != nil {
		return err
	}
	t.Default = use.Action
	t.DefaultArgs = args
	t.DefaultConst = td.DefaultActionConst
	return nil
}

func (c *cctx) tableProps(td *ast.TableDecl, t *Table) error {
	t.Size = 1024
	if td.Size != nil {
		v, ok := bigOf(td.Size)
		if !ok {
			return unsupported(td.Size, "table size that is not a constant")
		}
		t.Size = int(v.Int64())
	}
	for _, p := range td.Custom {
		switch p.Name {
		case "counters", "meters":
			id, ok := p.Value.(*ast.Ident)
			if !ok {
				return unsupported(p, "%s property of this form", p.Name)
			}
			rv, err := c.actx().value(id)
			if err != nil {
				return err
			}
			o, ok := rv.(*objV)
			if !ok {
				return unsupported(p, "%s property that is not an extern instance", p.Name)
			}
			if p.Name == "counters" && o.counter != nil && o.counter.Direct {
				o.counter.Binding = t.Name
				t.DirectCounter = o.counter.Name
				continue
			}
			if p.Name == "meters" && o.meter != nil && o.meter.Direct {
				o.meter.Binding = t.Name
				t.DirectMeter = o.meter.Name
				continue
			}
			return unsupported(p, "%s property with %s", p.Name, o.name)
		case "support_timeout":
			if cst := p.Value.Info().Const; cst != nil && cst.Kind == ast.ValBool && !cst.Bool {
				continue
			}
			return unsupported(p, "idle timeout (support_timeout = true)")
		default:
			return unsupported(p, "table property %s", p.Name)
		}
	}
	if td.HasEntries {
		if err := c.tableEntries(td, t); err != nil {
			return err
		}
	}
	return nil
}

func (c *cctx) tableEntries(td *ast.TableDecl, t *Table) error {
	t.EntriesConst = td.EntriesConst
	for i, e := range td.Entries {
		if len(e.Keys) != len(t.Keys) {
			return srcError(e, "entry has %d keys, table %s has %d", len(e.Keys), td.Name, len(t.Keys))
		}
		// bmv2 lets the numerically smallest priority win; entries are
		// tried in source order unless @priority(N) says otherwise.
		en := Entry{Pos: e.Pos, Priority: i + 1}
		if e.Priority != nil {
			return unsupported(e.Priority, "entry priorities written as `priority = N` (use @priority(N))")
		}
		if an := e.Annos.Get("priority"); an != nil {
			v, ok := AnnotationInt(an)
			if !ok {
				return unsupported(e, "@priority without a constant argument")
			}
			en.Priority = int(v.Int64())
		}
		for j, k := range e.Keys {
			mk, err := entryKey(k, t.Keys[j])
			if err != nil {
				return err
			}
			en.Keys = append(en.Keys, mk)
		}
		ad, ok := e.Action.Name.Decl.(*ast.ActionDecl)
		if !ok {
			return unsupported(e.Action, "entry action of this form")
		}
		var use *ActionUse
		for k := range t.Actions {
			if t.Actions[k].decl == ad {
				use = &t.Actions[k]
			}
		}
		if use == nil {
			return srcError(e.Action, "action %s is not in the actions list of table %s", ad.Name, td.Name)
		}
		nb := len(ad.Params) - len(use.Action.Params)
		if nb > len(e.Action.Args) {
			nb = len(e.Action.Args)
		}
		args, err := constArgs(e.Action, use.Action, nb)
		if err != nil {
			return err
		}
		en.Action = use.Action
		en.Args = args
		t.Entries = append(t.Entries, en)
	}
	return nil
}

// entryKey converts one keyset expression of a const entry.
func entryKey(k ast.Expr, ke KeyElem) (bmv2json.MatchKey, error) {
	w := ke.Width
	str := func(v *big.Int) *string {
		s := hexConst(new(big.Int).And(v, mask(w)), w)
		return &s
	}
	mk := bmv2json.MatchKey{MatchType: ke.MatchType}
	if b, ok := k.(*ast.Binary); ok && b.Op == ast.OpRange {
		lo, ok1 := bigOf(b.X)
		hi, ok2 := bigOf(b.Y)
		if ke.MatchType != "range" || !ok1 || !ok2 {
			return mk, unsupported(k, "range keyset here")
		}
		mk.Start, mk.End = str(lo), str(hi)
		return mk, nil
	}
	v, m, err := keyValueMask(k, w)
	if err != nil {
		return mk, err
	}
	full := m.Cmp(mask(w)) == 0
	switch ke.MatchType {
	case "exact":
		if !full {
			return mk, unsupported(k, "wildcard or mask on an exact key")
		}
		mk.Key = str(v)
	case "ternary", "optional":
		// bmv2 has no optional entries: a ternary value/mask pair (the
		// backend makes such keys ternary).
		mk.MatchType = "ternary"
		mk.Key, mk.Mask = str(v), str(m)
	case "lpm":
		pl := 0
		for i := w - 1; i >= 0 && m.Bit(i) == 1; i-- {
			pl++
		}
		if new(big.Int).Lsh(mask(pl), uint(w-pl)).Cmp(m) != 0 {
			return mk, unsupported(k, "lpm mask that is not a prefix")
		}
		mk.Key, mk.PrefixLength = str(v), &pl
	case "range":
		if !full && m.Sign() != 0 {
			return mk, unsupported(k, "mask on a range key")
		}
		if m.Sign() == 0 {
			mk.Start, mk.End = str(big.NewInt(0)), str(mask(w))
		} else {
			mk.Start, mk.End = str(v), str(v)
		}
	}
	return mk, nil
}

// keyValueMask reads a keyset component: `_`/default is value 0 mask 0,
// `v &&& m` is (v & m, m), a constant is itself with the full mask.
func keyValueMask(k ast.Expr, w int) (v, m *big.Int, err error) {
	switch x := k.(type) {
	case *ast.Default, *ast.DontCare:
		return big.NewInt(0), big.NewInt(0), nil
	case *ast.Binary:
		if x.Op == ast.OpMask {
			v, ok1 := bigOf(x.X)
			m, ok2 := bigOf(x.Y)
			if !ok1 || !ok2 {
				return nil, nil, unsupported(k, "mask that is not a constant")
			}
			m = new(big.Int).And(m, mask(w))
			return new(big.Int).And(v, m), m, nil
		}
	}
	c, ok := bigOf(k)
	if !ok {
		return nil, nil, unsupported(k, "key that is not a constant")
	}
	return c, mask(w), nil
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
