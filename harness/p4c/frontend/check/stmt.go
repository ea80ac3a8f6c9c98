package check

import (
	"fmt"
	"strings"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

func exprText(e ast.Expr) string { return ast.ExprString(e) }

func (c *checker) block(b *ast.BlockStmt, parent *scope) {
	if b == nil {
		return
	}
	sc := newScope(parent)
	for i, s := range b.Stmts {
		b.Stmts[i] = c.stmt(s, sc)
	}
}

// stmt checks s and returns the statement to keep in its place: s itself,
// except for a compound assignment whose target calls a function, which
// becomes a block evaluating the call once (see hoistCalls).
func (c *checker) stmt(s ast.Stmt, sc *scope) ast.Stmt {
	if a, ok := s.(*ast.AssignStmt); ok && a.Compound && hasCall(a.LHS) {
		if b := c.hoistCalls(a, sc); b != nil {
			c.block(b, sc)
			return b
		}
		return s
	}
	switch x := s.(type) {
	case *ast.BlockStmt:
		c.block(x, sc)
	case *ast.EmptyStmt:
	case *ast.AssignStmt:
		c.assign(x, sc)
	case *ast.CallStmt:
		c.expr(x.Call, nil, sc)
	case *ast.IfStmt:
		if t := c.expr(x.Cond, ast.TBool, sc); t != nil && !isBool(t) {
			c.errorAtExpr(x.Cond, "if: the condition must be bool, not %s", t)
		}
		x.Then = c.stmt(x.Then, newScope(sc))
		if x.Else != nil {
			x.Else = c.stmt(x.Else, newScope(sc))
		}
	case *ast.SwitchStmt:
		c.switchStmt(x, sc)
	case *ast.ExitStmt:
		if c.ctx == ctxParser {
			c.errorf(x, "exit is not allowed in a parser (use transition reject)")
		}
	case *ast.ReturnStmt:
		c.returnStmt(x, sc)
	case *ast.ForStmt, *ast.ForInStmt:
		if !c.features.Loops {
			c.unsupportedf(s, "for loops")
			return s
		}
		c.forStmt(s, sc)
	case *ast.BreakStmt, *ast.ContinueStmt:
		if c.loops == 0 {
			c.errorf(s, "break and continue are only allowed inside a for loop")
		}
	case *ast.DeclStmt:
		switch d := x.Decl.(type) {
		case *ast.InstanceDecl:
			c.errorf(d, "%s: instances cannot be declared inside blocks; declare them in the parser or control", d.Name)
		default:
			c.localDecl(d, sc)
		}
	default:
		c.unsupportedf(s, "statement %T", s)
	}
	return s
}

func (c *checker) assign(x *ast.AssignStmt, sc *scope) {
	lt := c.expr(x.LHS, nil, sc)
	if x.Compound {
		// LHS op= RHS  becomes  LHS = LHS op RHS, on a fresh copy of LHS
		// (calls in LHS were hoisted into temporaries by stmt).
		rhs := &ast.Binary{Pos: x.Pos, Op: x.Op, X: cloneExpr(x.LHS), Y: x.RHS}
		x.RHS, x.Compound = rhs, false
	}
	rt := c.expr(x.RHS, lt, sc)
	if lt == nil || rt == nil {
		return
	}
	if ok, why := c.writable(x.LHS); !ok {
		c.errorAtExpr(x.LHS, "cannot assign to %s: %s", exprText(x.LHS), why)
		return
	}
	c.assignable(x.RHS, lt, exprText(x.LHS))
}

// hoistCalls turns `L op= R` where L contains calls (as in
// hdr.rest[f(x) & 7].v |= y) into
//
//	{ T tmp = f(x); hdr.rest[tmp & 7].v |= y; }
//
// so that the location is computed once, as P4 requires, before the
// compound assignment is expanded to L = L op R. It returns nil after
// reporting an error.
func (c *checker) hoistCalls(a *ast.AssignStmt, sc *scope) *ast.BlockStmt {
	blk := &ast.BlockStmt{Pos: a.Pos, End: a.Pos}
	ok := true
	a.LHS = replaceCalls(a.LHS, func(call *ast.Call) ast.Expr {
		t := c.expr(call, nil, sc)
		if t == nil {
			ok = false
			return call
		}
		if _, void := t.(*ast.VoidType); void {
			c.errorf(call, "%s returns no value", exprText(call.Fun))
			ok = false
			return call
		}
		name := c.freshName(sc, "tmp")
		v := &ast.VarDecl{Pos: call.Pos, Type: &ast.NamedType{Pos: call.Pos, Name: t.String(), T: t}, Name: name, Init: call}
		blk.Stmts = append(blk.Stmts, &ast.DeclStmt{Pos: call.Pos, Decl: v})
		// The temporary is declared below in the block's scope.
		return &ast.Ident{Pos: call.Pos, Name: name}
	})
	if !ok {
		return nil
	}
	blk.Stmts = append(blk.Stmts, a)
	return blk
}

// freshName returns base followed by the smallest number not visible in sc.
func (c *checker) freshName(sc *scope, base string) string {
	for n := 0; ; n++ {
		name := fmt.Sprintf("%s_%d", base, n)
		if len(sc.lookup(name)) == 0 && !c.usedNames[name] {
			if c.usedNames == nil {
				c.usedNames = map[string]bool{}
			}
			c.usedNames[name] = true
			return name
		}
	}
}

// replaceCalls replaces each outermost call in e by f(call), in place.
func replaceCalls(e ast.Expr, f func(*ast.Call) ast.Expr) ast.Expr {
	switch x := e.(type) {
	case *ast.Call:
		return f(x)
	case *ast.Member:
		x.X = replaceCalls(x.X, f)
	case *ast.Index:
		x.X = replaceCalls(x.X, f)
		x.Index = replaceCalls(x.Index, f)
	case *ast.Slice:
		x.X = replaceCalls(x.X, f)
	case *ast.Unary:
		x.X = replaceCalls(x.X, f)
	case *ast.Binary:
		x.X = replaceCalls(x.X, f)
		x.Y = replaceCalls(x.Y, f)
	case *ast.Ternary:
		x.Cond = replaceCalls(x.Cond, f)
		x.Then = replaceCalls(x.Then, f)
		x.Else = replaceCalls(x.Else, f)
	case *ast.Cast:
		x.X = replaceCalls(x.X, f)
	}
	return e
}

func hasCall(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if _, ok := n.(*ast.Call); ok {
			found = true
		}
		return !found
	})
	return found
}

