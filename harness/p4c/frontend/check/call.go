package check

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

func (c *checker) call(x *ast.Call, hint ast.Type, sc *scope) ast.Type {
	// The callee expression itself has no value type: the Call's Kind and
	// resolved slots say what is called.
	defer func() { x.Fun.Info().Type = nil }()
	switch f := x.Fun.(type) {
	case *ast.Member:
		if c.expr(f, nil, sc) == nil {
			c.argsOnly(x, sc)
			return nil
		}
		recv := f.X.Info().Type
		switch f.Kind {
		case ast.MemberMethod:
			return c.externMethodCall(x, f, recv.(*ast.ObjectType), sc)
		case ast.MemberBuiltinMethod:
			return c.builtinCall(x, f, recv, sc)
		}
		c.errorf(x, "%s is not a method", exprText(f))
		c.argsOnly(x, sc)
		return nil
	case *ast.Ident:
		ds := c.lookupIn(sc, f.Name, f.TopLevel)
		if len(ds) == 0 {
			c.errorf(f, "%s: declaration not found", f.Name)
			c.argsOnly(x, sc)
			return nil
		}
		if a, ok := ds[0].(*ast.ActionDecl); ok && !takes(a.Params, len(x.Args)) {
			// An action named like a top-level extern function (p4c picks
			// among same-named callables by the number of arguments).
			var fs []ast.Decl
			for _, d := range c.lookupIn(sc, f.Name, true) {
				if ef, ok := d.(*ast.ExternFunctionDecl); ok && takes(ef.Params, len(x.Args)) {
					fs = append(fs, d)
				}
			}
			if len(fs) > 0 {
				ds = fs
			}
		}
		f.Decl = ds[0]
		switch d := ds[0].(type) {
		case *ast.ActionDecl:
			return c.actionCall(x, f, d, sc)
		case *ast.FunctionDecl:
			return c.functionCall(x, f, d, sc)
		case *ast.ExternFunctionDecl:
			return c.externFunctionCall(x, f, ds, sc)
		case *ast.ExternDecl, *ast.ParserDecl, *ast.ControlDecl, *ast.PackageDecl:
			return c.constructorCall(x, f, d, sc)
		}
		c.errorf(f, "%s: a %s cannot be called", f.Name, describeDecl(ds[0]))
		c.argsOnly(x, sc)
		return nil
	}
	c.errorf(x, "this expression cannot be called")
	c.argsOnly(x, sc)
	return nil
}

// argsOnly checks the arguments of a call that could not be resolved, so
// that errors inside them are still reported.
func (c *checker) argsOnly(x *ast.Call, sc *scope) {
	for _, a := range x.Args {
		c.expr(a.Value, nil, sc)
	}
}

func (c *checker) deprecated(n ast.Node, name string, annos ast.Annotations) {
	if a := annos.Get("deprecated"); a != nil {
		msg, _ := annos.StringArg("deprecated")
		c.warnf(n, "%s is deprecated: %s", name, msg)
	}
}

func (c *checker) actionCall(x *ast.Call, f *ast.Ident, d *ast.ActionDecl, sc *scope) ast.Type {
	if c.ctx == ctxParser {
		c.errorf(x, "%s: actions cannot be called from a parser", d.Name)
		return nil
	}
	x.Kind, x.Action = ast.CallAction, d
	c.use(d)
	f.Type = &ast.ActionType{Action: d}
	ps, ok := c.matchArgs(x, d.Name, d.Params, &x.Args, nil, sc)
	if !ok {
		return nil
	}
	x.ArgParams = ps
	return ast.TVoid
}

func (c *checker) functionCall(x *ast.Call, f *ast.Ident, d *ast.FunctionDecl, sc *scope) ast.Type {
	x.Kind, x.Function = ast.CallFunction, d
	c.use(d)
	if len(d.TypeParams) > 0 {
		c.unsupportedf(x, "call of generic function %s", d.Name)
		return nil
	}
	ps, ok := c.matchArgs(x, d.Name, d.Params, &x.Args, nil, sc)
	if !ok {
		return nil
	}
	x.ArgParams = ps
	return d.Return.Resolved()
}

