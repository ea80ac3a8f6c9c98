package parser

import (
	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
	"github.com/grid-ina/grid/harness/p4c/frontend/lexer"
)

// ---- types ----

var baseTypes = map[string]ast.BaseKind{
	"bool": ast.BaseBool, "int": ast.BaseInt, "string": ast.BaseString, "void": ast.BaseVoid,
	"error": ast.BaseError, "match_kind": ast.BaseMatchKind,
}

func (p *parser) typeRef() ast.TypeExpr {
	p.enter()
	defer p.leave()
	t := p.tok()
	var typ ast.TypeExpr
	switch {
	case p.is("bit") || p.is("varbit") || p.is("int") && p.isAt(1, "<"):
		p.next()
		b := &ast.BitTypeExpr{Pos: t.Pos, Signed: t.Text == "int", Varbit: t.Text == "varbit"}
		if p.accept("<") {
			switch w := p.tok(); {
			case w.Kind == lexer.Int:
				p.next()
				b.Width = &ast.IntLit{Pos: w.Pos, Value: w.Int.Value, Width: w.Int.Width, Signed: w.Int.Signed, Text: w.Text}
			case p.is("("):
				p.next()
				b.Width = p.expr()
				p.expect(")")
			default:
				name, pos := p.ident()
				b.Width = &ast.Ident{Pos: pos, Name: name}
			}
			p.expect(">")
		} else if t.Text != "bit" {
			p.fail(`"<"`)
		}
		typ = b
	case t.Kind == lexer.Ident && baseTypes[t.Text] != 0 || t.Text == "bool":
		p.next()
		typ = &ast.BaseTypeExpr{Pos: t.Pos, Kind: baseTypes[t.Text]}
	case p.is("_"):
		p.next()
		typ = &ast.BaseTypeExpr{Pos: t.Pos, Kind: ast.BaseDontCare}
	case p.is("tuple") || p.is("list"):
		p.next()
		tt := &ast.TupleTypeExpr{Pos: t.Pos}
		tt.Elems = p.typeArgs()
		typ = tt
	default:
		top := p.accept(".")
		name, pos := p.ident()
		nt := &ast.NamedType{Pos: pos, Name: name, TopLevel: top}
		if p.is("<") {
			nt.Args = p.typeArgs()
		}
		typ = nt
	}
	for p.is("[") {
		open := p.next()
		size := p.expr()
		p.expect("]")
		typ = &ast.StackTypeExpr{Pos: open.Pos, Elem: typ, Size: size}
	}
	return typ
}

// typeAhead reports whether a type followed by an identifier starts at the
// current token (a declaration `T name`), without consuming anything.
func (p *parser) typeAhead() bool {
	return p.memo(memoType, func() bool {
		p.typeRef()
		return p.isName()
	})
}

// typeArgsAhead reports whether `<` types `>` `(` follows (explicit type
// arguments of a call such as lookahead<bit<8>>()).
func (p *parser) typeArgsAhead() bool {
	return p.memo(memoTypeArgs, func() bool {
		p.typeArgs()
		return p.is("(")
	})
}

func (p *parser) typeArgs() []ast.TypeExpr {
	p.expect("<")
	var ts []ast.TypeExpr
	p.commaList(">", func() { ts = append(ts, p.typeRef()) })
	return ts
}

// ---- statements ----

func (p *parser) block() *ast.BlockStmt {
	open := p.expect("{")
	b := &ast.BlockStmt{Pos: open.Pos}
	for !p.is("}") {
		if p.tok().Kind == lexer.EOF {
			p.fail(`"}"`)
		}
		b.Stmts = append(b.Stmts, p.stmt())
	}
	b.End = p.next().Pos
	return b
}