// cloneExpr copies the syntax of a side-effect-free l-value expression
// (identifiers, members, indices, slices and constants) without its
// checker slots.
func cloneExpr(e ast.Expr) ast.Expr {
	switch x := e.(type) {
	case *ast.Ident:
		return &ast.Ident{Pos: x.Pos, Name: x.Name, TopLevel: x.TopLevel}
	case *ast.Member:
		return &ast.Member{Pos: x.Pos, X: cloneExpr(x.X), Name: x.Name}
	case *ast.Index:
		return &ast.Index{Pos: x.Pos, X: cloneExpr(x.X), Index: cloneExpr(x.Index)}
	case *ast.Slice:
		return &ast.Slice{Pos: x.Pos, X: cloneExpr(x.X), Hi: cloneExpr(x.Hi), Lo: cloneExpr(x.Lo), Width: cloneExpr(x.Width)}
	case *ast.IntLit:
		return &ast.IntLit{Pos: x.Pos, Value: x.Value, Width: x.Width, Signed: x.Signed, Text: x.Text}
	case *ast.BoolLit:
		return &ast.BoolLit{Pos: x.Pos, Value: x.Value}
	case *ast.Unary:
		return &ast.Unary{Pos: x.Pos, Op: x.Op, X: cloneExpr(x.X)}
	case *ast.Binary:
		return &ast.Binary{Pos: x.Pos, Op: x.Op, X: cloneExpr(x.X), Y: cloneExpr(x.Y)}
	case *ast.Cast:
		return &ast.Cast{Pos: x.Pos, Type: x.Type, X: cloneExpr(x.X)}
	}
	return e // not reached for l-values without calls
}