// takes reports whether params can be given n arguments.
func takes(params []*ast.Param, n int) bool {
	required := 0
	for _, p := range params {
		if p.Default == nil {
			required++
		}
	}
	return n >= required && n <= len(params)
}

// pickOverload chooses among same-named callables by argument count.
func pickOverload[T any](cands []T, params func(T) []*ast.Param, nargs int) (T, bool) {
	var zero T
	var found []T
	for _, cand := range cands {
		if takes(params(cand), nargs) {
			found = append(found, cand)
		}
	}
	if len(found) != 1 {
		return zero, false
	}
	return found[0], true
}

func arities(pss [][]*ast.Param) string {
	var parts []string
	for _, ps := range pss {
		parts = append(parts, fmt.Sprint(len(ps)))
	}
	return strings.Join(parts, " or ")
}

func (c *checker) externFunctionCall(x *ast.Call, f *ast.Ident, ds []ast.Decl, sc *scope) ast.Type {
	var cands []*ast.ExternFunctionDecl
	var pss [][]*ast.Param
	for _, d := range ds {
		if ef, ok := d.(*ast.ExternFunctionDecl); ok {
			cands = append(cands, ef)
			pss = append(pss, ef.Params)
		}
	}
	d, ok := pickOverload(cands, func(e *ast.ExternFunctionDecl) []*ast.Param { return e.Params }, len(x.Args))
	if !ok {
		c.errorf(x, "%s: expected %s arguments, got %d", f.Name, arities(pss), len(x.Args))
		c.argsOnly(x, sc)
		return nil
	}
	f.Decl = d
	x.Kind, x.ExternFunc = ast.CallExternFunction, d
	c.deprecated(x, d.Name, d.Annos)
	b := map[*ast.TypeParam]ast.Type{}
	if !c.explicitTypeArgs(x, d.Name, d.TypeParams, b, sc) {
		return nil
	}
	ps, ok := c.matchArgs(x, d.Name, d.Params, &x.Args, b, sc)
	if !ok || !c.allBound(x, d.Name, d.TypeParams, b) {
		return nil
	}
	x.ArgParams, x.TypeBindings = ps, b
	if !c.widthsInferred(x, d.TypeParams, b) {
		return nil
	}
	if d.Name == "static_assert" {
		return c.staticAssert(x)
	}
	return subst(d.Return.Resolved(), b)
}

// staticAssert evaluates core.p4's static_assert(check[, message]) at
// compile time: a false check is an error, a true one folds to true.
func (c *checker) staticAssert(x *ast.Call) ast.Type {
	cv := x.Args[0].Value.Info().Const
	if cv == nil || cv.Kind != ast.ValBool {
		c.errorAtExpr(x.Args[0].Value, "static_assert: the condition must be a compile-time constant")
		return nil
	}
	if !cv.Bool {
		msg := "static assertion failed"
		if len(x.Args) > 1 {
			if m := x.Args[1].Value.Info().Const; m != nil && m.Kind == ast.ValString {
				msg += ": " + m.Str
			}
		}
		c.errorf(x, "%s", msg)
		return nil
	}
	x.Const = boolValue(true)
	return ast.TBool
}

// explicitTypeArgs binds explicitly written type arguments f<T1, T2>(...).
func (c *checker) explicitTypeArgs(x *ast.Call, name string, tps []*ast.TypeParam, b map[*ast.TypeParam]ast.Type, sc *scope) bool {
	if len(x.TypeArgs) == 0 {
		return true
	}
	if len(x.TypeArgs) != len(tps) {
		c.errorf(x, "%s: expected %d type arguments, got %d", name, len(tps), len(x.TypeArgs))
		return false
	}
	for i, ta := range x.TypeArgs {
		t := c.resolveType(ta, sc)
		if t == nil {
			return false
		}
		b[tps[i]] = t
	}
	return true
}

