// Package parser is a recursive-descent parser for P4_16 producing package
// ast. It accepts the whole language surface used by p4c's v1model test
// programs (including constructs the checker later reports as unsupported,
// such as header unions, varbit, value sets and generic functions), so that
// unsupported features are reported precisely instead of as syntax errors.
//
// Syntax errors are reported as "syntax error, unexpected X, expecting Y";
// after an error the parser skips to the next top-level declaration, so one
// broken declaration yields one diagnostic.
package parser

import (
	"fmt"
	"strings"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
	"github.com/grid-ina/grid/harness/p4c/frontend/diag"
	"github.com/grid-ina/grid/harness/p4c/frontend/lexer"
)

// maxDepth bounds expression and statement nesting so that hostile input
// cannot exhaust the stack.
const maxDepth = 500

// bailout is the panic value used to abandon a broken declaration.
type bailout struct{}

type parser struct {
	toks  []lexer.Token
	i     int
	diags *diag.List
	depth int
	// typeNames holds the names currently known to denote types; P4
	// requires declaration before use, so this resolves the `(T) e` cast
	// versus `(e)` ambiguity the way p4c's lexer does.
	typeNames map[string]int
	control   *ast.ControlDecl
	quiet     bool // speculative parsing: fail without reporting
	// lookahead memoises speculative parses by token position; it is
	// reset whenever the set of type names changes.
	lookahead map[int]bool
}

// Parse parses the preprocessed token stream toks (ending with EOF) into a
// program. Syntax errors are added to diags; the returned program holds
// every declaration that parsed.
func Parse(toks []lexer.Token, diags *diag.List) *ast.Program {
	if len(toks) == 0 || toks[len(toks)-1].Kind != lexer.EOF {
		toks = append(toks, lexer.Token{Kind: lexer.EOF})
	}
	p := &parser{toks: toks, diags: diags, typeNames: map[string]int{}}
	prog := &ast.Program{}
	for p.tok().Kind != lexer.EOF {
		start := p.i
		if d := p.topDecl(); d != nil {
			prog.Decls = append(prog.Decls, d)
		}
		if p.i == start { // guarantee progress after an error
			p.i++
		}
	}
	return prog
}

// ParseExprs parses toks as a comma-separated list of expressions (used
// for annotation bodies); ok is false when they do not form one.
func ParseExprs(toks []lexer.Token) (exprs []ast.Expr, ok bool) {
	toks = append(toks[:len(toks):len(toks)], lexer.Token{Kind: lexer.EOF})
	p := &parser{toks: toks, diags: &diag.List{}, typeNames: map[string]int{}, quiet: true}
	defer func() {
		if r := recover(); r != nil {
			if _, isBail := r.(bailout); !isBail {
				panic(r)
			}
			exprs, ok = nil, false
		}
	}()
	if p.tok().Kind == lexer.EOF {
		return nil, true
	}
	for {
		exprs = append(exprs, p.expr())
		if !p.accept(",") {
			break
		}
	}
	return exprs, p.tok().Kind == lexer.EOF
}

// ---- token helpers ----

func (p *parser) tok() lexer.Token { return p.toks[p.i] }

func (p *parser) peekN(n int) lexer.Token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() lexer.Token {
	t := p.toks[p.i]
	if t.Kind != lexer.EOF {
		p.i++
	}
	return t
}

// is reports whether the current token is the punctuation or keyword s.
func (p *parser) is(s string) bool {
	t := p.tok()
	return (t.Kind == lexer.Punct || t.Kind == lexer.Ident) && t.Text == s
}

func (p *parser) isAt(n int, s string) bool {
	t := p.peekN(n)
	return (t.Kind == lexer.Punct || t.Kind == lexer.Ident) && t.Text == s
}