func (c *checker) forStmt(s ast.Stmt, parent *scope) {
	sc := newScope(parent)
	c.loops++
	defer func() { c.loops-- }()
	switch x := s.(type) {
	case *ast.ForStmt:
		for i, st := range x.Init {
			x.Init[i] = c.stmt(st, sc)
		}
		if x.Cond != nil {
			if t := c.expr(x.Cond, ast.TBool, sc); t != nil && !isBool(t) {
				c.errorAtExpr(x.Cond, "for: the condition must be bool, not %s", t)
			}
		}
		for i, st := range x.Update {
			x.Update[i] = c.stmt(st, sc)
		}
		x.Body = c.stmt(x.Body, newScope(sc))
	case *ast.ForInStmt:
		t := c.resolveType(x.Var.Type, sc)
		rng, ok := x.Range.(*ast.Binary)
		if !ok || rng.Op != ast.OpRange {
			c.unsupportedf(x.Range, "for ... in over anything but a range lo .. hi")
			return
		}
		if t != nil {
			if ast.Bits(t, false) == nil {
				c.errorf(x.Var, "for ... in: the loop variable must be bit<W> or int<W>, not %s", t)
				return
			}
			lo, hi := c.expr(rng.X, t, sc), c.expr(rng.Y, t, sc)
			if lo == nil || hi == nil || !c.assignable(rng.X, t, "range bound") || !c.assignable(rng.Y, t, "range bound") {
				return
			}
			rng.Type = &ast.SetType{Elem: t}
		}
		c.declare(sc, x.Var)
		x.Body = c.stmt(x.Body, newScope(sc))
	}
}

func (c *checker) returnStmt(x *ast.ReturnStmt, sc *scope) {
	switch c.ctx {
	case ctxFunction:
		rt := c.fn.Return.Resolved()
		_, void := rt.(*ast.VoidType)
		switch {
		case x.Value == nil && !void && rt != nil:
			c.errorf(x, "return: function %s must return a %s value", c.fn.Name, rt)
		case x.Value != nil && void:
			c.errorf(x, "return: function %s returns void", c.fn.Name)
			c.expr(x.Value, nil, sc)
		case x.Value != nil:
			if c.expr(x.Value, rt, sc) != nil {
				c.assignable(x.Value, rt, "the result of "+c.fn.Name)
			}
		}
	case ctxParser:
		c.errorf(x, "return is not allowed in a parser")
	default:
		if x.Value != nil {
			c.errorf(x, "return with a value is only allowed in functions")
			c.expr(x.Value, nil, sc)
		}
	}
}

func (c *checker) switchStmt(x *ast.SwitchStmt, sc *scope) {
	t := c.expr(x.Expr, nil, sc)
	if t == nil {
		for _, cs := range x.Cases {
			c.block(cs.Body, sc)
		}
		return
	}
	run, onActions := t.(*ast.ActionRunType)
	if !onActions {
		switch {
		case ast.Bits(t, false) != nil, isErrorType(t):
		case isEnum(t):
		default:
			c.errorf(x.Expr, "switch: the expression must be t.apply().action_run or a bit<W>, int<W>, enum or error value, not %s", t)
			return
		}
	}
	seen := map[string]bool{}
	for i, cs := range x.Cases {
		key := ""
		switch l := cs.Label.(type) {
		case *ast.Default:
			l.Type = ast.TDontCare
			key = "default"
			if i != len(x.Cases)-1 {
				c.errorf(cs, "switch: default must be the last label")
			}
		default:
			if onActions {
				id, ok := l.(*ast.Ident)
				if !ok {
					c.errorf(l, "switch on action_run: labels must be action names")
					break
				}
				ref := findActionRef(run.Table, id.Name)
				if ref == nil {
					c.errorf(l, "%s is not an action of table %s", id.Name, run.Table.Name)
					break
				}
				id.Decl = ref.Name.Decl
				id.Type = &ast.ActionType{Action: ref.Name.Decl.(*ast.ActionDecl)}
				key = id.Name
			} else {
				lt := c.expr(l, t, sc)
				if lt == nil || !c.assignable(l, t, "switch label") {
					break
				}
				if l.Info().Const == nil {
					c.errorf(l, "switch labels must be compile-time constants")
					break
				}
				key = l.Info().Const.String()
			}
		}
		if key != "" {
			if seen[key] {
				c.errorf(cs, "switch: duplicate label %s", key)
			}
			seen[key] = true
		}
		if cs.Body == nil && i == len(x.Cases)-1 {
			c.errorf(cs, "switch: the last label needs a body")
		}
		c.block(cs.Body, sc)
	}
}

func isErrorType(t ast.Type) bool { _, ok := t.(*ast.ErrorType); return ok }
func isEnum(t ast.Type) bool      { _, ok := t.(*ast.EnumDecl); return ok }

// findActionRef returns the actions-list entry of table t named name.
func findActionRef(t *ast.TableDecl, name string) *ast.ActionRef {
	for _, r := range t.Actions {
		if r.Name.Name == name && r.Name.Decl != nil {
			return r
		}
	}
	return nil
}

