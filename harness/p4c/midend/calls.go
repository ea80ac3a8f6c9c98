package midend

import (
	"strings"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// cpName is the control-plane name of a declaration `local` inside the
// object whose name is prefix, honouring @name (a leading '.' makes it
// absolute), as p4c does.
func cpName(annos ast.Annotations, local, prefix string) string {
	if n, ok := annos.StringArg("name"); ok {
		if strings.HasPrefix(n, ".") {
			return n[1:]
		}
		local = n
	}
	if prefix == "" {
		return local
	}
	return prefix + "." + local
}

// callExpr lowers a call used as a value.
func (a *actx) callExpr(c *ast.Call) (val, error) {
	v, err := a.call(c, false)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, unsupported(c, "using the result of this call")
	}
	return v, nil
}

// call lowers a call; the result is the returned value (nil for void).
func (a *actx) call(c *ast.Call, isStmt bool) (val, error) {
	switch c.Kind {
	case ast.CallAction:
		return nil, a.inlineAction(c)
	case ast.CallFunction:
		return a.inlineFunction(c)
	case ast.CallExternFunction:
		return a.externFunction(c)
	case ast.CallExternMethod:
		return a.externMethod(c)
	case ast.CallBuiltin:
		return a.builtin(c)
	case ast.CallTableApply:
		return nil, unsupported(c, "applying a table inside an action or function")
	case ast.CallControlApply, ast.CallParserApply:
		return nil, unsupported(c, "applying a control or parser here")
	}
	return nil, unsupported(c, "calling %s here", ExprText(c.Fun))
}