func (p *parser) stmt() ast.Stmt {
	p.enter()
	defer p.leave()
	annos := p.annotations()
	t := p.tok()
	switch {
	case p.is("{"):
		b := p.block()
		b.Annos = annos
		return b
	case p.is(";"):
		p.next()
		return &ast.EmptyStmt{Pos: t.Pos}
	case p.is("if"):
		p.next()
		p.expect("(")
		cond := p.expr()
		p.expect(")")
		s := &ast.IfStmt{Pos: t.Pos, Annos: annos, Cond: cond, Then: p.stmt()}
		if p.accept("else") {
			s.Else = p.stmt()
		}
		return s
	case p.is("switch"):
		return p.switchStmt(annos)
	case p.is("exit"):
		p.next()
		p.expect(";")
		return &ast.ExitStmt{Pos: t.Pos, Annos: annos}
	case p.is("return"):
		p.next()
		r := &ast.ReturnStmt{Pos: t.Pos, Annos: annos}
		if !p.is(";") {
			r.Value = p.expr()
		}
		p.expect(";")
		return r
	case p.is("const"):
		return &ast.DeclStmt{Pos: t.Pos, Decl: p.constDecl(annos)}
	case p.is("for") && p.isAt(1, "("):
		return p.forStmt(annos)
	case p.is("break") && p.isAt(1, ";"):
		p.next()
		p.next()
		return &ast.BreakStmt{Pos: t.Pos}
	case p.is("continue") && p.isAt(1, ";"):
		p.next()
		p.next()
		return &ast.ContinueStmt{Pos: t.Pos}
	}
	if p.startsDecl() {
		typ := p.typeRef()
		if p.is("(") {
			return &ast.DeclStmt{Pos: t.Pos, Decl: p.instanceRest(annos, typ)}
		}
		return &ast.DeclStmt{Pos: t.Pos, Decl: p.varRest(annos, typ)}
	}
	lhs := p.expr()
	if op := p.tok(); op.Kind == lexer.Punct {
		switch op.Text {
		case "=":
			p.next()
			rhs := p.expr()
			p.expect(";")
			return &ast.AssignStmt{Pos: ast.Start(lhs), Annos: annos, LHS: lhs, RHS: rhs}
		case "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=":
			p.next()
			rhs := p.expr()
			p.expect(";")
			return &ast.AssignStmt{Pos: ast.Start(lhs), Annos: annos, LHS: lhs, RHS: rhs, Compound: true, Op: compoundOps[op.Text]}
		}
	}
	call, ok := lhs.(*ast.Call)
	if !ok {
		p.fail(`"=" or a call`)
	}
	p.expect(";")
	return &ast.CallStmt{Pos: call.Pos, Annos: annos, Call: call}
}

// forStmt parses `for (init; cond; update) body` and
// `for (T x in range) body`.
func (p *parser) forStmt(annos ast.Annotations) ast.Stmt {
	kw := p.expect("for")
	p.expect("(")
	if p.startsDecl() {
		save := p.i
		typ := p.typeRef()
		name, pos := p.ident()
		if p.accept("in") {
			v := &ast.VarDecl{Pos: pos, Type: typ, Name: name}
			rng := p.keysetElem()
			p.expect(")")
			return &ast.ForInStmt{Pos: kw.Pos, Annos: annos, Var: v, Range: rng, Body: p.stmt()}
		}
		p.i = save
	}
	f := &ast.ForStmt{Pos: kw.Pos, Annos: annos}
	f.Init = p.forClauses(";")
	p.expect(";")
	if !p.is(";") {
		f.Cond = p.expr()
	}
	p.expect(";")
	f.Update = p.forClauses(")")
	p.expect(")")
	f.Body = p.stmt()
	return f
}

// forClauses parses the comma-separated simple statements of a for
// header up to (not including) end.
func (p *parser) forClauses(end string) []ast.Stmt {
	var out []ast.Stmt
	for !p.is(end) {
		t := p.tok()
		if p.startsDecl() {
			typ := p.typeRef()
			name, pos := p.ident()
			v := &ast.VarDecl{Pos: pos, Type: typ, Name: name}
			if p.accept("=") {
				v.Init = p.expr()
			}
			out = append(out, &ast.DeclStmt{Pos: t.Pos, Decl: v})
		} else {
			lhs := p.expr()
			switch op := p.tok(); {
			case p.accept("="):
				out = append(out, &ast.AssignStmt{Pos: ast.Start(lhs), LHS: lhs, RHS: p.expr()})
			case op.Kind == lexer.Punct && isCompound(op.Text):
				p.next()
				out = append(out, &ast.AssignStmt{Pos: ast.Start(lhs), LHS: lhs, RHS: p.expr(), Compound: true, Op: compoundOps[op.Text]})
			default:
				call, ok := lhs.(*ast.Call)
				if !ok {
					p.fail(`"=" or a call`)
				}
				out = append(out, &ast.CallStmt{Pos: call.Pos, Call: call})
			}
		}
		if !p.accept(",") {
			break
		}
	}
	return out
}

