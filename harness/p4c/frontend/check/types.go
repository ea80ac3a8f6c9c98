package check

import (
	"math/big"
	"regexp"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// maxWidth is the widest bit<W> the compiler accepts.
const maxWidth = 2048

// resolveType resolves a type expression, filling its T slot; nil after an
// error (already reported).
func (c *checker) resolveType(te ast.TypeExpr, sc *scope) ast.Type {
	return c.resolve(te, sc, false)
}

// resolveTypeAllowInfer is resolveType for instantiations, where the type
// arguments of a generic extern or package may be left to inference.
func (c *checker) resolveTypeAllowInfer(te ast.TypeExpr, sc *scope) ast.Type {
	return c.resolve(te, sc, true)
}

func (c *checker) resolve(te ast.TypeExpr, sc *scope, allowInfer bool) ast.Type {
	if te == nil {
		return nil
	}
	if t := te.Resolved(); t != nil {
		return t
	}
	var t ast.Type
	switch x := te.(type) {
	case *ast.BitTypeExpr:
		w := 1
		if x.Width != nil {
			v, ok := c.constIntExpr(x.Width, sc, "width")
			if !ok {
				return nil
			}
			w = v
		}
		switch {
		case x.Varbit:
			if w < 1 || w > maxWidth*8 {
				c.errorf(x, "varbit<%d>: invalid maximum width", w)
				return nil
			}
			t = &ast.VarbitType{MaxWidth: w}
		case w < 1 || w > maxWidth:
			name := "bit"
			if x.Signed {
				name = "int"
			}
			if w > maxWidth {
				c.unsupportedf(x, "%s<%d>: widths above %d bits", name, w, maxWidth)
			} else {
				c.errorf(x, "%s<%d>: invalid width", name, w)
			}
			return nil
		default:
			t = &ast.BitsType{Width: w, Signed: x.Signed}
		}
		x.T = t
	case *ast.BaseTypeExpr:
		switch x.Kind {
		case ast.BaseBool:
			t = ast.TBool
		case ast.BaseInt:
			t = ast.TInt
		case ast.BaseString:
			t = ast.TString
		case ast.BaseVoid:
			t = ast.TVoid
		case ast.BaseError:
			t = ast.TError
		case ast.BaseMatchKind:
			t = ast.TMatchKind
		case ast.BaseDontCare:
			t = ast.TDontCare
		}
		x.T = t
	case *ast.StackTypeExpr:
		elem := c.resolveType(x.Elem, sc)
		if elem == nil {
			return nil
		}
		n, ok := c.constIntExpr(x.Size, sc, "header stack size")
		if !ok {
			return nil
		}
		if n < 1 {
			c.errorf(x.Size, "header stack size must be positive, not %d", n)
			return nil
		}
		if s, isStruct := elem.(*ast.StructDecl); !isStruct || s.Kind == ast.KindStruct {
			c.unsupportedf(x, "%s[%d]: arrays of %s (bmv2, and with it p4c-bm2-ss, holds arrays of headers and header unions only)", elem, n, elem)
			return nil
		}
		t = &ast.StackType{Elem: elem, Size: n}
		x.T = t
	case *ast.TupleTypeExpr:
		tt := &ast.TupleType{}
		for _, e := range x.Elems {
			et := c.resolveType(e, sc)
			if et == nil {
				return nil
			}
			tt.Elems = append(tt.Elems, et)
		}
		t = tt
		x.T = t
	case *ast.NamedType:
		t = c.resolveNamed(x, sc, allowInfer)
		x.T = t
	}
	return t
}

func (c *checker) lookupIn(sc *scope, name string, top bool) []ast.Decl {
	if top {
		return sc.top().names[name]
	}
	return sc.lookup(name)
}

func (c *checker) resolveNamed(x *ast.NamedType, sc *scope, allowInfer bool) ast.Type {
	ds := c.lookupIn(sc, x.Name, x.TopLevel)
	if len(ds) == 0 {
		c.errorf(x, "%s: type not found", x.Name)
		return nil
	}
	d := ds[0]
	x.Decl = d
	noArgs := func() bool {
		if len(x.Args) > 0 {
			c.errorf(x, "%s: type %s takes no type arguments", x.Name, x.Name)
			return false
		}
		return true
	}
	switch y := d.(type) {
	case *ast.StructDecl:
		if len(y.TypeParams) > 0 && len(x.Args) > 0 {
			return c.specialize(x, y, sc)
		}
		c.structDecl(y)
		if !noArgs() {
			return nil
		}
		return y
	case *ast.EnumDecl:
		c.enumDecl(y)
		if !noArgs() {
			return nil
		}
		return y
	case *ast.TypedefDecl:
		if !noArgs() {
			return nil
		}
		return c.typedefType(y)
	case *ast.TypeParam:
		if !noArgs() {
			return nil
		}
		return y.Var
	case *ast.ExternDecl, *ast.ParserDecl, *ast.ControlDecl, *ast.PackageDecl:
		tps := typeParamsOf(d)
		obj := &ast.ObjectType{Decl: d}
		if len(x.Args) == 0 && len(tps) > 0 && !allowInfer {
			c.errorf(x, "%s: missing type arguments (%d expected)", x.Name, len(tps))
			return nil
		}
		if len(x.Args) > 0 && len(x.Args) != len(tps) {
			c.errorf(x, "%s: expected %d type arguments, got %d", x.Name, len(tps), len(x.Args))
			return nil
		}
		for _, a := range x.Args {
			at := c.resolveType(a, sc)
			if at == nil {
				return nil
			}
			obj.Args = append(obj.Args, at)
		}
		return obj
	}
	c.errorf(x, "%s: %s is a %s, not a type", x.Name, x.Name, describeDecl(d))
	return nil
}

// specialize returns the struct or header a generic one becomes with the
// type arguments of x (`standard_t<bit<8>>`), made once per argument
// list and named as p4c names it (standard_t_bit8).
func (c *checker) specialize(x *ast.NamedType, d *ast.StructDecl, sc *scope) ast.Type {
	if len(x.Args) != len(d.TypeParams) {
		c.errorf(x, "%s: expected %d type arguments, got %d", x.Name, len(d.TypeParams), len(x.Args))
		return nil
	}
	inner := newScope(c.global)
	name := d.Name
	for i, a := range x.Args {
		at := c.resolveType(a, sc)
		if at == nil {
			return nil
		}
		name += "_" + nonIdent.ReplaceAllString(at.String(), "")
		inner.names[d.TypeParams[i].Name] = []ast.Decl{&ast.TypedefDecl{Pos: d.Pos, Name: d.TypeParams[i].Name, Type: &ast.NamedType{Pos: d.Pos, Name: at.String(), T: at}}}
	}
	if spec, ok := c.specialized[name]; ok {
		return spec
	}
	spec := &ast.StructDecl{Pos: d.Pos, Annos: d.Annos, Kind: d.Kind, Name: name}
	c.specialized[name] = spec
	for _, f := range d.Fields {
		te := cloneTypeExpr(f.Type)
		if c.resolveType(te, inner) == nil {
			return nil
		}
		spec.Fields = append(spec.Fields, &ast.Field{Pos: f.Pos, Annos: f.Annos, Type: te, Name: f.Name})
	}
	c.structDecl(spec)
	return spec
}

var nonIdent = regexp.MustCompile(`[^A-Za-z0-9_]`)

// cloneTypeExpr copies a type expression before it is resolved, so that
// each specialization of a generic type resolves its own copy.
func cloneTypeExpr(te ast.TypeExpr) ast.TypeExpr {
	switch x := te.(type) {
	case *ast.NamedType:
		out := &ast.NamedType{Pos: x.Pos, Name: x.Name, TopLevel: x.TopLevel}
		for _, a := range x.Args {
			out.Args = append(out.Args, cloneTypeExpr(a))
		}
		return out
	case *ast.BitTypeExpr:
		return &ast.BitTypeExpr{Pos: x.Pos, Signed: x.Signed, Varbit: x.Varbit, Width: x.Width}
	case *ast.BaseTypeExpr:
		return &ast.BaseTypeExpr{Pos: x.Pos, Kind: x.Kind}
	case *ast.StackTypeExpr:
		return &ast.StackTypeExpr{Pos: x.Pos, Elem: cloneTypeExpr(x.Elem), Size: x.Size}
	case *ast.TupleTypeExpr:
		out := &ast.TupleTypeExpr{Pos: x.Pos}
		for _, e := range x.Elems {
			out.Elems = append(out.Elems, cloneTypeExpr(e))
		}
		return out
	}
	return te
}

func typeParamsOf(d ast.Decl) []*ast.TypeParam {
	switch x := d.(type) {
	case *ast.ExternDecl:
		return x.TypeParams
	case *ast.ParserDecl:
		return x.TypeParams
	case *ast.ControlDecl:
		return x.TypeParams
	case *ast.PackageDecl:
		return x.TypeParams
	case *ast.MethodDecl:
		return x.TypeParams
	case *ast.ExternFunctionDecl:
		return x.TypeParams
	case *ast.FunctionDecl:
		return x.TypeParams
	}
	return nil
}

// typedefType resolves a typedef (transparently) or a `type` declaration
// (a distinct NewType), detecting cycles.
func (c *checker) typedefType(d *ast.TypedefDecl) ast.Type {
	if t, ok := c.typedefs[d]; ok {
		return t
	}
	if c.resolving[d] {
		c.errorf(d, "%s: recursive type definition", d.Name)
		return nil
	}
	c.resolving[d] = true
	under := c.resolveType(d.Type, c.global)
	delete(c.resolving, d)
	var t ast.Type = under
	if d.IsNewType && under != nil {
		t = &ast.NewType{Decl: d, Underlying: under}
	}
	c.typedefs[d] = t
	return t
}

// constIntExpr evaluates a compile-time integer (widths, sizes, indices).
func (c *checker) constIntExpr(e ast.Expr, sc *scope, what string) (int, bool) {
	c.expr(e, nil, sc)
	info := e.Info()
	if info.Type == nil {
		return 0, false
	}
	if info.Const == nil || info.Const.Kind != ast.ValInt {
		c.errorf(e, "%s must be a compile-time integer constant", what)
		return 0, false
	}
	v := info.Const.Int
	if !v.IsInt64() || v.Int64() > 1<<24 || v.Int64() < -(1<<24) {
		c.errorf(e, "%s %s is out of range", what, v)
		return 0, false
	}
	return int(v.Int64()), true
}

// subst replaces type variables by their bindings.
func subst(t ast.Type, b map[*ast.TypeParam]ast.Type) ast.Type {
	if len(b) == 0 || t == nil {
		return t
	}
	switch x := t.(type) {
	case *ast.TypeVar:
		if r, ok := b[x.Param]; ok && r != nil {
			return r
		}
	case *ast.StackType:
		return &ast.StackType{Elem: subst(x.Elem, b), Size: x.Size}
	case *ast.TupleType:
		tt := &ast.TupleType{Elems: make([]ast.Type, len(x.Elems))}
		for i, e := range x.Elems {
			tt.Elems[i] = subst(e, b)
		}
		return tt
	case *ast.ObjectType:
		o := &ast.ObjectType{Decl: x.Decl, Args: make([]ast.Type, len(x.Args))}
		for i, a := range x.Args {
			o.Args[i] = subst(a, b)
		}
		return o
	}
	return t
}

// unify binds the type variables of pattern so that it equals actual;
// false when they cannot be made equal.
func unify(pattern, actual ast.Type, b map[*ast.TypeParam]ast.Type) bool {
	if pattern == nil || actual == nil {
		return false
	}
	switch x := pattern.(type) {
	case *ast.TypeVar:
		if bound, ok := b[x.Param]; ok && bound != nil {
			if _, isInt := bound.(*ast.IntLitType); isInt {
				b[x.Param] = actual
				return true
			}
			if _, isInt := actual.(*ast.IntLitType); isInt {
				return true
			}
			return ast.SameType(bound, actual)
		}
		b[x.Param] = actual
		return true
	case *ast.StackType:
		y, ok := actual.(*ast.StackType)
		return ok && x.Size == y.Size && unify(x.Elem, y.Elem, b)
	case *ast.TupleType:
		y, ok := actual.(*ast.TupleType)
		if !ok || len(x.Elems) != len(y.Elems) {
			return false
		}
		for i := range x.Elems {
			if !unify(x.Elems[i], y.Elems[i], b) {
				return false
			}
		}
		return true
	case *ast.ObjectType:
		y, ok := actual.(*ast.ObjectType)
		if !ok {
			return false
		}
		if x.Decl != y.Decl {
			// A parser/control declaration against a prototype
			// (`Parser<H, M>` vs `parser MyParser(...)`): compare the
			// apply parameters.
			return unifyBlock(x, y, b)
		}
		if len(x.Args) != len(y.Args) {
			return len(x.Args) == 0 || len(y.Args) == 0
		}
		for i := range x.Args {
			if !unify(x.Args[i], y.Args[i], b) {
				return false
			}
		}
		return true
	}
	return ast.SameType(pattern, actual)
}

// unifyBlock matches a parser or control declaration y against the
// prototype type x (e.g. v1model's Ingress<H, M>): same kind, same number of
// parameters, same directions and unifiable parameter types.
func unifyBlock(x, y *ast.ObjectType, b map[*ast.TypeParam]ast.Type) bool {
	var xp, yp []*ast.Param
	switch xd := x.Decl.(type) {
	case *ast.ParserDecl:
		yd, ok := y.Decl.(*ast.ParserDecl)
		if !ok || !xd.IsPrototype {
			return false
		}
		// Bind the prototype's own type parameters from its type arguments.
		bindArgs(xd.TypeParams, x.Args, b)
		xp, yp = xd.Params, yd.Params
	case *ast.ControlDecl:
		yd, ok := y.Decl.(*ast.ControlDecl)
		if !ok || !xd.IsPrototype {
			return false
		}
		bindArgs(xd.TypeParams, x.Args, b)
		xp, yp = xd.Params, yd.Params
	default:
		return false
	}
	if len(xp) != len(yp) {
		return false
	}
	for i := range xp {
		// An `in` parameter where the prototype says inout is accepted:
		// older v1model declared VerifyChecksum(in H hdr, ...) and p4c's
		// test programs of that era still write it; the block only reads it.
		sameDir := xp[i].Dir == yp[i].Dir || xp[i].Dir == ast.DirInOut && yp[i].Dir == ast.DirIn
		if !sameDir || !unify(substArgs(xp[i].Type.Resolved(), b), yp[i].Type.Resolved(), b) {
			return false
		}
	}
	return true
}

// bindArgs records explicit type arguments (which may themselves be type
// variables of an enclosing package) for a prototype's type parameters.
func bindArgs(tps []*ast.TypeParam, args []ast.Type, b map[*ast.TypeParam]ast.Type) {
	for i, tp := range tps {
		if i < len(args) {
			if _, has := b[tp]; !has {
				b[tp] = args[i]
			}
		}
	}
}

// substArgs returns t with the prototype's type parameters replaced by
// their bindings, following chains through the enclosing package's
// type variables (Parser<H, M> inside V1Switch<H, M>).
func substArgs(t ast.Type, b map[*ast.TypeParam]ast.Type) ast.Type {
	for i := 0; i < 4; i++ {
		tv, ok := t.(*ast.TypeVar)
		if !ok {
			return subst(t, b)
		}
		r, bound := b[tv.Param]
		if !bound || r == nil || r == t {
			return t
		}
		t = r
	}
	return t
}

// wrap reduces v to the range of t (bit<W>: modulo 2^W; int<W>: two's
// complement range) and reports whether v already fitted.
func wrap(v *big.Int, t *ast.BitsType) (*big.Int, bool) {
	mod := new(big.Int).Lsh(big.NewInt(1), uint(t.Width))
	r := new(big.Int).Mod(v, mod)
	if t.Signed {
		half := new(big.Int).Rsh(mod, 1)
		if r.Cmp(half) >= 0 {
			r.Sub(r, mod)
		}
	}
	return r, r.Cmp(v) == 0
}
