package check

import (
	"math/big"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// expr type-checks e. hint is the type the context expects (or nil): it
// gives integer literals, list expressions and struct initializers their
// type, but mismatches are reported by assignable, not here. The result is
// also stored in e.Info().Type; nil means an error was reported.
func (c *checker) expr(e ast.Expr, hint ast.Type, sc *scope) ast.Type {
	info := e.Info()
	if info.Type != nil {
		return info.Type
	}
	var t ast.Type
	switch x := e.(type) {
	case *ast.IntLit:
		if x.Width > 0 {
			bt := &ast.BitsType{Width: x.Width, Signed: x.Signed}
			if x.Width > maxWidth {
				c.unsupportedf(x, "%s: widths above %d bits", x.Text, maxWidth)
				return nil
			}
			w, fits := wrap(x.Value, bt)
			if !fits {
				c.warnf(x, "%s: value does not fit in %s; using %s", x.Text, bt, w)
			}
			t = bt
			info.Const = intValue(w)
		} else {
			t = ast.TInt
			info.Const = intValue(new(big.Int).Set(x.Value))
		}
	case *ast.BoolLit:
		t = ast.TBool
		info.Const = boolValue(x.Value)
	case *ast.StringLit:
		t = ast.TString
		info.Const = &ast.Value{Kind: ast.ValString, Str: x.Value}
	case *ast.Ident:
		t = c.ident(x, sc)
	case *ast.Member:
		t = c.member(x, sc)
	case *ast.Index:
		t = c.index(x, sc)
	case *ast.Slice:
		t = c.slice(x, sc)
	case *ast.Call:
		t = c.call(x, hint, sc)
	case *ast.Unary:
		t = c.unary(x, hint, sc)
	case *ast.Binary:
		t = c.binary(x, hint, sc)
	case *ast.Ternary:
		t = c.ternary(x, hint, sc)
	case *ast.Cast:
		t = c.cast(x, sc)
	case *ast.ListExpr:
		t = c.list(x, hint, sc)
	case *ast.StructInit:
		t = c.structInit(x, hint, sc)
	case *ast.DontCare:
		t = ast.TDontCare
	case *ast.Default:
		c.errorf(x, "default is only allowed as a keyset or switch label")
		return nil
	case *ast.TypeArgExpr:
		c.unsupportedf(x, "a type used as an expression")
		return nil
	case *ast.InvalidHeader:
		c.unsupportedf(x, "the invalid header expression {#} (use setInvalid())")
		return nil
	case *ast.SelectExpr:
		c.errorf(x, "select is only allowed in a transition")
		return nil
	default:
		c.unsupportedf(e, "expression %T", e)
		return nil
	}
	if isIntLit(t) && info.Const == nil {
		// Back ends rely on every int-typed expression being a constant.
		c.unsupportedf(e, "%s: an integer of unknown width that is not a compile-time constant", exprText(e))
		return nil
	}
	info.Type = t
	return t
}

// ident resolves a name used as a value.
func (c *checker) ident(x *ast.Ident, sc *scope) ast.Type {
	info := &x.ExprInfo
	if x.Name == "this" {
		c.unsupportedf(x, "this")
		return nil
	}
	ds := c.lookupIn(sc, x.Name, x.TopLevel)
	if len(ds) == 0 {
		c.errorf(x, "%s: declaration not found", x.Name)
		return nil
	}
	d := ds[0]
	x.Decl = d
	switch y := d.(type) {
	case *ast.Param:
		if isIntLit(y.Type.Resolved()) {
			// Integers of unknown width exist only as compile-time
			// constants; a parameter has no constant value.
			c.unsupportedf(x, "%s: parameters of type int", x.Name)
			return nil
		}
		info.LValue = y.Dir == ast.DirOut || y.Dir == ast.DirInOut
		return y.Type.Resolved()
	case *ast.VarDecl:
		if isIntLit(y.Type.Resolved()) {
			return nil // reported at the declaration
		}
		info.LValue = true
		return y.Type.Resolved()
	case *ast.ConstDecl:
		if !c.checkedDecls[y] {
			c.constDecl(y, c.global)
		}
		info.Const = y.Value.Info().Const
		return y.Type.Resolved()
	case *ast.InstanceDecl:
		if t := y.Type.Resolved(); t != nil {
			return t
		}
		return nil
	case *ast.TableDecl:
		return &ast.TableType{Table: y}
	case *ast.ActionDecl:
		return &ast.ActionType{Action: y}
	case *ast.EnumMember:
		if _, ok := y.Parent.(*ast.MatchKindDecl); ok {
			info.Const = &ast.Value{Kind: ast.ValEnum, Member: y}
			return ast.TMatchKind
		}
	case *ast.StateDecl:
		return ast.TState
	case *ast.ValueSetDecl:
		return &ast.SetType{Elem: y.Type.Resolved()}
	}
	c.errorf(x, "%s: %s is a %s, not a value", x.Name, x.Name, describeDecl(d))
	return nil
}

// typeNameOf returns the enum or error declaration an expression names
// when it is used as the left side of `.`: `error`, an enum, or a typedef
// of an enum.
func (c *checker) typeNameOf(x ast.Expr, sc *scope) ast.Decl {
	id, ok := x.(*ast.Ident)
	if !ok {
		return nil
	}
	if id.Name == "error" {
		id.Decl = c.errorDecl
		return c.errorDecl
	}
	ds := c.lookupIn(sc, id.Name, id.TopLevel)
	if len(ds) == 0 {
		return nil
	}
	switch d := ds[0].(type) {
	case *ast.EnumDecl:
		c.enumDecl(d)
		id.Decl = d
		return d
	case *ast.TypedefDecl:
		if e, isEnum := c.typedefType(d).(*ast.EnumDecl); isEnum {
			id.Decl = e
			return e
		}
	}
	return nil
}

var headerMethods = map[string]bool{"isValid": true, "setValid": true, "setInvalid": true}

// sizeMethods are the compile-time size queries of headers and structs.
var sizeMethods = map[string]bool{"minSizeInBits": true, "minSizeInBytes": true, "maxSizeInBits": true, "maxSizeInBytes": true}

func (c *checker) member(x *ast.Member, sc *scope) ast.Type {
	info := &x.ExprInfo
	if d := c.typeNameOf(x.X, sc); d != nil {
		switch y := d.(type) {
		case *ast.ErrorDecl:
			m := c.errorMembers[x.Name]
			if m == nil {
				c.errorf(x, "error.%s: no such error (declare it with error { %s })", x.Name, x.Name)
				return nil
			}
			x.Kind, x.EnumMember = ast.MemberError, m
			info.Const = &ast.Value{Kind: ast.ValError, Member: m}
			return ast.TError
		case *ast.EnumDecl:
			for _, m := range y.Members {
				if m.Name == x.Name {
					x.Kind, x.EnumMember = ast.MemberEnum, m
					v := &ast.Value{Kind: ast.ValEnum, Member: m}
					if m.Value != nil && m.Value.Info().Const != nil {
						v.Int = m.Value.Info().Const.Int
					}
					info.Const = v
					return y
				}
			}
			c.errorf(x, "%s.%s: enum %s has no member %s", y.Name, x.Name, y.Name, x.Name)
			return nil
		}
	}
	if t := c.directInvocation(x, sc); t != nil {
		return t
	}
	xt := c.expr(x.X, nil, sc)
	if xt == nil {
		return nil
	}
	lv := x.X.Info().LValue
	switch y := xt.(type) {
	case *ast.StructDecl:
		if f := y.FieldByName(x.Name); f != nil {
			x.Kind, x.Field = ast.MemberField, f
			info.LValue = lv
			return f.Type.Resolved()
		}
		if y.Kind != ast.KindStruct && headerMethods[x.Name] || sizeMethods[x.Name] {
			x.Kind = ast.MemberBuiltinMethod
			return &builtinMethodType{}
		}
		c.errorf(x, "%s: %s %s has no field %s", x.Name, y.Kind, y.Name, x.Name)
		return nil
	case *ast.StackType:
		switch x.Name {
		case "next":
			if c.ctx != ctxParser {
				c.errorf(x, "%s.next is only allowed in parsers", exprText(x.X))
				return nil
			}
			x.Kind = ast.MemberStackNext
			info.LValue = lv
			return y.Elem
		case "last":
			x.Kind = ast.MemberStackLast
			info.LValue = lv
			return y.Elem
		case "size":
			x.Kind = ast.MemberStackSize
			info.Const = intValue(big.NewInt(int64(y.Size)))
			return &ast.BitsType{Width: 32}
		case "lastIndex":
			x.Kind = ast.MemberStackLastIndex
			return &ast.BitsType{Width: 32}
		case "nextIndex":
			x.Kind = ast.MemberStackNextIndex
			return &ast.BitsType{Width: 32}
		case "push_front", "pop_front":
			x.Kind = ast.MemberBuiltinMethod
			return &builtinMethodType{}
		}
		c.errorf(x, "%s: header stacks have no member %s (next, last, size, lastIndex, push_front, pop_front)", x.Name, x.Name)
		return nil
	case *ast.ObjectType:
		switch d := y.Decl.(type) {
		case *ast.ExternDecl:
			for _, m := range d.Methods {
				if m.Name == x.Name && !m.IsConstructor {
					x.Kind = ast.MemberMethod
					return &builtinMethodType{}
				}
			}
			c.errorf(x, "%s: extern %s has no method %s", x.Name, d.Name, x.Name)
			return nil
		case *ast.ParserDecl, *ast.ControlDecl:
			if x.Name == "apply" {
				x.Kind = ast.MemberBuiltinMethod
				return &builtinMethodType{}
			}
		}
		c.errorf(x, "%s: %s has no member %s", x.Name, xt, x.Name)
		return nil
	case *ast.TableType:
		if x.Name == "apply" {
			x.Kind = ast.MemberBuiltinMethod
			return &builtinMethodType{}
		}
		c.errorf(x, "%s: a table only has the method apply()", x.Name)
		return nil
	case *ast.ApplyResultType:
		switch x.Name {
		case "hit":
			x.Kind = ast.MemberTableHit
			return ast.TBool
		case "miss":
			x.Kind = ast.MemberTableMiss
			return ast.TBool
		case "action_run":
			x.Kind = ast.MemberTableActionRun
			return &ast.ActionRunType{Table: y.Table}
		}
		c.errorf(x, "%s: the result of apply() has only hit, miss and action_run", x.Name)
		return nil
	}
	c.errorf(x, "%s: %s has no member %s", x.Name, xt, x.Name)
	return nil
}

// directInvocation handles `Block.apply(...)` where Block names a parser
// or control declaration without constructor parameters: P4 allows
// applying it directly, as if instantiated anonymously at that point.
func (c *checker) directInvocation(x *ast.Member, sc *scope) ast.Type {
	id, ok := x.X.(*ast.Ident)
	if !ok || x.Name != "apply" {
		return nil
	}
	ds := c.lookupIn(sc, id.Name, id.TopLevel)
	if len(ds) == 0 {
		return nil
	}
	switch d := ds[0].(type) {
	case *ast.ControlDecl:
		if d.IsPrototype || len(d.CtorParams) > 0 || len(d.TypeParams) > 0 {
			return nil
		}
	case *ast.ParserDecl:
		if d.IsPrototype || len(d.CtorParams) > 0 || len(d.TypeParams) > 0 {
			return nil
		}
	default:
		return nil
	}
	id.Decl = ds[0]
	id.Type = &ast.ObjectType{Decl: ds[0]}
	c.use(ds[0])
	x.Kind = ast.MemberBuiltinMethod
	return &builtinMethodType{}
}

// builtinMethodType marks a method reference that is not yet called; it
// never escapes a Call.
type builtinMethodType struct{}

func (*builtinMethodType) String() string { return "method" }

func (c *checker) index(x *ast.Index, sc *scope) ast.Type {
	xt := c.expr(x.X, nil, sc)
	it := c.expr(x.Index, &ast.BitsType{Width: 32}, sc)
	if xt == nil || it == nil {
		return nil
	}
	if tt, isTuple := xt.(*ast.TupleType); isTuple {
		cv := x.Index.Info().Const
		if cv == nil || cv.Kind != ast.ValInt || !cv.Int.IsInt64() || cv.Int.Sign() < 0 || cv.Int.Int64() >= int64(len(tt.Elems)) {
			c.errorf(x.Index, "a tuple index must be a constant between 0 and %d", len(tt.Elems)-1)
			return nil
		}
		x.LValue = x.X.Info().LValue
		if tc := x.X.Info().Const; tc != nil && tc.Kind == ast.ValTuple {
			x.Const = tc.Elems[cv.Int.Int64()]
		}
		return tt.Elems[cv.Int.Int64()]
	}
	st, ok := xt.(*ast.StackType)
	if !ok {
		if ast.Bits(xt, false) != nil {
			c.errorf(x, "%s: use a slice [hi:lo] to take bits of a %s value", exprText(x.X), xt)
		} else {
			c.errorf(x, "%s: cannot index a value of type %s", exprText(x.X), xt)
		}
		return nil
	}
	if !isIntegral(it) && serEnumBits(it) == nil {
		c.errorf(x.Index, "a header stack index must be an integer, not %s", it)
		return nil
	}
	if cv := x.Index.Info().Const; cv != nil && cv.Kind == ast.ValInt {
		if cv.Int.Sign() < 0 || cv.Int.Cmp(big.NewInt(int64(st.Size))) >= 0 {
			c.errorf(x.Index, "index %s is out of bounds of %s (size %d)", cv.Int, exprText(x.X), st.Size)
			return nil
		}
	}
	x.LValue = x.X.Info().LValue
	return st.Elem
}

func isIntegral(t ast.Type) bool {
	if _, ok := t.(*ast.IntLitType); ok {
		return true
	}
	return ast.Bits(t, false) != nil
}

func (c *checker) slice(x *ast.Slice, sc *scope) ast.Type {
	xt := c.expr(x.X, nil, sc)
	var hi, lo int
	var okHi, okLo bool
	if x.Width != nil {
		// [lo +: w] is [lo + w - 1 : lo].
		lo, okLo = c.constIntExpr(x.Lo, sc, "slice start")
		var w int
		w, okHi = c.constIntExpr(x.Width, sc, "slice width")
		if okHi && w < 1 {
			c.errorf(x.Width, "slice width must be positive, not %d", w)
			return nil
		}
		hi = lo + w - 1
	} else {
		hi, okHi = c.constIntExpr(x.Hi, sc, "slice bound")
		lo, okLo = c.constIntExpr(x.Lo, sc, "slice bound")
	}
	if xt == nil || !okHi || !okLo {
		return nil
	}
	bt := ast.Bits(xt, false)
	if bt == nil {
		if _, isInt := xt.(*ast.IntLitType); isInt {
			c.errorf(x, "cannot slice an integer literal of unknown width; give it a width, e.g. 8w5")
		} else {
			c.errorf(x, "%s: cannot slice a value of type %s", exprText(x.X), xt)
		}
		return nil
	}
	if hi < lo || lo < 0 || hi >= bt.Width {
		c.errorf(x, "slice [%d:%d] is out of range for %s (bits %d..0, high bound first)", hi, lo, bt, bt.Width-1)
		return nil
	}
	x.HiVal, x.LoVal = hi, lo
	x.LValue = x.X.Info().LValue
	t := &ast.BitsType{Width: hi - lo + 1}
	if cv := x.X.Info().Const; cv != nil && cv.Kind == ast.ValInt {
		v := new(big.Int).Rsh(constBits(cv.Int, bt), uint(lo))
		x.Const = normalize(intValue(v), t)
	}
	return t
}

func (c *checker) unary(x *ast.Unary, hint ast.Type, sc *scope) ast.Type {
	if x.Op == ast.OpNot {
		t := c.expr(x.X, ast.TBool, sc)
		if t == nil {
			return nil
		}
		if _, ok := t.(*ast.BoolType); !ok {
			c.errorf(x, "!: operand must be bool, not %s", t)
			return nil
		}
		if cv := x.X.Info().Const; cv != nil {
			x.Const = boolValue(!cv.Bool)
		}
		return ast.TBool
	}
	t := c.expr(x.X, hint, sc)
	if t == nil {
		return nil
	}
	cv := x.X.Info().Const
	switch tt := t.(type) {
	case *ast.IntLitType:
		switch x.Op {
		case ast.OpBitNot:
			c.errorf(x, "~ cannot be applied to an integer literal of unknown width; give it a width, e.g. ~8w0")
			return nil
		case ast.OpNeg:
			x.Const = intValue(new(big.Int).Neg(cv.Int))
		default:
			x.Const = cv
		}
		return t
	case *ast.BitsType:
		if cv != nil {
			switch x.Op {
			case ast.OpNeg:
				x.Const = normalize(intValue(new(big.Int).Neg(cv.Int)), tt)
			case ast.OpBitNot:
				x.Const = normalize(intValue(new(big.Int).Not(constBits(cv.Int, tt))), tt)
			default:
				x.Const = cv
			}
		}
		return t
	}
	c.errorf(x, "%s: operand must be bit<W> or int<W>, not %s", x.Op, t)
	return nil
}

// convertInt gives an integer-literal-typed expression the type to (a
// bit<W> or int<W>), wrapping its constant value.
func (c *checker) convertInt(e ast.Expr, to ast.Type) {
	info := e.Info()
	if _, ok := info.Type.(*ast.IntLitType); !ok {
		return
	}
	bt := ast.Bits(to, false)
	if bt == nil {
		return
	}
	if info.Const != nil && info.Const.Kind == ast.ValInt {
		v := info.Const.Int
		w, fits := wrap(v, bt)
		// -1 for "all ones" in an unsigned type is idiomatic: only warn
		// when bits are lost.
		negIdiom := v.Sign() < 0 && !bt.Signed && new(big.Int).Neg(v).Cmp(new(big.Int).Lsh(big.NewInt(1), uint(bt.Width))) <= 0
		if !fits && !negIdiom {
			c.warnf(e, "%s does not fit in %s; using %s", v, bt, w)
		}
		info.Const = intValue(w)
	}
	info.Type = bt
}

// serEnumBits returns the underlying type of a serializable enum (or nil).
func serEnumBits(t ast.Type) *ast.BitsType {
	if e, ok := t.(*ast.EnumDecl); ok && e.Underlying != nil {
		return ast.Bits(e.Underlying.Resolved(), false)
	}
	return nil
}

func (c *checker) binary(x *ast.Binary, hint ast.Type, sc *scope) ast.Type {
	switch x.Op {
	case ast.OpMask, ast.OpRange:
		c.errorf(x, "%s is only allowed in select and table entry keysets", x.Op)
		return nil
	case ast.OpAnd, ast.OpOr:
		lt, rt := c.expr(x.X, ast.TBool, sc), c.expr(x.Y, ast.TBool, sc)
		if lt == nil || rt == nil {
			return nil
		}
		_, lb := lt.(*ast.BoolType)
		_, rb := rt.(*ast.BoolType)
		if !lb || !rb {
			c.errorf(x, "%s: operands must be bool, not %s and %s", x.Op, lt, rt)
			return nil
		}
		lc, rc := x.X.Info().Const, x.Y.Info().Const
		switch {
		case lc != nil && rc != nil:
			x.Const, _ = foldBinary(x.Op, lc, rc, ast.TBool, ast.TBool)
		case lc != nil && (x.Op == ast.OpAnd && !lc.Bool || x.Op == ast.OpOr && lc.Bool):
			x.Const = lc // short circuit
		}
		return ast.TBool
	case ast.OpShl, ast.OpShr:
		return c.shift(x, hint, sc)
	case ast.OpConcat:
		return c.concat(x, sc)
	}
	// Operands: check the one that has its own type first so that an
	// integer literal on either side takes that type.
	lt := c.expr(x.X, hintFor(x.Op, hint), sc)
	rt := c.expr(x.Y, lt, sc)
	if lt == nil || rt == nil {
		return nil
	}
	if _, isInt := lt.(*ast.IntLitType); isInt {
		if _, rInt := rt.(*ast.IntLitType); !rInt {
			c.convertInt(x.X, rt)
			lt = x.X.Info().Type
		}
	} else {
		c.convertInt(x.Y, lt)
		rt = x.Y.Info().Type
	}
	// A serializable enum meets its underlying type in comparisons.
	if ub := serEnumBits(lt); ub != nil && ast.SameType(ub, rt) {
		lt = ub
	} else if ub := serEnumBits(rt); ub != nil && ast.SameType(ub, lt) {
		rt = ub
	}
	if !ast.SameType(lt, rt) {
		lb, rb := ast.Bits(lt, false), ast.Bits(rt, false)
		if lb != nil && rb != nil {
			c.errorf(x, "%s: cannot combine %s and %s; widths and signedness must match (add a cast)", x.Op, lt, rt)
		} else {
			c.errorf(x, "%s: operands have different types %s and %s", x.Op, lt, rt)
		}
		return nil
	}
	ot := lt
	lc, rc := asNumber(x.X.Info().Const), asNumber(x.Y.Info().Const)
	switch x.Op {
	case ast.OpEq, ast.OpNe:
		switch ot.(type) {
		case *ast.ObjectType, *ast.TableType, *ast.ActionType, *ast.VoidType, *ast.StringType, *ast.DontCareType, *ast.ActionRunType, *ast.ApplyResultType:
			c.errorf(x, "%s: values of type %s cannot be compared", x.Op, ot)
			return nil
		}
		if lc != nil && rc != nil {
			x.Const, _ = foldBinary(x.Op, lc, rc, ot, ast.TBool)
		}
		return ast.TBool
	case ast.OpLt, ast.OpLe, ast.OpGt, ast.OpGe:
		if !isIntegral(ot) {
			c.errorf(x, "%s: operands must be bit<W>, int<W> or integers, not %s", x.Op, ot)
			return nil
		}
		if lc != nil && rc != nil {
			x.Const, _ = foldBinary(x.Op, lc, rc, ot, ast.TBool)
		}
		return ast.TBool
	}
	// Arithmetic and bitwise operators.
	if !isIntegral(ot) {
		c.errorf(x, "%s: operands must be bit<W>, int<W> or integers, not %s", x.Op, ot)
		return nil
	}
	bt := ast.Bits(ot, false)
	_, isInt := ot.(*ast.IntLitType)
	switch x.Op {
	case ast.OpDiv, ast.OpMod:
		if bt != nil && bt.Signed {
			c.unsupportedf(x, "%s on signed values (int<%d>)", x.Op, bt.Width)
			return nil
		}
	case ast.OpAddSat, ast.OpSubSat:
		if isInt {
			c.errorf(x, "%s: saturating arithmetic needs operands with a width", x.Op)
			return nil
		}
	case ast.OpBitAnd, ast.OpBitOr, ast.OpBitXor:
		if isInt && (lc.Int.Sign() < 0 || rc.Int.Sign() < 0) {
			c.errorf(x, "%s: bitwise operations on negative integers of unknown width; give them a width", x.Op)
			return nil
		}
	}
	if lc != nil && rc != nil {
		v, msg := foldBinary(x.Op, lc, rc, ot, ot)
		if msg != "" {
			c.errorf(x, "%s: %s", x.Op, msg)
			return nil
		}
		x.Const = v
	}
	return ot
}

// asNumber turns a serializable enum constant into its number (operators
// see the underlying value); other values are returned unchanged.
func asNumber(v *ast.Value) *ast.Value {
	if v != nil && v.Kind == ast.ValEnum && v.Int != nil {
		return intValue(v.Int)
	}
	return v
}

// hintFor passes the context's expected type to the left operand of
// arithmetic operators (so `bit<8> x = 1 + y` types the literal), but not
// to comparisons, whose result is bool.
func hintFor(op ast.BinaryOp, hint ast.Type) ast.Type {
	switch op {
	case ast.OpEq, ast.OpNe, ast.OpLt, ast.OpLe, ast.OpGt, ast.OpGe:
		return nil
	}
	return hint
}

func (c *checker) shift(x *ast.Binary, hint ast.Type, sc *scope) ast.Type {
	lt := c.expr(x.X, hint, sc)
	rt := c.expr(x.Y, nil, sc)
	if lt == nil || rt == nil {
		return nil
	}
	rc := x.Y.Info().Const
	switch r := rt.(type) {
	case *ast.IntLitType:
		if rc.Int.Sign() < 0 {
			c.errorf(x.Y, "%s: negative shift amount %s", x.Op, rc.Int)
			return nil
		}
	case *ast.BitsType:
		if r.Signed {
			c.errorf(x.Y, "%s: the shift amount must be unsigned, not %s", x.Op, rt)
			return nil
		}
	default:
		c.errorf(x.Y, "%s: the shift amount must be an unsigned integer, not %s", x.Op, rt)
		return nil
	}
	lc := x.X.Info().Const
	switch lt.(type) {
	case *ast.IntLitType:
		if rc == nil {
			c.errorf(x, "%s: shifting an integer literal of unknown width by a non-constant amount; give it a width, e.g. 32w1", x.Op)
			return nil
		}
	case *ast.BitsType:
	default:
		c.errorf(x, "%s: the shifted value must be bit<W> or int<W>, not %s", x.Op, lt)
		return nil
	}
	if lc != nil && rc != nil {
		v, msg := foldBinary(x.Op, lc, rc, lt, lt)
		if msg != "" {
			c.errorf(x, "%s: %s", x.Op, msg)
			return nil
		}
		x.Const = v
	}
	return lt
}

func (c *checker) concat(x *ast.Binary, sc *scope) ast.Type {
	lt, rt := c.expr(x.X, nil, sc), c.expr(x.Y, nil, sc)
	if lt == nil || rt == nil {
		return nil
	}
	lb, rb := ast.Bits(lt, false), ast.Bits(rt, false)
	if lb == nil || rb == nil {
		c.errorf(x, "++: operands must be bit<W> or int<W> values with known widths, not %s and %s", lt, rt)
		return nil
	}
	t := &ast.BitsType{Width: lb.Width + rb.Width, Signed: lb.Signed}
	if t.Width > maxWidth {
		c.unsupportedf(x, "++ producing %d bits (more than %d)", t.Width, maxWidth)
		return nil
	}
	if lc, rc := x.X.Info().Const, x.Y.Info().Const; lc != nil && rc != nil {
		v := new(big.Int).Lsh(constBits(lc.Int, lb), uint(rb.Width))
		v.Or(v, constBits(rc.Int, rb))
		x.Const = normalize(intValue(v), t)
	}
	return t
}

func (c *checker) ternary(x *ast.Ternary, hint ast.Type, sc *scope) ast.Type {
	ct := c.expr(x.Cond, ast.TBool, sc)
	tt := c.expr(x.Then, hint, sc)
	et := c.expr(x.Else, firstNonNil(tt, hint), sc)
	if ct == nil || tt == nil || et == nil {
		return nil
	}
	if _, ok := ct.(*ast.BoolType); !ok {
		c.errorf(x.Cond, "?: the condition must be bool, not %s", ct)
		return nil
	}
	_, ti := tt.(*ast.IntLitType)
	_, ei := et.(*ast.IntLitType)
	switch {
	case ti && !ei:
		c.convertInt(x.Then, et)
		tt = et
	case ei && !ti:
		c.convertInt(x.Else, tt)
		et = tt
	case ti && ei && x.Cond.Info().Const == nil:
		if bt := ast.Bits(hint, false); bt != nil {
			c.convertInt(x.Then, bt)
			c.convertInt(x.Else, bt)
			tt, et = bt, bt
		} else {
			c.errorf(x, "?: both branches are integer literals of unknown width; give one a width")
			return nil
		}
	}
	if !ast.SameType(tt, et) {
		c.errorf(x, "?: the branches have different types %s and %s", tt, et)
		return nil
	}
	if cc := x.Cond.Info().Const; cc != nil {
		if cc.Bool {
			x.Const = x.Then.Info().Const
		} else {
			x.Const = x.Else.Info().Const
		}
	}
	return tt
}

func firstNonNil(ts ...ast.Type) ast.Type {
	for _, t := range ts {
		if t != nil {
			return t
		}
	}
	return nil
}

func (c *checker) cast(x *ast.Cast, sc *scope) ast.Type {
	to := c.resolveType(x.Type, sc)
	if to == nil {
		c.expr(x.X, nil, sc)
		return nil
	}
	// (T){...} and (T)list: the list takes the target type.
	switch x.X.(type) {
	case *ast.ListExpr, *ast.StructInit:
		from := c.expr(x.X, to, sc)
		if from == nil {
			return nil
		}
		if !ast.SameType(from, to) {
			c.errorf(x, "cannot cast %s to %s", from, to)
			return nil
		}
		x.Const = x.X.Info().Const
		return to
	}
	from := c.expr(x.X, to, sc)
	if from == nil {
		return nil
	}
	cv := x.X.Info().Const
	if ast.SameType(from, to) {
		x.Const = cv
		return to
	}
	fromBits, toBits := ast.Bits(from, false), ast.Bits(to, false)
	switch {
	case fromBits != nil && isIntLit(to):
		if cv != nil {
			x.Const = intValue(cv.Int)
			return to
		}
		// A run-time value cast to int keeps its width: its arithmetic is
		// that of the fixed-width type it came from (p4c folds such casts
		// once the parser is unrolled; bmv2 has no unbounded integers).
		return from
	case fromBits != nil && toBits != nil:
		if fromBits.Width != toBits.Width && fromBits.Signed != toBits.Signed {
			c.errorf(x, "cannot cast %s to %s in one step: change the width and the signedness in separate casts", from, to)
			return nil
		}
		if cv != nil {
			x.Const = normalize(cv, to)
		}
		return to
	case isIntLit(from) && toBits != nil:
		if cv != nil {
			x.Const = normalize(cv, to)
		}
		return to
	case isIntLit(from) && isBool(to):
		if cv.Int.Sign() != 0 && cv.Int.Cmp(big.NewInt(1)) != 0 {
			c.errorf(x, "only 0 and 1 can be cast to bool, not %s", cv.Int)
			return nil
		}
		x.Const = boolValue(cv.Int.Sign() != 0)
		return to
	case fromBits != nil && isBool(to):
		if fromBits.Width != 1 || fromBits.Signed {
			c.errorf(x, "only bit<1> can be cast to bool, not %s", from)
			return nil
		}
		if cv != nil {
			x.Const = boolValue(cv.Int.Sign() != 0)
		}
		return to
	case isBool(from) && toBits != nil:
		if toBits.Width != 1 || toBits.Signed {
			c.errorf(x, "bool can only be cast to bit<1>, not %s", to)
			return nil
		}
		if cv != nil {
			x.Const = intValue(big.NewInt(boolToInt(cv.Bool)))
		}
		return to
	case serEnumBits(from) != nil && toBits != nil:
		if !ast.SameType(serEnumBits(from), toBits) {
			c.errorf(x, "cannot cast %s (underlying %s) to %s; cast to its underlying type first", from, serEnumBits(from), to)
			return nil
		}
		if cv != nil && cv.Int != nil {
			x.Const = intValue(cv.Int)
		}
		return to
	case serEnumBits(to) != nil && (fromBits != nil || isIntLit(from)):
		if fromBits != nil && !ast.SameType(serEnumBits(to), fromBits) {
			c.errorf(x, "cannot cast %s to %s (underlying %s)", from, to, serEnumBits(to))
			return nil
		}
		return to
	}
	if nt, ok := to.(*ast.NewType); ok && (ast.SameType(nt.Underlying, from) || isIntLit(from) && ast.Bits(nt.Underlying, false) != nil) {
		if cv != nil {
			x.Const = normalize(cv, nt.Underlying)
		}
		return to
	}
	if nt, ok := from.(*ast.NewType); ok && ast.SameType(nt.Underlying, to) {
		x.Const = cv
		return to
	}
	c.errorf(x, "cannot cast %s to %s", from, to)
	return nil
}

func isIntLit(t ast.Type) bool { _, ok := t.(*ast.IntLitType); return ok }
func isBool(t ast.Type) bool   { _, ok := t.(*ast.BoolType); return ok }

func boolToInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// list checks `{a, b}`: a struct/header value by position when the
// context expects one, a tuple otherwise.
func (c *checker) list(x *ast.ListExpr, hint ast.Type, sc *scope) ast.Type {
	switch h := hint.(type) {
	case *ast.StructDecl:
		if h.Kind == ast.KindHeaderUnion {
			break
		}
		if len(x.Elems) != len(h.Fields) {
			c.errorf(x, "%s %s has %d fields, the list has %d elements", h.Kind, h.Name, len(h.Fields), len(x.Elems))
			return nil
		}
		ok := true
		for i, e := range x.Elems {
			ft := h.Fields[i].Type.Resolved()
			if c.expr(e, ft, sc) == nil || !c.assignable(e, ft, "field "+h.Fields[i].Name) {
				ok = false
			}
		}
		if !ok {
			return nil
		}
		x.Const = tupleConst(x.Elems)
		return h
	case *ast.TupleType:
		if len(x.Elems) == len(h.Elems) {
			ok := true
			for i, e := range x.Elems {
				if c.expr(e, h.Elems[i], sc) == nil || !c.assignable(e, h.Elems[i], "tuple element") {
					ok = false
				}
			}
			if !ok {
				return nil
			}
			x.Const = tupleConst(x.Elems)
			return h
		}
	}
	tt := &ast.TupleType{}
	for _, e := range x.Elems {
		et := c.expr(e, nil, sc)
		if et == nil {
			return nil
		}
		tt.Elems = append(tt.Elems, et)
	}
	x.Const = tupleConst(x.Elems)
	return tt
}

func tupleConst(es []ast.Expr) *ast.Value {
	v := &ast.Value{Kind: ast.ValTuple}
	for _, e := range es {
		ec := e.Info().Const
		if ec == nil {
			return nil
		}
		v.Elems = append(v.Elems, ec)
	}
	return v
}

func (c *checker) structInit(x *ast.StructInit, hint ast.Type, sc *scope) ast.Type {
	h, ok := hint.(*ast.StructDecl)
	if !ok || h.Kind == ast.KindHeaderUnion {
		for _, f := range x.Fields {
			c.expr(f.Value, nil, sc)
		}
		if hint == nil {
			c.unsupportedf(x, "a struct initializer whose type is not given by its context; cast it, e.g. (my_struct_t){...}")
		} else {
			c.errorf(x, "a struct initializer cannot have type %s", hint)
		}
		return nil
	}
	seen := map[string]bool{}
	good := true
	for _, f := range x.Fields {
		fd := h.FieldByName(f.Name)
		if fd == nil {
			c.errorf(f, "%s: %s %s has no field %s", f.Name, h.Kind, h.Name, f.Name)
			good = false
			continue
		}
		if seen[f.Name] {
			c.errorf(f, "%s: field initialized twice", f.Name)
			good = false
		}
		seen[f.Name] = true
		ft := fd.Type.Resolved()
		if c.expr(f.Value, ft, sc) == nil || !c.assignable(f.Value, ft, "field "+f.Name) {
			good = false
		}
	}
	complete := true
	for _, fd := range h.Fields {
		if !seen[fd.Name] && good {
			complete = false
			if !x.Dots {
				c.errorf(x, "field %s of %s %s is not initialized", fd.Name, h.Kind, h.Name)
				good = false
			}
		}
	}
	if !good {
		return nil
	}
	if !complete {
		return h // `...` leaves fields to their defaults: no constant value
	}
	// The constant value lists the fields in declaration order.
	byName := map[string]ast.Expr{}
	for _, f := range x.Fields {
		byName[f.Name] = f.Value
	}
	ordered := make([]ast.Expr, len(h.Fields))
	for i, fd := range h.Fields {
		ordered[i] = byName[fd.Name]
	}
	x.Const = tupleConst(ordered)
	return h
}

// assignable checks that e (already checked) can be used where a value of
// type to is expected, converting integer literals; what names the
// destination in messages.
func (c *checker) assignable(e ast.Expr, to ast.Type, what string) bool {
	info := e.Info()
	from := info.Type
	if from == nil || to == nil {
		return false
	}
	if _, isVar := to.(*ast.TypeVar); isVar {
		return true
	}
	if ast.SameType(from, to) {
		return true
	}
	if isIntLit(from) {
		if ast.Bits(to, false) != nil {
			c.convertInt(e, to)
			return true
		}
		if isIntLit(to) {
			return true
		}
		if nt, ok := to.(*ast.NewType); ok && ast.Bits(nt.Underlying, false) != nil {
			c.convertInt(e, nt.Underlying)
			info.Type = to
			return true
		}
	}
	if _, dc := from.(*ast.DontCareType); dc {
		c.errorf(e, "_ can only be used as an out argument or keyset")
		return false
	}
	if ub := serEnumBits(from); ub != nil && ast.SameType(ub, to) {
		return true // a serializable enum converts implicitly to its underlying type
	}
	dest := ""
	if what != "" {
		dest = " for " + what
	}
	fb, tb := ast.Bits(from, false), ast.Bits(to, false)
	if fb != nil && tb != nil {
		c.errorAtExpr(e, "%s has type %s but %s is expected%s; widths and signedness must match (add a cast)", exprText(e), from, to, dest)
	} else {
		c.errorAtExpr(e, "%s has type %s but %s is expected%s", exprText(e), from, to, dest)
	}
	return false
}