func (c *checker) allBound(n ast.Node, name string, tps []*ast.TypeParam, b map[*ast.TypeParam]ast.Type) bool {
	for _, tp := range tps {
		if b[tp] == nil {
			c.errorf(n, "%s: cannot infer the type argument %s; give it explicitly, e.g. %s<bit<8>>(...)", name, tp.Name, name)
			return false
		}
	}
	return true
}

// widthsInferred reports an argument whose type variable only an integer
// literal bound (p4c: "could not infer a width"): an extern needs a width.
func (c *checker) widthsInferred(x *ast.Call, tps []*ast.TypeParam, b map[*ast.TypeParam]ast.Type) bool {
	for _, tp := range tps {
		if !isIntLit(b[tp]) {
			continue
		}
		for i, p := range x.ArgParams {
			if tv, ok := p.Type.Resolved().(*ast.TypeVar); ok && tv.Param == tp && i < len(x.Args) {
				c.errorAtExpr(x.Args[i].Value, "%s: could not infer a width for %s; give the literal a width (e.g. 16w%s)", exprText(x.Args[i].Value), tp.Name, exprText(x.Args[i].Value))
				return false
			}
		}
	}
	return true
}

func (c *checker) externMethodCall(x *ast.Call, f *ast.Member, obj *ast.ObjectType, sc *scope) ast.Type {
	ext := obj.Decl.(*ast.ExternDecl)
	var cands []*ast.MethodDecl
	var pss [][]*ast.Param
	for _, m := range ext.Methods {
		if m.Name == f.Name && !m.IsConstructor {
			cands = append(cands, m)
			pss = append(pss, m.Params)
		}
	}
	m, ok := pickOverload(cands, func(m *ast.MethodDecl) []*ast.Param { return m.Params }, len(x.Args))
	if !ok {
		c.errorf(x, "%s.%s: expected %s arguments, got %d", ext.Name, f.Name, arities(pss), len(x.Args))
		c.argsOnly(x, sc)
		return nil
	}
	x.Kind, x.Method = ast.CallExternMethod, m
	c.deprecated(x, ext.Name+"."+m.Name, m.Annos)
	if m.IsAbstract {
		c.unsupportedf(x, "call of abstract method %s.%s", ext.Name, m.Name)
		return nil
	}
	b := map[*ast.TypeParam]ast.Type{}
	for i, tp := range ext.TypeParams {
		if i < len(obj.Args) {
			b[tp] = obj.Args[i]
		}
	}
	if !c.explicitTypeArgs(x, ext.Name+"."+m.Name, m.TypeParams, b, sc) {
		return nil
	}
	ps, ok := c.matchArgs(x, ext.Name+"."+m.Name, m.Params, &x.Args, b, sc)
	if !ok || !c.allBound(x, ext.Name+"."+m.Name, m.TypeParams, b) {
		return nil
	}
	x.ArgParams, x.TypeBindings = ps, b
	if !c.packetArgs(x, ext, m) {
		return nil
	}
	ret := subst(m.Return.Resolved(), b)
	if tv, isVar := ret.(*ast.TypeVar); isVar {
		c.errorf(x, "%s.%s: cannot infer the result type %s", ext.Name, m.Name, tv.Name)
		return nil
	}
	return ret
}

// packetArgs checks what core.p4's signatures leave generic: extract
// takes a header, emit a header, header stack, header union or a struct
// of those, lookahead a fixed-width type.
func (c *checker) packetArgs(x *ast.Call, ext *ast.ExternDecl, m *ast.MethodDecl) bool {
	switch {
	case ext.Name == "packet_in" && m.Name == "extract" && len(x.Args) > 0:
		if t := x.Args[0].Value.Info().Type; !ast.IsHeader(t) {
			c.errorAtExpr(x.Args[0].Value, "extract: %s has type %s, but only headers can be extracted", exprText(x.Args[0].Value), t)
			return false
		}
	case ext.Name == "packet_out" && m.Name == "emit" && len(x.Args) > 0:
		if t := x.Args[0].Value.Info().Type; !emittable(t) {
			c.errorAtExpr(x.Args[0].Value, "emit: %s has type %s, but only headers, header stacks, header unions and structs of them can be emitted", exprText(x.Args[0].Value), t)
			return false
		}
	}
	return true
}