// startsDecl reports whether the statement at the current token is a
// local declaration (`T x ...;` or `T(args) x;`).
func (p *parser) startsDecl() bool {
	t := p.tok()
	switch t.Text {
	case "bit", "int", "varbit", "bool", "tuple", "string":
		return t.Kind == lexer.Ident
	case "error":
		return !p.isAt(1, ".")
	}
	if !p.isName() && !p.is(".") {
		return false
	}
	if p.typeAhead() {
		return true
	}
	// `register<bit<8>>(4) r;` / `Type(args) x;` inside a block: a
	// known type name followed by `(` or `<`.
	return p.typeNames[t.Text] > 0 && (p.isAt(1, "(") || p.isAt(1, "<"))
}

func (p *parser) switchStmt(annos ast.Annotations) *ast.SwitchStmt {
	kw := p.expect("switch")
	s := &ast.SwitchStmt{Pos: kw.Pos, Annos: annos}
	p.expect("(")
	s.Expr = p.expr()
	p.expect(")")
	p.expect("{")
	for !p.is("}") {
		t := p.tok()
		c := &ast.SwitchCase{Pos: t.Pos}
		if p.accept("default") {
			c.Label = &ast.Default{Pos: t.Pos}
		} else {
			c.Label = p.expr()
		}
		p.expect(":")
		if p.is("{") {
			c.Body = p.block()
		}
		s.Cases = append(s.Cases, c)
	}
	p.expect("}")
	return s
}

var compoundOps = map[string]ast.BinaryOp{
	"+=": ast.OpAdd, "-=": ast.OpSub, "*=": ast.OpMul, "/=": ast.OpDiv, "%=": ast.OpMod,
	"&=": ast.OpBitAnd, "|=": ast.OpBitOr, "^=": ast.OpBitXor,
}

func isCompound(op string) bool {
	_, ok := compoundOps[op]
	return ok
}

// ---- expressions ----

func (p *parser) expr() ast.Expr {
	p.enter()
	defer p.leave()
	cond := p.binary(0)
	if q := p.tok(); p.accept("?") {
		then := p.expr()
		p.expect(":")
		els := p.expr()
		return &ast.Ternary{Pos: q.Pos, Cond: cond, Then: then, Else: els}
	}
	return cond
}

// binary operator levels, loosest first (p4c's grammar: bitwise
// operators bind tighter than comparisons).
var levels = [][]struct {
	text string
	op   ast.BinaryOp
}{
	{{"||", ast.OpOr}},
	{{"&&", ast.OpAnd}},
	{{"==", ast.OpEq}, {"!=", ast.OpNe}},
	{{"<", ast.OpLt}, {">", ast.OpGt}, {"<=", ast.OpLe}, {">=", ast.OpGe}},
	{{"|", ast.OpBitOr}},
	{{"^", ast.OpBitXor}},
	{{"&", ast.OpBitAnd}},
	{{"<<", ast.OpShl}, {">>", ast.OpShr}},
	{{"++", ast.OpConcat}, {"+", ast.OpAdd}, {"-", ast.OpSub}, {"|+|", ast.OpAddSat}, {"|-|", ast.OpSubSat}},
	{{"*", ast.OpMul}, {"/", ast.OpDiv}, {"%", ast.OpMod}},
}

const shiftLevel = 7
const compareLevel = 3

// shrAhead reports whether the current token starts `>>` (two adjacent '>').
func (p *parser) shrAhead() bool {
	return p.is(">") && p.isAt(1, ">") && !p.peekN(1).Space && p.peekN(1).Pos.Line == p.tok().Pos.Line
}

// plusColonAhead reports whether the next tokens are `+:` (adjacent).
func (p *parser) plusColonAhead() bool {
	if !p.is("+") || !p.isAt(1, ":") {
		return false
	}
	nt := p.peekN(1)
	return !nt.Space && !nt.BOL
}