// ---- parser states ----

func (c *checker) state(s *ast.StateDecl, states *scope) {
	sc := newScope(states)
	for i, st := range s.Stmts {
		s.Stmts[i] = c.stmt(st, sc)
	}
	tr := s.Transition
	if tr == nil {
		// p4c: a state without a transition statement rejects the packet.
		c.warnf(s, "state %s has no transition statement: it takes transition reject", s.Name)
		tr = &ast.Transition{Pos: s.Pos, Next: &ast.Ident{Pos: s.Pos, Name: "reject"}}
		s.Transition = tr
	}
	if tr.Next != nil {
		c.stateRef(tr.Next, states)
		return
	}
	c.selectExpr(tr.Select, sc, states)
}

func (c *checker) stateRef(id *ast.Ident, states *scope) {
	switch id.Name {
	case "accept":
		id.Decl = ast.AcceptState
	case "reject":
		id.Decl = ast.RejectState
	default:
		ds := states.lookup(id.Name)
		if len(ds) == 0 {
			c.errorf(id, "%s: no such parser state", id.Name)
			return
		}
		if _, ok := ds[0].(*ast.StateDecl); !ok {
			c.errorf(id, "%s is a %s, not a parser state", id.Name, describeDecl(ds[0]))
			return
		}
		id.Decl = ds[0]
	}
	id.Type = ast.TState
}

func (c *checker) selectExpr(sel *ast.SelectExpr, sc, states *scope) {
	var types []ast.Type
	ok := true
	for _, e := range sel.Exprs {
		t := c.expr(e, nil, sc)
		if t == nil {
			ok = false
		} else if isIntLit(t) {
			c.errorf(e, "select: an integer literal of unknown width cannot be matched; give it a width")
			ok = false
		}
		types = append(types, t)
	}
	sel.Type = &ast.TupleType{Elems: types}
	for _, cs := range sel.Cases {
		c.stateRef(cs.State, states)
		if !ok {
			continue
		}
		c.keyset(cs, cs.Keys, types, "select", sc)
	}
}

// keyset checks the keys of a select case or table entry against the
// types they match.
func (c *checker) keyset(at ast.Node, keys []ast.Expr, types []ast.Type, what string, sc *scope) bool {
	if len(keys) == 1 && len(types) == 1 {
		// A one-element list keyset {e} is the keyset e (p4c).
		if l, ok := keys[0].(*ast.ListExpr); ok && len(l.Elems) == 1 {
			keys[0] = l.Elems[0]
		}
	}
	if id, ok := keys[0].(*ast.Ident); ok && len(keys) == 1 && strings.HasPrefix(what, "select") {
		if vs, ok := firstDecl(sc.lookup(id.Name)).(*ast.ValueSetDecl); ok {
			return c.valueSetKeyset(id, vs, types, sc)
		}
	}
	if len(keys) == 1 && len(types) != 1 {
		switch keys[0].(type) {
		case *ast.Default, *ast.DontCare:
			keys[0].Info().Type = ast.TDontCare
			return true
		}
	}
	if len(keys) != len(types) {
		c.errorf(at, "%s: the keyset has %d elements but %d are matched", what, len(keys), len(types))
		return false
	}
	good := true
	for i, k := range keys {
		if !c.keyElem(k, types[i], sc) {
			good = false
		}
	}
	return good
}

// valueSetKeyset checks a value set used as a select keyset: its element
// type matches the select expression, or, a struct, the expressions one
// field each.
func (c *checker) valueSetKeyset(id *ast.Ident, vs *ast.ValueSetDecl, types []ast.Type, sc *scope) bool {
	if c.expr(id, nil, sc) == nil {
		return false
	}
	elems := valueSetElems(vs.Type.Resolved())
	if len(elems) != len(types) {
		c.errorf(id, "value_set %s has %d fields, the select matches %d expressions", vs.Name, len(elems), len(types))
		return false
	}
	for i := range elems {
		if !ast.SameType(elems[i], types[i]) {
			c.errorf(id, "value_set %s: field %d is %s, the select expression is %s", vs.Name, i+1, elems[i], types[i])
			return false
		}
	}
	return true
}