func emittable(t ast.Type) bool {
	switch x := t.(type) {
	case *ast.StructDecl:
		if x.Kind != ast.KindStruct {
			return true
		}
		for _, f := range x.Fields {
			if !emittable(f.Type.Resolved()) {
				return false
			}
		}
		return true
	case *ast.StackType:
		return emittable(x.Elem)
	}
	return false
}

// builtinCall checks isValid/setValid/setInvalid, push_front/pop_front
// and apply.
func (c *checker) builtinCall(x *ast.Call, f *ast.Member, recv ast.Type, sc *scope) ast.Type {
	name := f.Name
	x.Kind, x.Builtin = ast.CallBuiltin, name
	noArgs := func() bool {
		if len(x.Args) != 0 {
			c.errorf(x, "%s: expected 0 arguments, got %d", name, len(x.Args))
			c.argsOnly(x, sc)
			return false
		}
		return true
	}
	if len(x.TypeArgs) > 0 {
		c.errorf(x, "%s takes no type arguments", name)
		return nil
	}
	switch r := recv.(type) {
	case *ast.StructDecl:
		switch name {
		case "isValid":
			if !noArgs() {
				return nil
			}
			return ast.TBool
		case "setValid", "setInvalid":
			if !noArgs() {
				return nil
			}
			if ok, why := c.writable(f.X); !ok {
				c.errorf(x, "%s: cannot change the validity of %s: %s", name, exprText(f.X), why)
				return nil
			}
			return ast.TVoid
		}
		if sizeMethods[name] && noArgs() {
			return c.sizeQuery(x, r, name)
		}
		c.unsupportedf(x, "%s.%s()", exprText(f.X), name)
		return nil
	case *ast.StackType:
		if len(x.Args) != 1 {
			c.errorf(x, "%s: expected 1 argument, got %d", name, len(x.Args))
			c.argsOnly(x, sc)
			return nil
		}
		n, ok := c.constIntExpr(x.Args[0].Value, sc, name+" count")
		if !ok {
			return nil
		}
		if n < 1 {
			c.errorf(x.Args[0].Value, "%s: the count must be positive, not %d", name, n)
			return nil
		}
		if ok, why := c.writable(f.X); !ok {
			c.errorf(x, "%s: cannot modify %s: %s", name, exprText(f.X), why)
			return nil
		}
		return ast.TVoid
	case *ast.TableType:
		if !noArgs() {
			return nil
		}
		if c.ctx != ctxControl {
			c.errorf(x, "%s.apply(): tables can only be applied in a control's apply block", r.Table.Name)
			return nil
		}
		x.Kind, x.Builtin, x.Table = ast.CallTableApply, "", r.Table
		return &ast.ApplyResultType{Table: r.Table}
	case *ast.ObjectType:
		var params []*ast.Param
		switch d := r.Decl.(type) {
		case *ast.ParserDecl:
			if c.ctx != ctxParser {
				c.errorf(x, "%s.apply(): parsers can only be applied from a parser state", exprText(f.X))
				return nil
			}
			x.Kind, params = ast.CallParserApply, d.Params
		case *ast.ControlDecl:
			if c.ctx != ctxControl {
				c.errorf(x, "%s.apply(): controls can only be applied in a control's apply block", exprText(f.X))
				return nil
			}
			x.Kind, params = ast.CallControlApply, d.Params
		}
		x.Builtin = ""
		ps, ok := c.matchArgs(x, exprText(f.X)+".apply", params, &x.Args, nil, sc)
		if !ok {
			return nil
		}
		x.ArgParams = ps
		return ast.TVoid
	}
	c.errorf(x, "%s: no method %s on %s", exprText(f), name, recv)
	return nil
}