// bindParams binds callee parameters to the call's arguments in scope sc
// with P4's copy-in/copy-out semantics for scalars: in/directionless
// arguments are evaluated into temporaries before the body runs, out/inout
// are copied back afterwards. Headers and structs are passed by reference
// out/inout (their fields keep the caller's storage; out headers start
// invalid) unless copyAggregates asks for copies (actions, functions); in
// aggregates are always copied.
// A scalar out/inout parameter that body (when given) never names is
// neither copied in nor out, as p4c's dead-code passes leave it: the copy
// would read the argument, and reading a header stack element at a
// run-time index beyond the stack aborts bmv2 (std::out_of_range), though
// the action never looks at it.
// It returns the copy-out, to run (into the given context) after the body
// and on every exit path.
func (a *actx) bindParams(c *ast.Call, params []*ast.Param, sc *scope, copyAggregates bool, body ast.Node) (func(*actx) error, error) {
	named := paramsNamedIn(body)
	type copyOut struct {
		dst, src val
		// slice, when set, is the bit slice the value is copied back to
		// (dst is then unused).
		slice *ast.Slice
	}
	var outs []copyOut
	bound := map[*ast.Param]bool{}
	for i, arg := range c.Args {
		var p *ast.Param
		if i < len(c.ArgParams) {
			p = c.ArgParams[i]
		}
		if !containsParam(params, p) && i < len(params) {
			// Applied through a control type (a constructor parameter of
			// type `control C(...)`): the checker bound the arguments to
			// the prototype's parameters; the implementation's are positional.
			p = params[i]
		}
		if p == nil {
			return nil, unsupported(arg.Value, "argument without a matching parameter")
		}
		bound[p] = true
		pt := p.Type.Resolved()
		if _, dc := arg.Value.(*ast.DontCare); dc {
			v, err := a.l.alloc(p, pt, p.Name, p.Name)
			if err != nil {
				return nil, err
			}
			sc.m[p] = v
			continue
		}
		v, err := a.value(arg.Value)
		if err != nil {
			return nil, err
		}
		sv, isScalar := v.(*scalarV)
		switch p.Dir {
		case ast.DirNone, ast.DirIn:
			if isScalar && !isStable(sv.ref) {
				t := a.l.tempScalar(pt)
				a.emitPrim(a.assignPrim(t.ref, sv.ref))
				t.loc = false
				sc.m[p] = t
			} else if isScalar {
				sc.m[p] = &scalarV{ref: sv.ref, t: pt}
			} else if isData(v) {
				// An in aggregate is a snapshot: the callee must not see
				// writes made through other paths while it runs.
				t, err := a.l.copyStorage(p, pt, v)
				if err != nil {
					return nil, err
				}
				if err := a.store(arg.Value, t, v); err != nil {
					return nil, err
				}
				sc.m[p] = t
			} else {
				sc.m[p] = v
			}
		case ast.DirOut, ast.DirInOut:
			if sl, ok := arg.Value.(*ast.Slice); ok && isScalar && !hasCall(sl) {
				// A slice l-value: copy in (inout), write back the
				// slice of the field afterwards.
				t := a.l.tempScalar(pt)
				if p.Dir == ast.DirInOut {
					a.emitPrim(a.assignPrim(t.ref, sv.ref))
				}
				sc.m[p] = t
				outs = append(outs, copyOut{src: t, slice: sl})
			} else if isScalar && body != nil && !named[p] {
				sc.m[p] = a.l.tempScalar(pt)
			} else if isScalar {
				if !sv.loc {
					return nil, unsupported(arg.Value, "out argument that is not a location")
				}
				t := a.l.tempScalar(pt)
				if p.Dir == ast.DirInOut {
					a.emitPrim(a.assignPrim(t.ref, sv.ref))
				}
				sc.m[p] = t
				outs = append(outs, copyOut{dst: sv, src: t})
			} else if copyAggregates {
				t, err := a.l.copyStorage(p, pt, v)
				if err != nil {
					return nil, err
				}
				if p.Dir == ast.DirInOut {
					err = a.store(arg.Value, t, v)
				} else {
					err = a.invalidate(arg.Value, t)
				}
				if err != nil {
					return nil, err
				}
				sc.m[p] = t
				outs = append(outs, copyOut{dst: v, src: t})
			} else {
				sc.m[p] = v
				if p.Dir == ast.DirOut {
					if err := a.invalidate(arg.Value, v); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	for _, p := range params {
		if bound[p] {
			continue
		}
		if p.Default != nil {
			v, err := a.value(p.Default)
			if err != nil {
				return nil, err
			}
			sc.m[p] = v
			continue
		}
		if p.Dir == ast.DirNone {
			return nil, unsupported(c, "call without argument for %s", p.Name)
		}
		// Optional out parameters left unbound write to a scratch location.
		v, err := a.l.alloc(p, p.Type.Resolved(), p.Name, p.Name)
		if err != nil {
			return nil, err
		}
		sc.m[p] = v
	}
	return func(into *actx) error {
		for _, o := range outs {
			if o.slice != nil {
				if err := into.storeSlice(o.slice, o.slice, o.src.(*scalarV).ref); err != nil {
					return err
				}
				continue
			}
			if err := into.store(c, o.dst, o.src); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// copyStorage allocates a parameter copy of v: a header instance of the
// same bmv2 type for a header (standard_metadata included), fresh
// storage of type t otherwise.
func (l *lowerer) copyStorage(p *ast.Param, t ast.Type, v val) (val, error) {
	if h, ok := v.(*headerV); ok && h.h != nil {
		c := &Header{Name: l.uniqueName(p.Name), Type: h.h.Type, Metadata: h.h.Metadata}
		l.out.Headers = append(l.out.Headers, c)
		return &headerV{h: c, decl: h.decl}, nil
	}
	return l.alloc(p, t, p.Name, p.Name)
}

// isData reports whether v is a header, stack or struct value (as
// opposed to an extern, control or packet object).
func isData(v val) bool {
	switch v.(type) {
	case *headerV, *stackV, *structV, *tupleV, *unionV, *unionStackV, *varbitV:
		return true
	}
	return false
}

// inlineBody lowers an inlined action or function body: returns jump to
// the copy-out; an exit runs the copy-out too and then keeps exiting
// through the caller's exit path.
func (a *actx) inlineBody(body *ast.BlockStmt, sc *scope, r *retCtx, done func(*actx) error) error {
	var exits []int
	inner := &actx{l: a.l, sc: sc, prims: a.prims, ret: r, inParser: a.inParser, inAction: a.inAction, inInlinedAction: a.inInlinedAction, exits: &exits}
	if err := inner.block(body); err != nil {
		return err
	}
	if err := inner.finishReturns(r); err != nil {
		return err
	}
	if err := done(a); err != nil {
		return err
	}
	if len(exits) == 0 {
		return nil
	}
	skip := len(*a.prims)
	a.emit(prim("_jump", hexInt(0, 32)))
	for _, j := range exits {
		a.patch(j, 0, len(*a.prims))
	}
	if err := done(a); err != nil {
		return err
	}
	if a.exits != nil {
		*a.exits = append(*a.exits, len(*a.prims))
		a.emit(prim("_jump", hexInt(0, 32)))
	}
	a.patch(skip, 0, len(*a.prims))
	return nil
}

func (a *actx) inlineAction(c *ast.Call) error {
	act := c.Action
	if !a.inAction && !a.inInlinedAction {
		// p4c lists actions an apply block calls, not those other
		// actions call (they are inlined into their callers).
		a.l.recordCalledAction(act, a.sc.prefix)
	}
	sc := newScope(a.sc, a.sc.prefix)
	done, err := a.bindParams(c, act.Params, sc, true, act.Body)
	if err != nil {
		return err
	}
	var was bool
	a.inInlinedAction, was = true, a.inInlinedAction
	defer func() { a.inInlinedAction = was }()
	return a.inlineBody(act.Body, sc, &retCtx{}, done)
}

func (a *actx) inlineFunction(c *ast.Call) (val, error) {
	fn := c.Function
	if len(fn.TypeParams) > 0 {
		return nil, unsupported(c, "generic functions")
	}
	sc := newScope(a.sc, a.sc.prefix)
	done, err := a.bindParams(c, fn.Params, sc, true, fn.Body)
	if err != nil {
		return nil, err
	}
	r := &retCtx{}
	var result val
	if rt := fn.Return.Resolved(); rt != nil {
		if _, void := rt.(*ast.VoidType); !void {
			if _, ok := scalarType(rt); ok {
				r.result = a.l.tempScalar(rt)
				result = r.result
			} else {
				v, err := a.l.alloc(fn, rt, "tmp", "tmp")
				if err != nil {
					return nil, err
				}
				r.resultVal = v
				result = v
			}
		}
	}
	if err := a.inlineBody(fn.Body, sc, r, done); err != nil {
		return nil, err
	}
	return result, nil
}

// argVal lowers argument i of c.
func (a *actx) argVal(c *ast.Call, i int) (val, error) {
	if i >= len(c.Args) {
		return nil, unsupported(c, "missing argument %d", i+1)
	}
	return a.value(c.Args[i].Value)
}

func (a *actx) argData(c *ast.Call, i int) (*bmv2json.Value, error) {
	if i >= len(c.Args) {
		return nil, unsupported(c, "missing argument %d", i+1)
	}
	return a.data(c.Args[i].Value)
}

// argField lowers argument i, which must be a field location.
func (a *actx) argField(c *ast.Call, i int) (*bmv2json.Value, error) {
	v, err := a.argVal(c, i)
	if err != nil {
		return nil, err
	}
	s, ok := v.(*scalarV)
	if !ok || !s.loc {
		return nil, unsupported(c.Args[i].Value, "this argument must be a field or variable")
	}
	return s.ref, nil
}

// bindCtorParams binds the constructor parameters of a control or parser
// instance to its constructor arguments (constants or other instances),
// evaluated where the instance was declared.
func (l *lowerer) bindCtorParams(o *objV, params []*ast.Param, sc *scope) error {
	if len(params) == 0 {
		return nil
	}
	if o.inst == nil || len(o.inst.Args) != len(params) {
		return unsupported(o.inst, "instance of %s without its %d constructor arguments", o.typ.Decl.DeclName(), len(params))
	}
	declScope := o.declScope
	if declScope == nil {
		declScope = newScope(nil, "")
	}
	a := &actx{l: l, sc: declScope, prims: new([]bmv2json.Primitive)}
	for i, p := range params {
		arg := o.inst.Args[i].Value
		if call, ok := arg.(*ast.Call); ok && len(call.Args) == 0 {
			// An anonymous instance `C(Sub())`: instantiate it here.
			if id, ok := call.Fun.(*ast.Ident); ok {
				if d, ok := id.Decl.(*ast.ControlDecl); ok {
					sc.m[p] = &objV{name: cpName(nil, p.Name, o.name), typ: &ast.ObjectType{Decl: d}, inst: &ast.InstanceDecl{Pos: call.Pos, Name: p.Name}, declScope: declScope}
					continue
				}
			}
		}
		v, err := a.value(arg)
		if err != nil {
			return err
		}
		if len(*a.prims) > 0 {
			return unsupported(arg, "constructor argument that is not a constant or an instance")
		}
		sc.m[p] = v
	}
	return nil
}

// recordCalledAction remembers an action called directly (not through a
// table) for P4Info, under its control-plane name.
func (l *lowerer) recordCalledAction(ad *ast.ActionDecl, prefix string) {
	if ad.Control == nil {
		prefix = ""
	}
	name := cpName(ad.Annos, ad.Name, prefix)
	for _, a := range l.out.CalledActions {
		if a.Name == name {
			return
		}
	}
	// Its arguments are all given at the call: no control-plane parameters.
	act := &Action{Name: name, Pos: ad.Pos, Annos: ad.Annos}
	l.out.CalledActions = append(l.out.CalledActions, act)
}

// paramsNamedIn are the parameters an identifier in n refers to (none when
// n is nil).
func paramsNamedIn(n ast.Node) map[*ast.Param]bool {
	named := map[*ast.Param]bool{}
	if n == nil {
		return named
	}
	ast.Inspect(n, func(x ast.Node) bool {
		if id, ok := x.(*ast.Ident); ok {
			if p, ok := id.Decl.(*ast.Param); ok {
				named[p] = true
			}
		}
		return true
	})
	return named
}

func containsParam(ps []*ast.Param, p *ast.Param) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// isStable reports whether v reads no state (a constant or action data),
// so binding an in parameter to it directly cannot observe later writes.
func isStable(v *bmv2json.Value) bool {
	switch v.Type {
	case "hexstr", "bool", "runtime_data":
		return true
	}
	return false
}