func (c *checker) keyElem(k ast.Expr, t ast.Type, sc *scope) bool {
	switch x := k.(type) {
	case *ast.Default, *ast.DontCare:
		x.Info().Type = ast.TDontCare
		return true
	case *ast.Binary:
		if x.Op == ast.OpMask || x.Op == ast.OpRange {
			if ub := serEnumBits(t); ub != nil {
				t = ub // masks and ranges over a serializable enum work on its bits
			}
			a, b := c.expr(x.X, t, sc), c.expr(x.Y, t, sc)
			if a == nil || b == nil || !c.assignable(x.X, t, "keyset") || !c.assignable(x.Y, t, "keyset") {
				return false
			}
			if ast.Bits(t, true) == nil {
				c.errorf(x, "%s: only bit<W> and int<W> values can be matched with a mask or range, not %s", x.Op, t)
				return false
			}
			x.Type = &ast.SetType{Elem: t}
			if x.X.Info().Const == nil || x.Y.Info().Const == nil {
				c.errorf(x, "%s: keyset bounds must be compile-time constants", x.Op)
				return false
			}
			return true
		}
	}
	kt := c.expr(k, t, sc)
	if kt == nil || !c.assignable(k, t, "keyset") {
		return false
	}
	if k.Info().Const == nil {
		c.errorAtExpr(k, "keyset values must be compile-time constants")
		return false
	}
	return true
}

// ---- tables ----

// simpleKey reports whether p4c can name a key after its expression: a
// path, member, constant index or slice of one, one masked with a
// constant, a constant, or isValid() (frontends/p4/tableKeyNames).
func simpleKey(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident, *ast.IntLit, *ast.BoolLit:
		return true
	case *ast.Member:
		return simpleKey(x.X)
	case *ast.Index:
		return simpleKey(x.X) && simpleKey(x.Index)
	case *ast.Slice:
		return simpleKey(x.X)
	case *ast.Binary:
		if x.Op != ast.OpBitAnd {
			return false
		}
		_, lc := x.X.(*ast.IntLit)
		_, rc := x.Y.(*ast.IntLit)
		return rc && simpleKey(x.X) || lc && simpleKey(x.Y)
	case *ast.Call:
		m, ok := x.Fun.(*ast.Member)
		return ok && m.Name == "isValid" && len(x.Args) == 0 && simpleKey(m.X)
	}
	return e.Info().Const != nil
}

func (c *checker) tableDecl(t *ast.TableDecl, sc *scope) {
	var keyTypes []ast.Type
	var lpm *ast.KeyElement
	for _, k := range t.Keys {
		kt := c.expr(k.Expr, nil, sc)
		keyTypes = append(keyTypes, kt)
		if kt != nil && k.Annos.Get("name") == nil && !simpleKey(k.Expr) {
			// p4c names keys after their expressions; others need a name.
			c.errorAtExpr(k.Expr, "%s: Complex key expression requires a @name annotation", exprText(k.Expr))
		}
		if kt != nil {
			switch {
			case ast.Bits(kt, true) != nil, isBool(kt), isErrorType(kt), isEnum(kt):
			case isIntLit(kt):
				c.errorf(k.Expr, "table %s: a key cannot be an integer literal", t.Name)
			default:
				c.errorf(k.Expr, "table %s: a key must be bit<W>, int<W>, bool, an enum or error, not %s", t.Name, kt)
			}
		}
		ds := sc.lookup(k.MatchKind.Name)
		mk, isMember := firstDecl(ds).(*ast.EnumMember)
		if !isMember || mk == nil {
			if d := firstDecl(ds); d != nil {
				// A local name (often a table called lpm or exact) hides
				// the match kind.
				c.errorf(k.MatchKind, "%s refers to the %s %s declared at %s, which hides the match kind %s; rename it", k.MatchKind.Name, describeDecl(d), d.DeclName(), d.Position(), k.MatchKind.Name)
				continue
			}
			c.errorf(k.MatchKind, "%s: unknown match kind (known: %s)", k.MatchKind.Name, matchKindList(c.prog))
			continue
		}
		if _, ok := mk.Parent.(*ast.MatchKindDecl); !ok {
			c.errorf(k.MatchKind, "%s is not a match kind", k.MatchKind.Name)
			continue
		}
		k.MatchKind.Decl, k.MatchKind.Type = mk, ast.TMatchKind
		k.MatchKind.Const = &ast.Value{Kind: ast.ValEnum, Member: mk}
		if mk.Name == "lpm" {
			if lpm != nil {
				c.errorf(k.MatchKind, "table %s: only one key may be matched with lpm (the first is %s)", t.Name, exprText(lpm.Expr))
			}
			lpm = k
		}
	}
	if t.Actions == nil {
		c.errorf(t, "table %s has no actions property", t.Name)
	}
	seen := map[*ast.ActionDecl]bool{}
	for _, r := range t.Actions {
		a := c.actionRef(r, sc, t, false)
		if a == nil {
			continue
		}
		if seen[a] {
			c.errorf(r, "table %s: action %s listed twice", t.Name, a.Name)
		}
		seen[a] = true
	}
	if d := t.DefaultAction; d != nil {
		if a := c.actionRef(d, sc, t, true); a != nil && !seen[a] {
			c.errorf(d, "table %s: the default action %s is not in the actions list", t.Name, a.Name)
		} else if r := findActionRef(t, d.Name.Name); a != nil && r != nil && r.Annos.Get("tableonly") != nil {
			c.errorf(d, "table %s: action %s is marked @tableonly and cannot be the default action", t.Name, a.Name)
		}
	}
	if t.Size != nil {
		if n, ok := c.constIntExpr(t.Size, sc, "table size"); ok && n < 0 {
			c.errorf(t.Size, "table %s: size must not be negative", t.Name)
		}
	}
	if t.HasEntries && t.Keys != nil && t.EntriesPos.Before(t.KeyPos) {
		c.errorf(t.EntriesPos, "table %s: the entries list must come after the table's key (line %d)", t.Name, t.KeyPos.Line)
		return
	}
	for _, e := range t.Entries {
		c.entry(t, e, keyTypes, seen, sc)
	}
	for _, p := range t.Custom {
		c.tableProperty(t, p, sc)
	}
}