// sizeQuery folds h.minSizeInBits() and its relatives to a constant of
// type int: varbit fields count 0 bits for the minimum and their maximum
// width for the maximum; bytes round up.
func (c *checker) sizeQuery(x *ast.Call, s *ast.StructDecl, name string) ast.Type {
	min, max, ok := structSize(s)
	if !ok {
		c.unsupportedf(x, "%s() of %s (only headers and structs of fixed-width fields)", name, s)
		return nil
	}
	v := min
	if strings.HasPrefix(name, "max") {
		v = max
	}
	if strings.HasSuffix(name, "Bytes") {
		v = (v + 7) / 8
	}
	x.Const = intValue(big.NewInt(int64(v)))
	return ast.TInt
}

// structSize returns the minimum and maximum serialized width of s.
func structSize(s *ast.StructDecl) (min, max int, ok bool) {
	if s.Kind == ast.KindHeaderUnion {
		return 0, 0, false
	}
	for _, f := range s.Fields {
		switch t := f.Type.Resolved().(type) {
		case *ast.VarbitType:
			max += t.MaxWidth
		case *ast.StructDecl:
			a, b, fine := structSize(t)
			if !fine {
				return 0, 0, false
			}
			min, max = min+a, max+b
		default:
			w, fixed := ast.BitWidth(t)
			if !fixed {
				return 0, 0, false
			}
			min, max = min+w, max+w
		}
	}
	return min, max, true
}

func (c *checker) constructorCall(x *ast.Call, f *ast.Ident, d ast.Decl, sc *scope) ast.Type {
	te := &ast.NamedType{Pos: f.Pos, Name: f.Name, TopLevel: f.TopLevel, Args: x.TypeArgs}
	t := c.resolveTypeAllowInfer(te, sc)
	obj, ok := t.(*ast.ObjectType)
	if !ok {
		c.argsOnly(x, sc)
		return nil
	}
	res := c.construct(x, obj, &x.Args, sc)
	if res == nil {
		return nil
	}
	x.Kind, x.Ctor = ast.CallConstructor, res.ctor
	return res.typ
}

type constructed struct {
	typ  *ast.ObjectType
	ctor *ast.MethodDecl
}

// construct checks the arguments of an instantiation of obj (an extern,
// parser, control or package), inferring missing type arguments.
func (c *checker) construct(at ast.Node, obj *ast.ObjectType, args *[]*ast.Arg, sc *scope) *constructed {
	name := obj.Decl.DeclName()
	tps := typeParamsOf(obj.Decl)
	b := map[*ast.TypeParam]ast.Type{}
	for i, tp := range tps {
		if i < len(obj.Args) {
			b[tp] = obj.Args[i]
		}
	}
	var params []*ast.Param
	res := &constructed{}
	switch d := obj.Decl.(type) {
	case *ast.ExternDecl:
		var ctors []*ast.MethodDecl
		var pss [][]*ast.Param
		for _, m := range d.Methods {
			if m.IsConstructor {
				ctors = append(ctors, m)
				pss = append(pss, m.Params)
			}
		}
		if len(ctors) == 0 {
			c.errorf(at, "extern %s has no constructor and cannot be instantiated", name)
			return nil
		}
		ctor, ok := pickOverload(ctors, func(m *ast.MethodDecl) []*ast.Param { return m.Params }, len(*args))
		if !ok {
			c.errorf(at, "%s: the constructor expects %s arguments, got %d", name, arities(pss), len(*args))
			for _, a := range *args {
				c.expr(a.Value, nil, sc)
			}
			return nil
		}
		c.deprecated(at, name, d.Annos)
		res.ctor, params = ctor, ctor.Params
	case *ast.ParserDecl:
		if d.IsPrototype {
			c.errorf(at, "%s is a parser type; instantiate a parser declared with a body", name)
			return nil
		}
		params = d.CtorParams
		c.use(d)
	case *ast.ControlDecl:
		if d.IsPrototype {
			c.errorf(at, "%s is a control type; instantiate a control declared with a body", name)
			return nil
		}
		params = d.CtorParams
		c.use(d)
	case *ast.PackageDecl:
		params = d.Params
	}
	if _, ok := c.matchArgs(at, name, params, args, b, sc); !ok {
		return nil
	}
	if !c.allBound(at, name, tps, b) {
		return nil
	}
	res.typ = &ast.ObjectType{Decl: obj.Decl}
	for _, tp := range tps {
		res.typ.Args = append(res.typ.Args, b[tp])
	}
	return res
}