func (p *parser) binary(level int) ast.Expr {
	if level == len(levels) {
		return p.unary()
	}
	x := p.binary(level + 1)
	for {
		t := p.tok()
		if t.Kind != lexer.Punct {
			return x
		}
		var op ast.BinaryOp
		found := false
		switch {
		case t.Text == "+" && p.plusColonAhead():
			return x // the `+:` of a slice [lo +: width]
		case level == shiftLevel && p.shrAhead():
			p.next()
			op, found = ast.OpShr, true
		case level == compareLevel && t.Text == ">" && p.shrAhead():
			return x
		default:
			for _, o := range levels[level] {
				if t.Text == o.text {
					op, found = o.op, true
				}
			}
		}
		if !found {
			return x
		}
		p.next()
		y := p.binary(level + 1)
		x = &ast.Binary{Pos: t.Pos, Op: op, X: x, Y: y}
	}
}

func (p *parser) unary() ast.Expr {
	p.enter()
	defer p.leave()
	t := p.tok()
	if t.Kind == lexer.Punct {
		var op ast.UnaryOp
		ok := true
		switch t.Text {
		case "-":
			op = ast.OpNeg
		case "+":
			op = ast.OpPlus
		case "~":
			op = ast.OpBitNot
		case "!":
			op = ast.OpNot
		case "(":
			if p.castAhead() {
				p.next()
				typ := p.typeRef()
				p.expect(")")
				return &ast.Cast{Pos: t.Pos, Type: typ, X: p.unary()}
			}
			ok = false
		default:
			ok = false
		}
		if ok {
			p.next()
			return &ast.Unary{Pos: t.Pos, Op: op, X: p.unary()}
		}
	}
	return p.postfix(p.primary())
}

// castAhead reports whether `(` starts a cast: a built-in type keyword, or
// a name known to be a type, followed (after the type) by `)`.
func (p *parser) castAhead() bool {
	n := p.peekN(1)
	if n.Kind != lexer.Ident && !(n.Kind == lexer.Punct && n.Text == ".") {
		return false
	}
	switch n.Text {
	case "bit", "int", "varbit", "bool", "tuple", "string", "error":
	default:
		name := n.Text
		if n.Text == "." {
			name = p.peekN(2).Text
		}
		if p.typeNames[name] == 0 {
			return false
		}
	}
	return p.memo(memoCast, func() bool {
		p.next()
		p.typeRef()
		return p.is(")")
	})
}

// speculate runs f quietly and restores the parser position afterwards;
// a syntax error (bailout) inside f makes the result false, any other
// panic is a bug and propagates.
func (p *parser) speculate(f func() bool) (ok bool) {
	save, quiet, depth := p.i, p.quiet, p.depth
	defer func() {
		p.i, p.quiet, p.depth = save, quiet, depth
		if r := recover(); r != nil {
			if _, isBail := r.(bailout); !isBail {
				panic(r)
			}
			ok = false
		}
	}()
	p.quiet = true
	return f()
}

// Speculative look-aheads, memoised per token position: nested
// speculation (a cast inside a width inside a cast ...) would otherwise
// take exponential time.
const (
	memoType = iota
	memoTypeArgs
	memoCast
)

// memo runs the speculative parse f without reporting errors and without
// consuming tokens; a syntax error in it means false. Results are cached
// by kind and token position.
func (p *parser) memo(kind int, f func() bool) bool {
	key := p.i*3 + kind
	if v, ok := p.lookahead[key]; ok {
		return v
	}
	v := p.speculate(f)
	if p.lookahead == nil {
		p.lookahead = map[int]bool{}
	}
	p.lookahead[key] = v
	return v
}