func firstDecl(ds []ast.Decl) ast.Decl {
	if len(ds) == 0 {
		return nil
	}
	return ds[0]
}

func matchKindList(p *ast.Program) string {
	s := ""
	for i, m := range p.MatchKinds {
		if i > 0 {
			s += ", "
		}
		s += m.Name
	}
	return s
}

// actionRef resolves an action reference of a table. In the actions list
// (full=false) arguments bind the leading parameters with a direction; as
// the default action or an entry's action (full=true) every parameter not
// bound in the actions list must be given.
func (c *checker) actionRef(r *ast.ActionRef, sc *scope, t *ast.TableDecl, full bool) *ast.ActionDecl {
	ds := c.lookupIn(sc, r.Name.Name, r.Name.TopLevel)
	if len(ds) == 0 {
		c.errorf(r.Name, "%s: declaration not found", r.Name.Name)
		return nil
	}
	a, ok := ds[0].(*ast.ActionDecl)
	if !ok {
		c.errorf(r.Name, "%s is a %s, not an action", r.Name.Name, describeDecl(ds[0]))
		return nil
	}
	r.Name.Decl = a
	r.Name.Type = &ast.ActionType{Action: a}
	params := a.Params
	if !full {
		// In the list only the parameters with a direction may be bound.
		n := 0
		for _, p := range params {
			if p.Dir != ast.DirNone {
				n++
			}
		}
		if !r.HasParens {
			n = 0 // `a;` leaves every parameter to the default action / entries
		}
		if len(r.Args) > n {
			c.errorf(r, "table %s: action %s takes %d arguments with a direction in the actions list, got %d (action data comes from the control plane)", t.Name, a.Name, n, len(r.Args))
			return a
		}
		if len(r.Args) < n {
			c.errorf(r, "table %s: action %s needs its %d parameters with a direction bound in the actions list", t.Name, a.Name, n)
			return a
		}
		params = params[:n]
	} else if listed := findActionRef(t, a.Name); listed != nil && len(listed.Args) <= len(params) && len(r.Args) != len(params) {
		// The parameters bound in the actions list may be repeated here
		// (p4c's style: default_action = drop(standard_metadata)) or left out.
		params = params[len(listed.Args):]
	}
	if full && !r.HasParens && len(params) > 0 {
		c.errorf(r, "table %s: action %s needs arguments here (%d)", t.Name, a.Name, len(params))
		return a
	}
	if !c.positionalActionArgs(r, a, params) {
		return a
	}
	required := 0
	for _, p := range params {
		if p.Default == nil {
			required++
		}
	}
	if len(r.Args) < required || len(r.Args) > len(params) {
		want := fmt.Sprint(len(params))
		if required < len(params) {
			want = fmt.Sprintf("%d to %d", required, len(params))
		}
		c.errorf(r, "table %s: action %s expects %s arguments here, got %d", t.Name, a.Name, want, len(r.Args))
		return a
	}
	for i, arg := range r.Args {
		if !c.argument(a.Name, params[i], arg, map[*ast.TypeParam]ast.Type{}, sc) {
			continue
		}
		if params[i].Dir == ast.DirNone && arg.Value.Info().Const == nil && full {
			c.errorf(arg, "table %s: action data for %s must be a compile-time constant", t.Name, params[i].Name)
		}
	}
	return a
}