func (p *parser) accept(s string) bool {
	if p.is(s) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expect(s string) lexer.Token {
	if !p.is(s) {
		p.fail(fmt.Sprintf("%q", s))
	}
	return p.next()
}

func describe(t lexer.Token) string {
	switch t.Kind {
	case lexer.EOF:
		return "end of file"
	case lexer.Ident:
		if keywords[t.Text] {
			return fmt.Sprintf("keyword %q", t.Text)
		}
		return fmt.Sprintf("identifier %q", t.Text)
	case lexer.Int:
		return fmt.Sprintf("integer %s", t.Text)
	case lexer.String:
		return fmt.Sprintf("string %q", t.Text)
	}
	return fmt.Sprintf("%q", t.Text)
}

// fail reports a syntax error at the current token and abandons the
// current declaration.
func (p *parser) fail(expecting string) {
	if !p.quiet {
		msg := "syntax error, unexpected " + describe(p.tok())
		if expecting != "" {
			msg += ", expecting " + expecting
		}
		p.diags.Errorf(p.tok().Pos, "%s", msg)
	}
	panic(bailout{})
}

func (p *parser) errorAt(pos ast.Pos, format string, args ...any) {
	if !p.quiet {
		p.diags.Errorf(pos, format, args...)
	}
	panic(bailout{})
}

var keywords = map[string]bool{
	"abstract": true, "action": true, "actions": true, "apply": true, "bool": true, "bit": true,
	"const": true, "control": true, "default": true, "else": true, "entries": true, "enum": true,
	"error": true, "exit": true, "extern": true, "false": true, "header": true, "header_union": true,
	"if": true, "in": true, "inout": true, "int": true, "key": true, "match_kind": true, "out": true,
	"package": true, "parser": true, "return": true, "select": true, "state": true, "string": true,
	"struct": true, "switch": true, "table": true, "this": true, "transition": true, "true": true,
	"tuple": true, "type": true, "typedef": true, "varbit": true, "value_set": true, "void": true,
	"list": true, "priority": true,
}

// contextual keywords that may still be used as names (p4c allows these
// as identifiers outside their special position).
var softKeywords = map[string]bool{"actions": true, "entries": true, "key": true, "priority": true, "list": true, "apply": true, "state": true, "type": true}

func (p *parser) ident() (string, ast.Pos) {
	t := p.tok()
	if t.Kind != lexer.Ident || keywords[t.Text] && !softKeywords[t.Text] {
		p.fail("identifier")
	}
	p.next()
	return t.Text, t.Pos
}

func (p *parser) isName() bool {
	t := p.tok()
	return t.Kind == lexer.Ident && (!keywords[t.Text] || softKeywords[t.Text])
}

// commaList parses `elem (, elem)*` up to the closing token close (which
// may follow immediately) and consumes close.
func (p *parser) commaList(close string, elem func()) {
	for !p.is(close) {
		elem()
		if !p.accept(",") {
			break
		}
	}
	p.expect(close)
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.errorAt(p.tok().Pos, "program nested too deeply (more than %d levels)", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) declareType(name string) {
	p.typeNames[name]++
	p.lookahead = nil
}

// ---- declarations ----

// topDecl parses one top-level declaration, recovering from syntax errors
// by skipping to the next declaration.
func (p *parser) topDecl() (d ast.Decl) {
	start := p.i
	defer func() {
		if r := recover(); r != nil {
			if _, isBail := r.(bailout); !isBail {
				panic(r)
			}
			d = nil
			p.depth = 0
			p.control = nil
			p.sync(start)
		}
	}()
	for p.accept(";") {
	}
	if p.tok().Kind == lexer.EOF {
		return nil
	}
	return p.decl()
}

// sync skips to just after the end of the broken declaration that began
// at token start: the first `;` at brace depth zero or the `}` closing its
// body.
func (p *parser) sync(start int) {
	p.i = start
	depth := 0
	for p.tok().Kind != lexer.EOF {
		t := p.next()
		if t.Kind != lexer.Punct {
			continue
		}
		switch t.Text {
		case "{":
			depth++
		case "}":
			depth--
			if depth <= 0 {
				p.accept(";")
				return
			}
		case ";":
			if depth <= 0 {
				return
			}
		}
	}
}

func (p *parser) annotations() ast.Annotations {
	var as ast.Annotations
	for p.is("@") {
		at := p.next()
		nameTok := p.tok()
		if nameTok.Kind != lexer.Ident {
			p.fail("annotation name")
		}
		p.next()
		a := &ast.Annotation{Pos: at.Pos, Name: nameTok.Text}
		if (p.is("(") || p.is("[")) && p.tok().Pos.Line == nameTok.Pos.Line {
			open := p.next()
			closeTok := map[string]string{"(": ")", "[": "]"}[open.Text]
			depth := 1
			var body []lexer.Token
			for {
				t := p.tok()
				if t.Kind == lexer.EOF {
					p.errorAt(open.Pos, "unterminated annotation @%s", a.Name)
				}
				p.next()
				if t.Kind == lexer.Punct {
					if t.Text == open.Text {
						depth++
					} else if t.Text == closeTok {
						depth--
						if depth == 0 {
							break
						}
					}
				}
				body = append(body, t)
			}
			a.HasBody = true
			a.Structured = open.Text == "["
			a.Raw = joinRaw(body)
			if args, ok := ParseExprs(body); ok {
				a.Args = args
			}
		}
		as = append(as, a)
	}
	return as
}

func joinRaw(toks []lexer.Token) string {
	parts := make([]string, len(toks))
	for i, t := range toks {
		if t.Kind == lexer.String {
			// As p4c prints it: line breaks stay (strings may span lines).
			parts[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(t.Text) + `"`
		} else {
			parts[i] = t.Text
		}
	}
	return strings.Join(parts, " ")
}

func (p *parser) decl() ast.Decl {
	annos := p.annotations()
	t := p.tok()
	switch {
	case p.is("const"):
		return p.constDecl(annos)
	case p.is("typedef"), p.is("type"):
		return p.typedefDecl(annos)
	case p.is("header"), p.is("struct"), p.is("header_union"):
		return p.structDecl(annos)
	case p.is("enum"):
		return p.enumDecl(annos)
	case p.is("error"):
		if p.isAt(1, "{") {
			p.next()
			return &ast.ErrorDecl{Pos: t.Pos, Members: p.memberList()}
		}
	case p.is("match_kind"):
		p.next()
		return &ast.MatchKindDecl{Pos: t.Pos, Members: p.memberList()}
	case p.is("action"):
		return p.actionDecl(annos)
	case p.is("extern"):
		return p.externDecl(annos)
	case p.is("parser"):
		return p.parserDecl(annos)
	case p.is("control"):
		return p.controlDecl(annos)
	case p.is("package"):
		return p.packageDecl(annos)
	}
	// Instantiation `T(args) name;` or function `T name(...) {...}`.
	typ := p.typeRef()
	if p.is("(") {
		return p.instanceRest(annos, typ)
	}
	name, _ := p.ident()
	tps := p.typeParamsOpt()
	if !p.is("(") {
		p.fail(`"(" (a function declaration)`)
	}
	f := &ast.FunctionDecl{Pos: typ.Position(), Annos: annos, Return: typ, Name: name, TypeParams: tps}
	undo := p.scopeTypeParams(tps)
	f.Params = p.params()
	f.Body = p.block()
	undo()
	return f
}

// scopeTypeParams makes the type parameters known as type names until the
// returned function is called.
func (p *parser) scopeTypeParams(tps []*ast.TypeParam) func() {
	for _, tp := range tps {
		p.typeNames[tp.Name]++
	}
	if len(tps) > 0 {
		p.lookahead = nil
	}
	return func() {
		for _, tp := range tps {
			if p.typeNames[tp.Name]--; p.typeNames[tp.Name] <= 0 {
				delete(p.typeNames, tp.Name)
			}
		}
		if len(tps) > 0 {
			p.lookahead = nil
		}
	}
}

func (p *parser) memberList() []*ast.EnumMember {
	p.expect("{")
	var ms []*ast.EnumMember
	p.commaList("}", func() {
		annos := p.annotations()
		name, pos := p.ident()
		ms = append(ms, &ast.EnumMember{Pos: pos, Annos: annos, Name: name})
	})
	return ms
}

func (p *parser) constDecl(annos ast.Annotations) *ast.ConstDecl {
	kw := p.expect("const")
	typ := p.typeRef()
	name, _ := p.ident()
	p.expect("=")
	v := p.expr()
	p.expect(";")
	return &ast.ConstDecl{Pos: kw.Pos, Annos: annos, Type: typ, Name: name, Value: v}
}

func (p *parser) typedefDecl(annos ast.Annotations) *ast.TypedefDecl {
	kw := p.next()
	d := &ast.TypedefDecl{Pos: kw.Pos, Annos: annos, IsNewType: kw.Text == "type"}
	if p.is("header") || p.is("struct") || p.is("header_union") || p.is("enum") {
		p.errorAt(p.tok().Pos, "unsupported: typedef of an inline %s declaration", p.tok().Text)
	}
	d.Type = p.typeRef()
	d.Name, _ = p.ident()
	p.expect(";")
	p.declareType(d.Name)
	return d
}

func (p *parser) structDecl(annos ast.Annotations) *ast.StructDecl {
	kw := p.next()
	d := &ast.StructDecl{Pos: kw.Pos, Annos: annos}
	switch kw.Text {
	case "header":
		d.Kind = ast.KindHeader
	case "header_union":
		d.Kind = ast.KindHeaderUnion
	}
	d.Name, _ = p.ident()
	p.declareType(d.Name)
	d.TypeParams = p.typeParamsOpt()
	undo := p.scopeTypeParams(d.TypeParams)
	defer undo()
	p.expect("{")
	for !p.is("}") {
		fa := p.annotations()
		ft := p.typeRef()
		fname, fpos := p.ident()
		ft = p.arrayDims(ft)
		p.expect(";")
		d.Fields = append(d.Fields, &ast.Field{Pos: fpos, Annos: fa, Type: ft, Name: fname})
	}
	p.expect("}")
	return d
}

func (p *parser) enumDecl(annos ast.Annotations) *ast.EnumDecl {
	kw := p.expect("enum")
	d := &ast.EnumDecl{Pos: kw.Pos, Annos: annos}
	// `enum Name {` is a plain enum; anything else starts with the
	// underlying type (bit<8>, or a typedef name: `enum EthT Name {`).
	if !(p.isName() && p.isAt(1, "{")) {
		d.Underlying = p.typeRef()
	}
	d.Name, _ = p.ident()
	p.declareType(d.Name)
	p.expect("{")
	p.commaList("}", func() {
		ma := p.annotations()
		name, pos := p.ident()
		m := &ast.EnumMember{Pos: pos, Annos: ma, Name: name, Parent: d}
		if p.accept("=") {
			m.Value = p.expr()
		}
		d.Members = append(d.Members, m)
	})
	return d
}

func (p *parser) typeParamsOpt() []*ast.TypeParam {
	if !p.accept("<") {
		return nil
	}
	var tps []*ast.TypeParam
	p.commaList(">", func() {
		name, pos := p.ident()
		tp := &ast.TypeParam{Pos: pos, Name: name}
		tp.Var = &ast.TypeVar{Name: name, Param: tp}
		tps = append(tps, tp)
	})
	return tps
}

func (p *parser) params() []*ast.Param {
	p.expect("(")
	var ps []*ast.Param
	p.commaList(")", func() {
		annos := p.annotations()
		pos := p.tok().Pos
		par := &ast.Param{Pos: pos, Annos: annos}
		switch {
		case p.accept("in"):
			par.Dir = ast.DirIn
		case p.accept("out"):
			par.Dir = ast.DirOut
		case p.accept("inout"):
			par.Dir = ast.DirInOut
		}
		par.Type = p.typeRef()
		par.Name, _ = p.ident()
		if p.accept("=") {
			par.Default = p.expr()
		}
		ps = append(ps, par)
	})
	return ps
}

func (p *parser) actionDecl(annos ast.Annotations) *ast.ActionDecl {
	kw := p.expect("action")
	name, _ := p.ident()
	a := &ast.ActionDecl{Pos: kw.Pos, Annos: annos, Name: name, Control: p.control}
	a.Params = p.params()
	a.Body = p.block()
	return a
}

func (p *parser) externDecl(annos ast.Annotations) ast.Decl {
	kw := p.expect("extern")
	// extern Name<...> { ... }   versus   extern T name<...>(...);
	if p.isName() && (p.isAt(1, "{") || p.isAt(1, "<") && p.externObjectAhead()) {
		name, _ := p.ident()
		p.declareType(name)
		e := &ast.ExternDecl{Pos: kw.Pos, Annos: annos, Name: name}
		e.TypeParams = p.typeParamsOpt()
		undo := p.scopeTypeParams(e.TypeParams)
		defer undo()
		p.expect("{")
		for !p.is("}") {
			e.Methods = append(e.Methods, p.methodDecl(e))
		}
		p.expect("}")
		return e
	}
	ret := p.typeRef()
	name, _ := p.ident()
	f := &ast.ExternFunctionDecl{Pos: kw.Pos, Annos: annos, Return: ret, Name: name}
	f.TypeParams = p.typeParamsOpt()
	undo := p.scopeTypeParams(f.TypeParams)
	f.Params = p.params()
	undo()
	p.expect(";")
	return f
}

// externObjectAhead reports whether `Name < ... >` is followed by `{`.
func (p *parser) externObjectAhead() bool {
	depth := 0
	for k := 1; ; k++ {
		t := p.peekN(k)
		switch {
		case t.Kind == lexer.EOF:
			return false
		case t.Text == "<" && t.Kind == lexer.Punct:
			depth++
		case t.Text == ">" && t.Kind == lexer.Punct:
			depth--
			if depth == 0 {
				return p.isAt(k+1, "{")
			}
		}
	}
}

func (p *parser) methodDecl(e *ast.ExternDecl) *ast.MethodDecl {
	annos := p.annotations()
	m := &ast.MethodDecl{Pos: p.tok().Pos, Annos: annos, Extern: e}
	if p.accept("abstract") {
		m.IsAbstract = true
	}
	if p.tok().Text == e.Name && p.isAt(1, "(") {
		m.Name, _ = p.ident()
		m.IsConstructor = true
	} else {
		m.Return = p.typeRef()
		m.Name, _ = p.ident()
		m.TypeParams = p.typeParamsOpt()
	}
	undo := p.scopeTypeParams(m.TypeParams)
	m.Params = p.params()
	undo()
	p.expect(";")
	return m
}

// signature is the part parsers and controls share:
// `kw Name<T...>(params)` followed by `;` (a prototype) or by optional
// constructor parameters and the body.
type signature struct {
	pos         ast.Pos
	name        string
	typeParams  []*ast.TypeParam
	params      []*ast.Param
	ctorParams  []*ast.Param
	isPrototype bool
}

// signature parses a parser or control signature; the returned function
// ends the scope of its type parameters.
func (p *parser) signature(kw string) (signature, func()) {
	k := p.expect(kw)
	var sig signature
	sig.pos = k.Pos
	sig.name, _ = p.ident()
	p.declareType(sig.name)
	sig.typeParams = p.typeParamsOpt()
	undo := p.scopeTypeParams(sig.typeParams)
	sig.params = p.params()
	if p.accept(";") {
		sig.isPrototype = true
		return sig, undo
	}
	if p.is("(") {
		sig.ctorParams = p.params()
	}
	return sig, undo
}

func (p *parser) parserDecl(annos ast.Annotations) *ast.ParserDecl {
	sig, undo := p.signature("parser")
	defer undo()
	d := &ast.ParserDecl{Pos: sig.pos, Annos: annos, Name: sig.name, TypeParams: sig.typeParams,
		Params: sig.params, CtorParams: sig.ctorParams, IsPrototype: sig.isPrototype}
	if d.IsPrototype {
		return d
	}
	p.expect("{")
	for !p.is("}") {
		la := p.annotations()
		if p.is("state") {
			d.States = append(d.States, p.stateDecl(la, d))
			continue
		}
		d.Locals = append(d.Locals, p.localDecl(la))
	}
	p.expect("}")
	return d
}

// localDecl parses a parser/control local: const, variable, instance,
// value_set (and, in controls, action/table are handled by the caller).
func (p *parser) localDecl(annos ast.Annotations) ast.Decl {
	if p.is("const") {
		return p.constDecl(annos)
	}
	if p.is("value_set") {
		kw := p.next()
		p.expect("<")
		typ := p.typeRef()
		p.expect(">")
		p.expect("(")
		size := p.expr()
		p.expect(")")
		name, _ := p.ident()
		p.expect(";")
		return &ast.ValueSetDecl{Pos: kw.Pos, Annos: annos, Type: typ, Size: size, Name: name}
	}
	typ := p.typeRef()
	if p.is("(") {
		return p.instanceRest(annos, typ)
	}
	return p.varRest(annos, typ)
}

// arrayDims reads the `[N]` after a declared name (`bit<8> a[16]`, the
// newer array syntax): the same as the type `T[N]`.
func (p *parser) arrayDims(typ ast.TypeExpr) ast.TypeExpr {
	for p.is("[") {
		open := p.next()
		size := p.expr()
		p.expect("]")
		typ = &ast.StackTypeExpr{Pos: open.Pos, Elem: typ, Size: size}
	}
	return typ
}

func (p *parser) varRest(annos ast.Annotations, typ ast.TypeExpr) *ast.VarDecl {
	name, pos := p.ident()
	typ = p.arrayDims(typ)
	v := &ast.VarDecl{Pos: pos, Annos: annos, Type: typ, Name: name}
	if p.accept("=") {
		v.Init = p.expr()
	}
	p.expect(";")
	return v
}

func (p *parser) instanceRest(annos ast.Annotations, typ ast.TypeExpr) *ast.InstanceDecl {
	d := &ast.InstanceDecl{Pos: typ.Position(), Annos: annos, Type: typ}
	d.Args = p.args()
	d.Name, _ = p.ident()
	if p.accept("=") {
		p.expect("{")
		for !p.is("}") {
			d.Initializer = append(d.Initializer, p.decl())
		}
		p.expect("}")
	}
	p.expect(";")
	return d
}

func (p *parser) stateDecl(annos ast.Annotations, par *ast.ParserDecl) *ast.StateDecl {
	kw := p.expect("state")
	name, _ := p.ident()
	s := &ast.StateDecl{Pos: kw.Pos, Annos: annos, Name: name, Parser: par}
	p.expect("{")
	for !p.is("}") && !p.is("transition") {
		s.Stmts = append(s.Stmts, p.stmt())
	}
	if p.is("transition") {
		tk := p.next()
		tr := &ast.Transition{Pos: tk.Pos}
		if p.is("select") {
			tr.Select = p.selectExpr()
		} else {
			name, pos := p.ident()
			tr.Next = &ast.Ident{Pos: pos, Name: name}
			p.expect(";")
		}
		s.Transition = tr
	}
	p.expect("}")
	return s
}

func (p *parser) selectExpr() *ast.SelectExpr {
	kw := p.expect("select")
	s := &ast.SelectExpr{Pos: kw.Pos}
	p.expect("(")
	p.commaList(")", func() { s.Exprs = append(s.Exprs, p.expr()) })
	p.expect("{")
	for !p.is("}") {
		p.annotations()
		c := &ast.SelectCase{Pos: p.tok().Pos, Keys: p.keyset()}
		p.expect(":")
		name, pos := p.ident()
		c.State = &ast.Ident{Pos: pos, Name: name}
		p.expect(";")
		s.Cases = append(s.Cases, c)
	}
	p.expect("}")
	return s
}

// keyset parses a select/entry keyset: a single element or a
// parenthesised tuple of elements (flattened).
func (p *parser) keyset() []ast.Expr {
	if p.is("(") && p.tupleKeysetAhead() {
		p.next()
		var ks []ast.Expr
		p.commaList(")", func() { ks = append(ks, p.keysetElem()) })
		return ks
	}
	return []ast.Expr{p.keysetElem()}
}

// tupleKeysetAhead reports whether the `(` at the current token encloses a
// top-level comma or a lone `_`/`default`, i.e. starts a tuple keyset and
// not a parenthesised expression.
func (p *parser) tupleKeysetAhead() bool {
	depth := 0
	for k := 0; ; k++ {
		t := p.peekN(k)
		if t.Kind == lexer.EOF {
			return false
		}
		if t.Kind != lexer.Punct {
			continue
		}
		switch t.Text {
		case "(", "{", "[":
			depth++
		case ")", "}", "]":
			depth--
			if depth == 0 {
				// `(x) : state` — single parenthesised element: also a tuple of one.
				return p.isAt(k+1, ":")
			}
		case ",":
			if depth == 1 {
				return true
			}
		}
	}
}

func (p *parser) keysetElem() ast.Expr {
	t := p.tok()
	if p.accept("default") {
		return &ast.Default{Pos: t.Pos}
	}
	if p.is("_") {
		p.next()
		return &ast.DontCare{Pos: t.Pos}
	}
	x := p.expr()
	if op := p.tok(); p.accept("&&&") {
		return &ast.Binary{Pos: op.Pos, Op: ast.OpMask, X: x, Y: p.expr()}
	}
	if op := p.tok(); p.accept("..") {
		return &ast.Binary{Pos: op.Pos, Op: ast.OpRange, X: x, Y: p.expr()}
	}
	return x
}

func (p *parser) controlDecl(annos ast.Annotations) *ast.ControlDecl {
	sig, undo := p.signature("control")
	defer undo()
	d := &ast.ControlDecl{Pos: sig.pos, Annos: annos, Name: sig.name, TypeParams: sig.typeParams,
		Params: sig.params, CtorParams: sig.ctorParams, IsPrototype: sig.isPrototype}
	if d.IsPrototype {
		return d
	}
	p.control = d
	defer func() { p.control = nil }()
	p.expect("{")
	for !p.is("}") {
		la := p.annotations()
		switch {
		case p.is("apply") && p.isAt(1, "{"):
			p.next()
			d.Apply = p.block()
		case p.is("action"):
			d.Locals = append(d.Locals, p.actionDecl(la))
		case p.is("table"):
			d.Locals = append(d.Locals, p.tableDecl(la))
		default:
			d.Locals = append(d.Locals, p.localDecl(la))
		}
	}
	p.expect("}")
	if d.Apply == nil {
		p.errorAt(d.Pos, "control %s has no apply block", d.Name)
	}
	return d
}

func (p *parser) packageDecl(annos ast.Annotations) *ast.PackageDecl {
	kw := p.expect("package")
	name, _ := p.ident()
	p.declareType(name)
	d := &ast.PackageDecl{Pos: kw.Pos, Annos: annos, Name: name}
	d.TypeParams = p.typeParamsOpt()
	undo := p.scopeTypeParams(d.TypeParams)
	d.Params = p.params()
	undo()
	p.expect(";")
	return d
}

// ---- tables ----

func (p *parser) tableDecl(annos ast.Annotations) *ast.TableDecl {
	kw := p.expect("table")
	name, _ := p.ident()
	t := &ast.TableDecl{Pos: kw.Pos, Annos: annos, Name: name, Control: p.control}
	if p.accept("(") {
		// `table t() { ... }`: the empty parameter list older P4_16
		// programs (and p4c's test suite) still write.
		p.expect(")")
	}
	p.expect("{")
	for !p.is("}") {
		pa := p.annotations()
		isConst := p.accept("const")
		pt := p.tok()
		pname, _ := p.ident()
		switch pname {
		case "key":
			t.KeyPos = pt.Pos
			p.expect("=")
			p.expect("{")
			t.Keys = []*ast.KeyElement{}
			for !p.is("}") {
				e := p.expr()
				p.expect(":")
				mk, mpos := p.ident()
				ke := &ast.KeyElement{Pos: e.Position(), Expr: e, MatchKind: &ast.Ident{Pos: mpos, Name: mk}}
				ke.Annos = p.annotations()
				p.expect(";")
				t.Keys = append(t.Keys, ke)
			}
			p.expect("}")
		case "actions":
			p.expect("=")
			p.expect("{")
			t.Actions = []*ast.ActionRef{} // present, if empty
			for !p.is("}") {
				aa := p.annotations()
				ref := p.actionRef()
				ref.Annos = aa
				p.expect(";")
				t.Actions = append(t.Actions, ref)
			}
			p.expect("}")
		case "default_action":
			p.expect("=")
			t.DefaultAction = p.actionRef()
			t.DefaultAction.Annos = pa
			t.DefaultActionConst = isConst
			p.expect(";")
		case "entries":
			p.expect("=")
			p.expect("{")
			t.HasEntries = true
			t.EntriesPos = pt.Pos
			t.EntriesConst = isConst
			for !p.is("}") {
				t.Entries = append(t.Entries, p.entry())
			}
			p.expect("}")
		case "size":
			p.expect("=")
			t.Size = p.expr()
			p.expect(";")
		default:
			p.expect("=")
			prop := &ast.TableProperty{Pos: pt.Pos, Annos: pa, Name: pname, IsConst: isConst}
			prop.Value = p.expr()
			p.expect(";")
			t.Custom = append(t.Custom, prop)
		}
	}
	p.expect("}")
	return t
}

func (p *parser) actionRef() *ast.ActionRef {
	pos := p.tok().Pos
	top := p.accept(".")
	name, npos := p.ident()
	ref := &ast.ActionRef{Pos: pos, Name: &ast.Ident{Pos: npos, Name: name, TopLevel: top}}
	if p.is("(") {
		ref.HasParens = true
		ref.Args = p.args()
	}
	return ref
}

func (p *parser) entry() *ast.Entry {
	annos := p.annotations()
	e := &ast.Entry{Pos: p.tok().Pos, Annos: annos}
	e.IsConst = p.accept("const")
	if p.is("priority") && p.isAt(1, "=") {
		p.next()
		p.next()
		e.Priority = p.expr()
		p.expect(":")
	}
	e.Keys = p.keyset()
	p.expect(":")
	e.Action = p.actionRef()
	e.Annos = append(e.Annos, p.annotations()...)
	p.expect(";")
	return e
}