// isBlockPrototype reports whether t is a parser or control type
// declaration (such as v1model's Ingress<H, M>), which arguments match
// structurally rather than by name.
func isBlockPrototype(t ast.Type) bool {
	obj, ok := t.(*ast.ObjectType)
	if !ok {
		return false
	}
	switch d := obj.Decl.(type) {
	case *ast.ParserDecl:
		return d.IsPrototype
	case *ast.ControlDecl:
		return d.IsPrototype
	}
	return false
}

// containsTypeVar reports whether t mentions a type variable.
func containsTypeVar(t ast.Type) bool {
	switch x := t.(type) {
	case *ast.TypeVar:
		return true
	case *ast.StackType:
		return containsTypeVar(x.Elem)
	case *ast.TupleType:
		for _, e := range x.Elems {
			if containsTypeVar(e) {
				return true
			}
		}
	case *ast.ObjectType:
		for _, a := range x.Args {
			if containsTypeVar(a) {
				return true
			}
		}
	}
	return false
}

// matchArgs binds args (of the call or instantiation at) to params (positionally or by name), checks each
// argument against its parameter's type and direction and infers type
// variables into b. It returns the parameter of each argument.
func (c *checker) matchArgs(at ast.Node, callee string, params []*ast.Param, argp *[]*ast.Arg, b map[*ast.TypeParam]ast.Type, sc *scope) ([]*ast.Param, bool) {
	args := *argp
	if b == nil {
		b = map[*ast.TypeParam]ast.Type{}
	}
	out := make([]*ast.Param, len(args))
	named := len(args) > 0 && args[0].Name != ""
	given := map[*ast.Param]bool{}
	for i, a := range args {
		if (a.Name != "") != named {
			c.errorf(a, "%s: either all arguments are named or none", callee)
			return nil, false
		}
		if named {
			for _, p := range params {
				if p.Name == a.Name {
					out[i] = p
				}
			}
			if out[i] == nil {
				c.errorf(a, "%s: no parameter named %s", callee, a.Name)
				return nil, false
			}
			if given[out[i]] {
				c.errorf(a, "%s: parameter %s given twice", callee, a.Name)
				return nil, false
			}
		} else if i < len(params) {
			out[i] = params[i]
		}
		if out[i] != nil {
			given[out[i]] = true
		}
	}
	missing := 0
	for _, p := range params {
		if !given[p] && p.Default == nil {
			missing++
		}
	}
	if len(args) > len(params) || missing > 0 {
		for _, a := range args {
			c.expr(a.Value, nil, sc)
		}
		c.errorf(at, "%s: expected %d arguments, got %d", callee, len(params), len(args))
		return nil, false
	}
	good := true
	for i, a := range args {
		if !c.argument(callee, out[i], a, b, sc) {
			good = false
		}
	}
	// An integer literal met a type variable before a later argument bound
	// it (f<T>(in T a, in T b) called as f(300, x8)): give it that type now.
	for i, a := range args {
		if good && isIntLit(a.Value.Info().Type) && containsTypeVar(out[i].Type.Resolved()) {
			if bt := ast.Bits(subst(out[i].Type.Resolved(), b), false); bt != nil {
				c.convertInt(a.Value, bt)
			}
		}
	}
	if good && named {
		*argp, out = inParamOrder(params, args, out)
	}
	return out, good
}

// inParamOrder rewrites named arguments into the order of the parameters,
// so that every later stage may bind them by position: a parameter left
// out before one that is given takes its default value.
func inParamOrder(params []*ast.Param, args []*ast.Arg, bound []*ast.Param) ([]*ast.Arg, []*ast.Param) {
	byParam := map[*ast.Param]*ast.Arg{}
	for i, a := range args {
		byParam[bound[i]] = a
	}
	last := -1
	for i, p := range params {
		if byParam[p] != nil {
			last = i
		}
	}
	outArgs := make([]*ast.Arg, 0, last+1)
	outParams := make([]*ast.Param, 0, last+1)
	for _, p := range params[:last+1] {
		a := byParam[p]
		if a == nil {
			a = &ast.Arg{Pos: p.Pos, Name: p.Name, Value: p.Default}
		}
		outArgs = append(outArgs, a)
		outParams = append(outParams, p)
	}
	return outArgs, outParams
}

