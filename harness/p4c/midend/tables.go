package midend

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// This file lowers tables: keys, actions, properties and const entries,
// and the application of a table at one or more places of a control.

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
			if x.Kind == ast.CallAction {
				// Listed in P4Info even where unreachable (after exit), as
				// p4c lists it.
				l.recordCalledAction(x.Action, prefix)
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
	for _, k := range td.Keys {
		// A key that applies another table (sub.apply().hit): that table
		// runs first, its result kept for the key, as p4c hoists it.
		if err := c.hoistExpr(k.Expr); err != nil {
			return nil, nil, err
		}
	}
	t := &Table{Name: cpName(td.Annos, td.Name, c.sc.prefix), Pos: td.Pos, Annos: td.Annos, Next: map[string]*string{}}
	c.l.tables[key] = t
	c.l.names[t.Name] = true
	c.l.tableNames[t.Name] = true
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

// keyName is the control-plane name p4c gives a key written e: its text,
// where a struct field with @name takes that name (one with a leading dot
// starts the name afresh, as P4_14-converted programs' metadata fields do).
func keyName(e ast.Expr) string {
	if ix, ok := e.(*ast.Index); ok {
		return keyName(ix.X) + "[" + ExprText(ix.Index) + "]"
	}
	m, ok := e.(*ast.Member)
	if !ok {
		return ExprText(e)
	}
	if sd, ok := m.X.Info().Type.(*ast.StructDecl); ok {
		for _, f := range sd.Fields {
			if n, ok := f.Annos.StringArg("name"); ok && f.Name == m.Name {
				if abs, ok := strings.CutPrefix(n, "."); ok {
					return abs
				}
				return keyName(m.X) + "." + n
			}
		}
	}
	return keyName(m.X) + "." + m.Name
}

func (c *cctx) tableKeys(a *actx, td *ast.TableDecl, t *Table) error {
	for _, k := range td.Keys {
		mk := k.MatchKind.Name
		if mk == "selector" {
			continue // the action selector's input (tableProfile)
		}
		if !matchKinds[mk] {
			return unsupported(k, "match kind %s", mk)
		}
		name := keyName(k.Expr)
		if c, ok := k.Expr.(*ast.Call); ok && c.Kind == ast.CallBuiltin && c.Builtin == "isValid" {
			// p4c names a validity key after bmv2's $valid$ field.
			name = keyName(c.Receiver()) + ".$valid$"
		}
		if n, ok := k.Annos.StringArg("name"); ok {
			name = n
		}
		ke := KeyElem{MatchType: mk, Name: name, Annos: k.Annos}
		// A slice key is computed into a temporary of the slice's width, as
		// p4c does: the key is then as wide as the P4Info says.
		v, err := a.value(k.Expr)
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
	// bmv2 keeps actions and tables apart: an action may be named like a
	// table (p4c does so), not like anything else.
	if c.l.names[act.Name] && !c.l.actionNames[act.Name] && !c.l.tableNames[act.Name] {
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
	if err := ax.finishReturns(r); err != nil {
		return nil, 0, err
	}
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
			cst := p.Value.Info().Const
			if cst == nil || cst.Kind != ast.ValBool {
				return srcError(p.Value, "table %s: support_timeout must be a compile-time bool", td.Name)
			}
			t.SupportTimeout = cst.Bool
		case "implementation":
			if err := c.tableProfile(td, t, p); err != nil {
				return err
			}
		case "largest_priority_wins", "priority_delta":
			// Entry priorities (checked in tableEntries).
		default:
			// p4c keeps unknown properties and the bmv2 back end ignores
			// them.
			c.l.warnf(p, "table %s: property %s is ignored", td.Name, p.Name)
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
	if err := checkEntryPriorities(td, t); err != nil {
		return err
	}
	for i, e := range td.Entries {
		if len(e.Keys) != len(t.Keys) {
			return srcError(e, "entry has %d keys, table %s has %d", len(e.Keys), td.Name, len(t.Keys))
		}
		// bmv2 lets the numerically smallest priority win; entries are
		// tried in source order unless @priority(N) says otherwise.
		// `priority = N` orders the entries of a P4Runtime server; in the
		// bmv2 JSON p4c numbers entries by position all the same.
		en := Entry{Pos: e.Pos, Priority: i + 1}
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

// tableProfile binds a table to the action profile or selector of its
// implementation property: an instance, or one constructed in place
// (named by the property's @name, else action_profile as p4c names it).
func (c *cctx) tableProfile(td *ast.TableDecl, t *Table, p *ast.TableProperty) error {
	var o *objV
	switch x := p.Value.(type) {
	case *ast.Ident:
		rv, err := c.actx().value(x)
		if err != nil {
			return err
		}
		o, _ = rv.(*objV)
	case *ast.Call:
		if x.Kind != ast.CallConstructor {
			break
		}
		name := "action_profile"
		if n, ok := p.Annos.StringArg("name"); ok {
			name = n
		}
		ot, _ := x.Info().Type.(*ast.ObjectType)
		if ot == nil {
			break
		}
		annos := ast.Annotations{{Pos: x.Pos, Name: "name", Args: []ast.Expr{&ast.StringLit{Pos: x.Pos, Value: "." + name}}}}
		for _, an := range p.Annos {
			if an.Name != "name" {
				annos = append(annos, an)
			}
		}
		inst := &ast.InstanceDecl{Pos: x.Pos, Annos: annos, Type: &ast.NamedType{Pos: x.Pos, Name: ot.Decl.DeclName(), T: ot}, Args: x.Args, Name: name}
		var err error
		if o, err = c.l.allocInstance(inst, c.sc.prefix); err != nil {
			return err
		}
	}
	if o == nil || o.profile == nil {
		return unsupported(p, "implementation that is not an action_profile or action_selector")
	}
	ap := o.profile
	t.Profile = ap
	ap.Tables = append(ap.Tables, t.Name)
	if ap.Selector != nil && ap.Selector.Input == nil {
		ap.Selector.Input = []*bmv2json.Value{}
		a := c.actx()
		for _, k := range td.Keys {
			if k.MatchKind.Name != "selector" {
				continue
			}
			v, err := a.value(k.Expr)
			if err != nil {
				return err
			}
			s, ok := v.(*scalarV)
			if !ok {
				return unsupported(k, "selector input of this type")
			}
			if !isFieldRef(s.ref) {
				tmp := c.l.tempScalar(s.t)
				c.block = append(c.block, prim("assign", tmp.ref, param(s.ref)))
				s = tmp
			}
			ap.Selector.Input = append(ap.Selector.Input, s.ref)
		}
	}
	return nil
}

// checkEntryPriorities makes p4c's checks of `priority = N` in entries
// (frontends/p4/entryPriorities): none in const entries; only where a key
// needs priorities; the first entry gives one; and the priorities the
// others get (each the previous -/+ priority_delta, as
// largest_priority_wins says) stay non-negative.
func checkEntryPriorities(td *ast.TableDecl, t *Table) error {
	var given *ast.Entry
	for _, e := range td.Entries {
		if e.Priority != nil {
			given = e
			break
		}
	}
	if given == nil {
		return nil
	}
	if td.EntriesConst {
		return srcError(given.Priority, "table %s: a table with const entries cannot have entry priorities (`priority = N`); use @priority(N) or non-const entries", td.Name)
	}
	needs := false
	for _, k := range t.Keys {
		if k.MatchType != "exact" && k.MatchType != "lpm" {
			needs = true
		}
	}
	if !needs {
		return srcError(td.KeyPos, "table %s: its key match types do not require priorities, but some entries give one", td.Name)
	}
	largestWins, delta := true, big.NewInt(1)
	for _, p := range td.Custom {
		cst := p.Value.Info().Const
		switch {
		case p.Name == "largest_priority_wins" && cst != nil && cst.Kind == ast.ValBool:
			largestWins = cst.Bool
		case p.Name == "priority_delta" && cst != nil && cst.Int != nil:
			if cst.Int.Sign() <= 0 {
				return srcError(p.Value, "table %s: priority_delta must be a positive value", td.Name)
			}
			delta = cst.Int
		}
	}
	cur := new(big.Int)
	for i, e := range td.Entries {
		if e.Priority != nil {
			v, ok := bigOf(e.Priority)
			if !ok {
				return srcError(e.Priority, "entry priority must be a constant")
			}
			cur.Set(v)
		} else if i == 0 {
			return srcError(e, "table %s: the first entry must have a priority when others have one", td.Name)
		}
		if largestWins {
			cur.Sub(cur, delta)
		} else {
			cur.Add(cur, delta)
		}
		if cur.Sign() < 0 {
			return srcError(td, "table %s: overflow in priority computation (an entry's priority would be negative)", td.Name)
		}
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
		if b, isMask := k.(*ast.Binary); isMask && b.Op == ast.OpMask && ke.MatchType == "optional" {
			// p4c: an optional key takes a value or _ / default, no mask.
			return mk, srcError(k, "%s: invalid key expression (an optional key takes an exact value or _, not a mask)", ExprText(k))
		}
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