// positionalActionArgs puts named arguments of an action reference
// (`a(v = 1, w = 2)`) into the order of params, which is how the rest of
// the compiler reads them. Every parameter up to the last one named must be
// given; named and positional arguments cannot be mixed.
func (c *checker) positionalActionArgs(r *ast.ActionRef, a *ast.ActionDecl, params []*ast.Param) bool {
	named := 0
	for _, arg := range r.Args {
		if arg.Name != "" {
			named++
		}
	}
	if named == 0 {
		return true
	}
	if named != len(r.Args) {
		c.errorf(r, "action %s: named and positional arguments cannot be mixed", a.Name)
		return false
	}
	byName := map[string]*ast.Arg{}
	for _, arg := range r.Args {
		if byName[arg.Name] != nil {
			c.errorf(arg, "action %s: argument %s given twice", a.Name, arg.Name)
			return false
		}
		byName[arg.Name] = arg
	}
	var ordered []*ast.Arg
	for _, p := range params {
		arg := byName[p.Name]
		if arg == nil {
			break
		}
		ordered = append(ordered, arg)
		delete(byName, p.Name)
	}
	for _, arg := range r.Args {
		if byName[arg.Name] == arg {
			if findParam(a.Params, arg.Name) == nil {
				c.errorf(arg, "action %s has no parameter %s", a.Name, arg.Name)
			} else {
				c.unsupportedf(arg, "named action argument %s after a parameter left to its default or bound elsewhere", arg.Name)
			}
			return false
		}
	}
	r.Args = ordered
	return true
}

func findParam(ps []*ast.Param, name string) *ast.Param {
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func (c *checker) entry(t *ast.TableDecl, e *ast.Entry, keyTypes []ast.Type, listed map[*ast.ActionDecl]bool, sc *scope) {
	for _, kt := range keyTypes {
		if kt == nil {
			return
		}
	}
	if len(t.Keys) == 0 {
		c.errorf(e, "table %s: entries need a key", t.Name)
		return
	}
	c.keyset(e, e.Keys, keyTypes, "table "+t.Name+" entry", sc)
	if e.Priority != nil {
		if n, ok := c.constIntExpr(e.Priority, sc, "entry priority"); ok && n < 0 {
			c.errorf(e.Priority, "entry priority must not be negative")
		}
	}
	if a := c.actionRef(e.Action, sc, t, true); a != nil && !listed[a] {
		c.errorf(e.Action, "table %s: entry action %s is not in the actions list", t.Name, a.Name)
	} else if r := findActionRef(t, e.Action.Name.Name); a != nil && r != nil && r.Annos.Get("defaultonly") != nil {
		c.errorf(e, "table %s: action %s is marked @defaultonly and cannot be used in an entry", t.Name, a.Name)
	}
}

func (c *checker) tableProperty(t *ast.TableDecl, p *ast.TableProperty, sc *scope) {
	pt := c.expr(p.Value, nil, sc)
	if pt == nil {
		return
	}
	want := map[string]string{
		"counters":       "direct_counter",
		"meters":         "direct_meter",
		"implementation": "",
	}
	switch p.Name {
	case "counters", "meters", "implementation":
		obj, ok := pt.(*ast.ObjectType)
		if !ok {
			c.errorf(p.Value, "table %s: %s must be an extern instance, not %s", t.Name, p.Name, pt)
			return
		}
		if w := want[p.Name]; w != "" && obj.Decl.DeclName() != w {
			c.errorf(p.Value, "table %s: %s must be a %s, not %s", t.Name, p.Name, w, obj)
		}
	case "support_timeout":
		if !isBool(pt) {
			c.errorf(p.Value, "table %s: support_timeout must be bool", t.Name)
		}
	}
}