func (p *parser) primary() ast.Expr {
	t := p.tok()
	switch t.Kind {
	case lexer.Int:
		p.next()
		return &ast.IntLit{Pos: t.Pos, Value: t.Int.Value, Width: t.Int.Width, Signed: t.Int.Signed, Text: t.Text}
	case lexer.String:
		p.next()
		return &ast.StringLit{Pos: t.Pos, Value: t.Text}
	case lexer.Ident:
		switch t.Text {
		case "true", "false":
			p.next()
			return &ast.BoolLit{Pos: t.Pos, Value: t.Text == "true"}
		case "error", "this":
			p.next()
			return &ast.Ident{Pos: t.Pos, Name: t.Text}
		case "_":
			p.next()
			return &ast.DontCare{Pos: t.Pos}
		case "default":
			p.next()
			return &ast.Default{Pos: t.Pos}
		case "bit", "int", "varbit", "bool", "tuple":
			return &ast.TypeArgExpr{Pos: t.Pos, Type: p.typeRef()}
		}
		name, pos := p.ident()
		return &ast.Ident{Pos: pos, Name: name}
	}
	switch t.Text {
	case ".":
		p.next()
		name, pos := p.ident()
		return &ast.Ident{Pos: pos, Name: name, TopLevel: true}
	case "(":
		p.next()
		x := p.expr()
		p.expect(")")
		return x
	case "{":
		return p.braceExpr()
	}
	p.fail("an expression")
	return nil
}

// braceExpr parses `{a, b}` (list) or `{f = a, g = b}` (struct initializer).
func (p *parser) braceExpr() ast.Expr {
	open := p.expect("{")
	if p.is("#") && p.isAt(1, "}") {
		p.next()
		p.next()
		return &ast.InvalidHeader{Pos: open.Pos}
	}
	if p.is("...") && p.isAt(1, "}") {
		p.next()
		p.next()
		return &ast.StructInit{Pos: open.Pos, Dots: true}
	}
	if p.isName() && p.isAt(1, "=") {
		si := &ast.StructInit{Pos: open.Pos}
		p.commaList("}", func() {
			if p.is("...") && p.isAt(1, "}") {
				p.next()
				si.Dots = true
				return
			}
			name, pos := p.ident()
			p.expect("=")
			si.Fields = append(si.Fields, &ast.NamedExpr{Pos: pos, Name: name, Value: p.expr()})
		})
		return si
	}
	l := &ast.ListExpr{Pos: open.Pos}
	p.commaList("}", func() { l.Elems = append(l.Elems, p.expr()) })
	return l
}

func (p *parser) postfix(x ast.Expr) ast.Expr {
	for {
		t := p.tok()
		switch {
		case p.is("."):
			p.next()
			nt := p.tok()
			if nt.Kind != lexer.Ident {
				p.fail("a member name")
			}
			p.next()
			x = &ast.Member{Pos: nt.Pos, X: x, Name: nt.Text}
		case p.is("["):
			p.next()
			idx := p.expr()
			if p.plusColonAhead() {
				// [lo +: width]: width bits from bit lo up.
				p.next()
				p.next()
				w := p.expr()
				p.expect("]")
				x = &ast.Slice{Pos: t.Pos, X: x, Lo: idx, Width: w}
			} else if p.accept(":") {
				lo := p.expr()
				p.expect("]")
				x = &ast.Slice{Pos: t.Pos, X: x, Hi: idx, Lo: lo}
			} else {
				p.expect("]")
				x = &ast.Index{Pos: t.Pos, X: x, Index: idx}
			}
		case p.is("("):
			x = &ast.Call{Pos: ast.Start(x), Fun: x, Args: p.args()}
		case p.is("<") && isCallee(x) && p.typeArgsAhead():
			targs := p.typeArgs()
			x = &ast.Call{Pos: ast.Start(x), Fun: x, TypeArgs: targs, Args: p.args()}
		default:
			return x
		}
	}
}

func isCallee(x ast.Expr) bool {
	switch x.(type) {
	case *ast.Ident, *ast.Member:
		return true
	}
	return false
}

func (p *parser) args() []*ast.Arg {
	p.expect("(")
	var as []*ast.Arg
	p.commaList(")", func() {
		t := p.tok()
		a := &ast.Arg{Pos: t.Pos}
		if p.isName() && p.isAt(1, "=") && !p.isAt(2, "=") {
			a.Name, _ = p.ident()
			p.next()
		}
		if p.is("_") && (p.isAt(1, ",") || p.isAt(1, ")")) {
			a.Value = &ast.DontCare{Pos: p.next().Pos}
		} else {
			a.Value = p.expr()
		}
		as = append(as, a)
	})
	return as
}