func (c *checker) argument(callee string, p *ast.Param, a *ast.Arg, b map[*ast.TypeParam]ast.Type, sc *scope) bool {
	orig := p.Type.Resolved()
	pt := subst(orig, b)
	if pt == nil {
		c.expr(a.Value, nil, sc)
		return false
	}
	// Still generic: unbound type variables, a parser/control prototype,
	// or a type variable bound so far only by an integer literal (a later
	// argument may give it a width).
	generic := containsTypeVar(pt) || isBlockPrototype(pt) || containsTypeVar(orig) && isIntLit(pt)
	var hint ast.Type
	if !generic {
		hint = pt
	}
	if _, dc := a.Value.(*ast.DontCare); dc {
		if p.Dir != ast.DirOut {
			c.errorf(a, "%s: _ can only be passed to an out parameter (%s is %s)", callee, p.Name, dirName(p.Dir))
			return false
		}
		if generic {
			c.errorf(a, "%s: cannot infer the type of parameter %s from _", callee, p.Name)
			return false
		}
		a.Value.Info().Type = pt
		return true
	}
	at := c.expr(a.Value, hint, sc)
	if at == nil {
		return false
	}
	if p.Dir == ast.DirOut || p.Dir == ast.DirInOut {
		if ok, why := c.writable(a.Value); !ok {
			c.errorf(a, "%s: the argument for %s parameter %s must be writable, but %s", callee, p.Dir, p.Name, why)
			return false
		}
		if generic {
			if !unify(orig, at, b) {
				c.errorf(a, "%s: argument %s has type %s, which does not match parameter %s of type %s", callee, exprText(a.Value), at, p.Name, subst(pt, b))
				return false
			}
			return true
		}
		if !ast.SameType(at, pt) {
			c.errorf(a, "%s: argument %s has type %s but %s parameter %s has type %s (no implicit conversion for %s arguments)", callee, exprText(a.Value), at, p.Dir, p.Name, pt, p.Dir)
			return false
		}
		return true
	}
	if generic {
		if !unify(orig, at, b) {
			c.errorf(a, "%s: argument %s has type %s, which does not match parameter %s of type %s", callee, exprText(a.Value), at, p.Name, subst(pt, b))
			return false
		}
		return true
	}
	return c.assignable(a.Value, pt, "parameter "+p.Name+" of "+callee)
}

func dirName(d ast.Direction) string {
	if d == ast.DirNone {
		return "directionless"
	}
	return d.String()
}

// writable reports whether e denotes a location that may be assigned, and
// if not, why.
func (c *checker) writable(e ast.Expr) (bool, string) {
	if e.Info().LValue {
		return true, ""
	}
	root := e
	for {
		switch x := root.(type) {
		case *ast.Member:
			if x.Kind == ast.MemberStackSize || x.Kind == ast.MemberStackLastIndex || x.Kind == ast.MemberStackNextIndex {
				return false, fmt.Sprintf("%s is read-only", exprText(e))
			}
			root = x.X
			continue
		case *ast.Index:
			root = x.X
			continue
		case *ast.Slice:
			root = x.X
			continue
		case *ast.Ident:
			switch d := x.Decl.(type) {
			case *ast.Param:
				if d.Dir == ast.DirIn {
					return false, fmt.Sprintf("%s is an 'in' parameter (read-only)", d.Name)
				}
				return false, fmt.Sprintf("%s is a directionless parameter (read-only)", d.Name)
			case *ast.ConstDecl:
				return false, fmt.Sprintf("%s is a constant", d.Name)
			}
		}
		return false, fmt.Sprintf("%s is not a variable", exprText(e))
	}
}
