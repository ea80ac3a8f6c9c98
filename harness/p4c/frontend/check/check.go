// Package check resolves names, checks types and folds constants of a
// parsed P4 program, filling the semantic slots of package ast.
//
// It follows P4_16's typing rules: bit<W>/int<W> arithmetic requires equal
// widths and signedness; integer literals without a width take the width
// their context requires (and must fit, else they are wrapped with a
// warning); explicit casts follow the spec's list of legal casts; out and
// inout arguments must be writable l-values; `in` parameters, action data
// and constants are read-only.
//
// It also rejects what P4 forbids and back ends could not lower safely:
// recursion among functions, actions, parsers and controls; applying
// tables outside a control's apply block; extracting non-headers; more
// than one lpm key per table. Compile-time queries are folded
// (h.minSizeInBits() and relatives, static_assert, stack size), and
// compound assignments are expanded (x += e to x = x + e, evaluating a
// call in the target once via a temporary).
//
// Constructs outside the embedded compiler's subset are reported as
// "unsupported: ...": header unions, varbit fields and for loops unless
// Features enables them, parser value sets, generic functions, parsers,
// controls and structs, abstract extern methods and initializer blocks,
// `this`, the invalid-header expression {#}, integers of unknown width
// that are not compile-time constants.
package check

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
	"github.com/grid-ina/grid/harness/p4c/frontend/diag"
)

// scope is a lexical scope. Names may be overloaded (extern functions and
// functions with different numbers of parameters), hence the slices.
type scope struct {
	parent *scope
	names  map[string][]ast.Decl
}

func newScope(parent *scope) *scope { return &scope{parent: parent, names: map[string][]ast.Decl{}} }

func (s *scope) lookup(name string) []ast.Decl {
	for sc := s; sc != nil; sc = sc.parent {
		if ds, ok := sc.names[name]; ok {
			return ds
		}
	}
	return nil
}

func (s *scope) top() *scope {
	for s.parent != nil {
		s = s.parent
	}
	return s
}

// context says what kind of code is being checked (which statements and
// calls are allowed).
type context int

const (
	ctxTop context = iota
	ctxParser
	ctxControl // control apply block
	ctxAction
	ctxFunction
)

type checker struct {
	features Features
	// specialized are the generic structs and headers made concrete, by name.
	specialized map[string]*ast.StructDecl
	prog        *ast.Program
	diags       *diag.List
	global      *scope

	errorDecl    *ast.ErrorDecl // synthetic declaration holding every error member
	errorMembers map[string]*ast.EnumMember
	typedefs     map[*ast.TypedefDecl]ast.Type
	resolving    map[ast.Decl]bool
	checkedDecls map[ast.Decl]bool

	// What kind of code is being checked, and the function being checked
	// (for return statements).
	ctx context
	fn  *ast.FunctionDecl
	// usedNames holds the names of temporaries the checker introduced.
	usedNames map[string]bool
	// loops is the number of for statements enclosing the code being checked.
	loops int
	// owner is the action, function, parser or control whose body is being
	// checked; uses records which of those each one calls or instantiates,
	// to reject recursion (which P4 forbids and back ends could not inline).
	owner    ast.Decl
	uses     map[ast.Decl][]ast.Decl
	useOrder []ast.Decl
}

// use records that the current owner calls or instantiates d.
func (c *checker) use(d ast.Decl) {
	if c.owner == nil {
		return
	}
	if c.uses == nil {
		c.uses = map[ast.Decl][]ast.Decl{}
	}
	if _, seen := c.uses[c.owner]; !seen {
		c.useOrder = append(c.useOrder, c.owner)
	}
	c.uses[c.owner] = append(c.uses[c.owner], d)
}

// enter makes d the owner until the returned function is called.
func (c *checker) enter(d ast.Decl) func() {
	saved := c.owner
	c.owner = d
	return func() { c.owner = saved }
}

// reportRecursion reports each cycle of calls and instantiations once.
func (c *checker) reportRecursion() {
	const (
		unvisited = iota
		active
		done
	)
	state := map[ast.Decl]int{}
	var stack []ast.Decl
	var visit func(d ast.Decl)
	visit = func(d ast.Decl) {
		state[d] = active
		stack = append(stack, d)
		for _, u := range c.uses[d] {
			switch state[u] {
			case active:
				i := len(stack) - 1
				for stack[i] != u {
					i--
				}
				names := make([]string, 0, len(stack)-i+1)
				for _, s := range stack[i:] {
					names = append(names, s.DeclName())
				}
				names = append(names, u.DeclName())
				c.errorf(u, "recursion is not allowed in P4: %s", strings.Join(names, " -> "))
			case unvisited:
				visit(u)
			}
		}
		stack = stack[:len(stack)-1]
		state[d] = done
	}
	for _, d := range c.useOrder {
		if state[d] == unvisited {
			visit(d)
		}
	}
}

// Features selects language features outside the default subset that a
// back end is able to lower. Disabled features are reported as
// "unsupported: ..." at their declaration.
type Features struct {
	// HeaderUnions accepts header_union declarations (and stacks of them).
	HeaderUnions bool
	// Varbit accepts varbit<W> fields, two-argument extract and varbit
	// equality.
	Varbit bool
	// Loops accepts for statements (with break and continue).
	Loops bool
}

// Check checks prog in place. Problems are added to diags.
func Check(prog *ast.Program, diags *diag.List, features Features) {
	c := &checker{
		features:     features,
		prog:         prog,
		diags:        diags,
		global:       newScope(nil),
		errorMembers: map[string]*ast.EnumMember{},
		typedefs:     map[*ast.TypedefDecl]ast.Type{},
		resolving:    map[ast.Decl]bool{},
		checkedDecls: map[ast.Decl]bool{},
		errorDecl:    &ast.ErrorDecl{},
		specialized:  map[string]*ast.StructDecl{},
	}
	defer func() {
		// A checker bug must surface as a diagnostic, never as a crash of
		// the tool using the compiler.
		if r := recover(); r != nil {
			diags.Errorf(prog.Position(), "internal compiler error: %v", r)
		}
	}()
	c.declareTop()
	for _, d := range prog.Decls {
		c.topDecl(d)
	}
	c.reportRecursion()
	c.controlPlaneNameConflicts()
	c.v1modelVersion()
	c.fieldListAnnotations()
	c.translationAnnotations()
	if prog.Main == nil && !diags.HasErrors() {
		at := prog.Position()
		if n := len(prog.Decls); n > 0 {
			at = prog.Decls[n-1].Position() // the end of the main file
		}
		diags.Errorf(at, "program has no package instance named main (e.g. V1Switch(...) main;)")
	}
}

// fieldListAnnotations evaluates the arguments of v1model's @field_list
// on struct fields: they may name constants (@field_list(FL_CLONE)), which
// the lowering needs as numbers.
func (c *checker) fieldListAnnotations() {
	for _, d := range c.prog.Decls {
		sd, ok := d.(*ast.StructDecl)
		if !ok {
			continue
		}
		for _, f := range sd.Fields {
			for _, an := range f.Annos {
				if an.Name != "field_list" {
					continue
				}
				for _, arg := range an.Args {
					if c.expr(arg, nil, c.global) != nil && arg.Info().Const == nil {
						c.errorAtExpr(arg, "@field_list: %s is not a compile-time constant", exprText(arg))
					}
				}
			}
		}
	}
}

var bitType = regexp.MustCompile(`^bit\s*<\s*[0-9]+\s*>$`)

// translationAnnotations checks @p4runtime_translation("uri", T) on types:
// the controller-side type T is a bit width, string or enum (p4c refuses
// others, e.g. bool).
func (c *checker) translationAnnotations() {
	for _, d := range c.prog.Decls {
		var annos ast.Annotations
		switch x := d.(type) {
		case *ast.TypedefDecl:
			annos = x.Annos
		case *ast.EnumDecl:
			annos = x.Annos
		default:
			continue
		}
		an := annos.Get("p4runtime_translation")
		if an == nil {
			continue
		}
		_, second, ok := strings.Cut(an.Raw, ",")
		second = strings.TrimSpace(second)
		n, err := strconv.Atoi(second)
		if !ok || (err != nil || n <= 0) && second != "string" && second != "enum" && !bitType.MatchString(second) {
			c.errorf(an, "@p4runtime_translation(%s): the second argument must be a positive bit width, bit<W>, string or enum, not %q", an.Raw, second)
		}
	}
}

// v1model versions p4c knows (V1MODEL_VERSION before including v1model.p4).
const (
	firstV1modelVersion  = 20180101
	latestV1modelVersion = 20200408
)

// v1modelVersion checks v1model.p4's __v1model_version as p4c does.
func (c *checker) v1modelVersion() {
	for _, d := range c.prog.Decls {
		cd, ok := d.(*ast.ConstDecl)
		if !ok || cd.Name != "__v1model_version" {
			continue
		}
		if cv := cd.Value.Info().Const; cv != nil && cv.Int != nil {
			if v := cv.Int.Int64(); v < firstV1modelVersion || v > latestV1modelVersion {
				c.errorAtExpr(cd.Value, "%d: unknown v1model version; initial supported version is %d, latest is %d", v, firstV1modelVersion, latestV1modelVersion)
			}
		}
	}
}

// controlPlaneNameConflicts reports two different actions (or tables)
// with one control-plane name, as p4c does: P4Runtime would merge them
// into one id. A name is absolute with a leading dot (@name(".x")), else
// relative to the enclosing control.
func (c *checker) controlPlaneNameConflicts() {
	type named struct {
		kind, name string
	}
	seen := map[named]ast.Decl{}
	add := func(kind string, d ast.Decl, name string, annos ast.Annotations, ctl *ast.ControlDecl) {
		if n, ok := annos.StringArg("name"); ok {
			name = n
		}
		if abs, ok := strings.CutPrefix(name, "."); ok {
			name = abs
		} else if ctl != nil {
			name = ctl.Name + "." + name
		}
		k := named{kind, name}
		if prev, ok := seen[k]; ok && prev != d {
			c.errorf(d, "%s: conflicting control-plane name %s (also the name of the %s at line %d)", d.DeclName(), name, kind, prev.Position().Line)
			return
		}
		seen[k] = d
	}
	for _, d := range c.prog.Decls {
		switch x := d.(type) {
		case *ast.ActionDecl:
			add("action", x, x.Name, x.Annos, nil)
		case *ast.ControlDecl:
			for _, l := range x.Locals {
				switch y := l.(type) {
				case *ast.ActionDecl:
					add("action", y, y.Name, y.Annos, x)
				case *ast.TableDecl:
					add("table", y, y.Name, y.Annos, x)
				}
			}
		}
	}
}

func (c *checker) errorf(n ast.Node, format string, args ...any) {
	c.diags.Errorf(n.Position(), format, args...)
}

// errorAtExpr reports an error about a whole expression at its first token.
func (c *checker) errorAtExpr(e ast.Expr, format string, args ...any) {
	c.diags.Errorf(ast.Start(e), format, args...)
}

func (c *checker) unsupportedf(n ast.Node, format string, args ...any) {
	c.diags.Unsupportedf(n.Position(), format, args...)
}

func (c *checker) warnf(n ast.Node, format string, args ...any) {
	c.diags.Warnf(n.Position(), format, args...)
}

// overloadable reports whether a and b may share a name (functions and
// extern functions with different numbers of parameters).
func overloadable(a, b ast.Decl) bool {
	pa, oka := paramsOf(a)
	pb, okb := paramsOf(b)
	if !oka || !okb {
		return false
	}
	return len(pa) != len(pb)
}

func paramsOf(d ast.Decl) ([]*ast.Param, bool) {
	switch x := d.(type) {
	case *ast.ExternFunctionDecl:
		return x.Params, true
	case *ast.FunctionDecl:
		return x.Params, true
	case *ast.MethodDecl:
		return x.Params, true
	}
	return nil, false
}

// declare adds d to s, reporting a duplicate declaration.
func (c *checker) declare(s *scope, d ast.Decl) {
	name := d.DeclName()
	for _, prev := range s.names[name] {
		if !overloadable(prev, d) {
			c.errorf(d, "%s: duplicate declaration (previous declaration at %s)", name, prev.Position())
			return
		}
	}
	s.names[name] = append(s.names[name], d)
}

// declareTop enters every top-level name, so declarations may refer to
// each other regardless of order, and merges the error and match_kind
// members.
func (c *checker) declareTop() {
	for _, d := range c.prog.Decls {
		switch x := d.(type) {
		case *ast.ErrorDecl:
			for _, m := range x.Members {
				m.Parent = c.errorDecl
				if prev, dup := c.errorMembers[m.Name]; dup {
					c.errorf(m, "error.%s: duplicate declaration (previous declaration at %s)", m.Name, prev.Position())
					continue
				}
				c.errorMembers[m.Name] = m
				c.errorDecl.Members = append(c.errorDecl.Members, m)
				c.prog.Errors = append(c.prog.Errors, m)
			}
		case *ast.MatchKindDecl:
			for _, m := range x.Members {
				m.Parent = x
				c.declare(c.global, m)
				c.prog.MatchKinds = append(c.prog.MatchKinds, m)
			}
		default:
			c.declare(c.global, d)
		}
	}
}

func (c *checker) topDecl(d ast.Decl) {
	switch x := d.(type) {
	case *ast.ConstDecl:
		c.constDecl(x, c.global)
	case *ast.TypedefDecl:
		c.typedefType(x)
	case *ast.StructDecl:
		c.structDecl(x)
	case *ast.EnumDecl:
		c.enumDecl(x)
	case *ast.ErrorDecl, *ast.MatchKindDecl:
	case *ast.ActionDecl:
		c.actionDecl(x, c.global)
	case *ast.FunctionDecl:
		c.functionDecl(x)
	case *ast.ExternFunctionDecl:
		sc := c.typeParamScope(c.global, x.TypeParams)
		c.resolveType(x.Return, sc)
		c.paramTypes(x.Params, sc)
	case *ast.ExternDecl:
		c.externDecl(x)
	case *ast.ParserDecl:
		c.parserDecl(x)
	case *ast.ControlDecl:
		c.controlDecl(x)
	case *ast.PackageDecl:
		sc := c.typeParamScope(c.global, x.TypeParams)
		c.paramTypes(x.Params, sc)
	case *ast.InstanceDecl:
		c.instanceDecl(x, c.global)
		if x.Name == "main" {
			c.prog.Main = x
		}
	default:
		c.unsupportedf(d, "top-level declaration %T", d)
	}
}

// typeParamScope returns a scope declaring the given type parameters.
func (c *checker) typeParamScope(parent *scope, tps []*ast.TypeParam) *scope {
	if len(tps) == 0 {
		return parent
	}
	sc := newScope(parent)
	for _, tp := range tps {
		if tp.Var == nil {
			tp.Var = &ast.TypeVar{Name: tp.Name, Param: tp}
		}
		c.declare(sc, tp)
	}
	return sc
}

func (c *checker) paramTypes(ps []*ast.Param, sc *scope) {
	for _, p := range ps {
		c.resolveType(p.Type, sc)
		if p.Default != nil && p.Type.Resolved() != nil {
			if c.expr(p.Default, p.Type.Resolved(), sc) != nil && c.assignable(p.Default, p.Type.Resolved(), "default of parameter "+p.Name) && p.Default.Info().Const == nil {
				c.errorAtExpr(p.Default, "the default value of parameter %s must be a compile-time constant", p.Name)
			}
		}
	}
}

// declareParams enters parameters into a new scope below parent.
func (c *checker) declareParams(parent *scope, ps ...[]*ast.Param) *scope {
	sc := newScope(parent)
	for _, list := range ps {
		for _, p := range list {
			c.declare(sc, p)
		}
	}
	return sc
}

func (c *checker) constDecl(d *ast.ConstDecl, sc *scope) {
	if c.checkedDecls[d] {
		return
	}
	c.checkedDecls[d] = true
	t := c.resolveType(d.Type, sc)
	if t == nil {
		return
	}
	if c.expr(d.Value, t, sc) == nil || !c.assignable(d.Value, t, "constant "+d.Name) {
		return
	}
	if d.Value.Info().Const == nil {
		c.errorf(d.Value, "%s: initializer of a constant must be a compile-time constant", d.Name)
	}
}

func (c *checker) structDecl(d *ast.StructDecl) {
	if c.checkedDecls[d] {
		return
	}
	c.checkedDecls[d] = true
	if len(d.TypeParams) > 0 {
		return // checked as each specialization is made (specialize)
	}
	if d.Kind == ast.KindHeaderUnion && !c.features.HeaderUnions {
		c.unsupportedf(d, "header_union %s (header unions are outside the compiler's subset)", d.Name)
	}
	seen := map[string]*ast.Field{}
	for i, f := range d.Fields {
		if prev := seen[f.Name]; prev != nil {
			c.errorf(f, "%s: duplicate field in %s %s (previous at %s)", f.Name, d.Kind, d.Name, prev.Position())
		}
		seen[f.Name] = f
		t := c.resolveType(f.Type, c.global)
		if t == nil {
			continue
		}
		if c.containsStruct(t, d, map[*ast.StructDecl]bool{}) {
			c.errorf(f, "%s.%s: recursive type: %s %s contains itself", d.Name, f.Name, d.Kind, d.Name)
			// Drop the field so that later passes never walk the cycle.
			d.Fields = append(append([]*ast.Field(nil), d.Fields[:i]...), d.Fields[i+1:]...)
			return
		}
		switch d.Kind {
		case ast.KindHeader:
			switch x := t.(type) {
			case *ast.BitsType, *ast.BoolType:
			case *ast.StructDecl:
				if x.Kind != ast.KindStruct || !fixedWidthStruct(x) {
					c.errorf(f, "%s.%s: a struct inside a header may only contain bit<W>, int<W>, bool and serializable enum fields", d.Name, f.Name)
				}
			case *ast.VarbitType:
				if !c.features.Varbit {
					c.unsupportedf(f, "varbit field %s.%s (varbit is outside the compiler's subset)", d.Name, f.Name)
				}
			case *ast.EnumDecl:
				if x.Underlying == nil {
					c.errorf(f, "%s.%s: header fields must be bit<W>, int<W>, bool, varbit or a serializable enum, not %s", d.Name, f.Name, t)
				}
			case *ast.NewType:
				if ast.Bits(x, true) == nil {
					c.errorf(f, "%s.%s: header fields must be bit<W>, int<W>, bool, varbit or a serializable enum, not %s", d.Name, f.Name, t)
				}
			default:
				c.errorf(f, "%s.%s: header fields must be bit<W>, int<W>, bool, varbit or a serializable enum, not %s", d.Name, f.Name, t)
			}
		case ast.KindHeaderUnion:
			if !ast.IsHeader(t) {
				c.errorf(f, "%s.%s: header_union fields must be headers, not %s", d.Name, f.Name, t)
			}
		default:
			switch t.(type) {
			case *ast.VarbitType:
				if !c.features.Varbit {
					c.unsupportedf(f, "varbit field %s.%s (varbit is outside the compiler's subset)", d.Name, f.Name)
				}
			case *ast.ObjectType, *ast.TableType, *ast.VoidType, *ast.StringType, *ast.IntLitType:
				c.errorf(f, "%s.%s: a struct field cannot have type %s", d.Name, f.Name, t)
			}
		}
	}
}

// containsStruct reports whether a value of type t contains a value of
// type target (through struct, header, union fields and stacks).
func (c *checker) containsStruct(t ast.Type, target *ast.StructDecl, seen map[*ast.StructDecl]bool) bool {
	switch x := t.(type) {
	case *ast.StackType:
		return c.containsStruct(x.Elem, target, seen)
	case *ast.StructDecl:
		if x == target {
			return true
		}
		if seen[x] {
			return false
		}
		seen[x] = true
		c.structDecl(x) // resolves x's field types (a no-op while x is being checked)
		for _, f := range x.Fields {
			if ft := f.Type.Resolved(); ft != nil && c.containsStruct(ft, target, seen) {
				return true
			}
		}
	}
	return false
}

// fixedWidthStruct reports whether every field of s (recursively) is a
// fixed-width scalar, so that s may be nested in a header.
func fixedWidthStruct(s *ast.StructDecl) bool {
	for _, f := range s.Fields {
		switch x := f.Type.Resolved().(type) {
		case *ast.BitsType, *ast.BoolType:
		case *ast.EnumDecl:
			if x.Underlying == nil {
				return false
			}
		case *ast.StructDecl:
			if x.Kind != ast.KindStruct || !fixedWidthStruct(x) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func (c *checker) enumDecl(d *ast.EnumDecl) {
	if c.checkedDecls[d] {
		return
	}
	c.checkedDecls[d] = true
	seen := map[string]bool{}
	var under *ast.BitsType
	if d.Underlying != nil {
		t := c.resolveType(d.Underlying, c.global)
		if under = ast.Bits(t, false); under == nil && t != nil {
			c.errorf(d.Underlying, "enum %s: the underlying type must be bit<W> or int<W>, not %s", d.Name, t)
		}
	}
	for _, m := range d.Members {
		m.Parent = d
		if seen[m.Name] {
			c.errorf(m, "%s.%s: duplicate enum member", d.Name, m.Name)
		}
		seen[m.Name] = true
		switch {
		case d.Underlying == nil && m.Value != nil:
			c.errorf(m, "%s.%s: members of an enum without underlying type cannot have values", d.Name, m.Name)
		case d.Underlying != nil && m.Value == nil:
			c.errorf(m, "%s.%s: members of a serializable enum need a value", d.Name, m.Name)
		case m.Value != nil && under != nil:
			c.expr(m.Value, under, c.global)
			if m.Value.Info().Type != nil && m.Value.Info().Const == nil {
				c.errorf(m.Value, "%s.%s: the value must be a compile-time constant", d.Name, m.Name)
			}
		}
	}
}

func (c *checker) actionDecl(d *ast.ActionDecl, parent *scope) {
	c.paramTypes(d.Params, parent)
	seenData := false
	for _, p := range d.Params {
		if p.Dir == ast.DirNone {
			seenData = true
		} else if seenData {
			c.errorf(p, "action %s: parameter %s with a direction follows a directionless (action data) parameter", d.Name, p.Name)
		}
	}
	sc := c.declareParams(parent, d.Params)
	defer c.enter(d)()
	saved := c.ctx
	c.ctx = ctxAction
	c.block(d.Body, sc)
	c.ctx = saved
}

func (c *checker) functionDecl(d *ast.FunctionDecl) {
	if len(d.TypeParams) > 0 {
		c.unsupportedf(d, "generic function %s", d.Name)
		return
	}
	c.resolveType(d.Return, c.global)
	c.paramTypes(d.Params, c.global)
	sc := c.declareParams(c.global, d.Params)
	defer c.enter(d)()
	saved, savedFn := c.ctx, c.fn
	c.ctx, c.fn = ctxFunction, d
	c.block(d.Body, sc)
	if _, void := d.Return.Resolved().(*ast.VoidType); !void && d.Return.Resolved() != nil && !alwaysReturns(d.Body) {
		c.errorf(d.Body.End, "function %s: missing return statement at the end of a function returning %s", d.Name, d.Return.Resolved())
	}
	c.ctx, c.fn = saved, savedFn
}

// alwaysReturns reports whether every path through s ends in return or exit.
func alwaysReturns(s ast.Stmt) bool {
	switch x := s.(type) {
	case *ast.ReturnStmt, *ast.ExitStmt:
		return true
	case *ast.BlockStmt:
		for _, st := range x.Stmts {
			if alwaysReturns(st) {
				return true
			}
		}
	case *ast.IfStmt:
		return x.Else != nil && alwaysReturns(x.Then) && alwaysReturns(x.Else)
	}
	return false
}

func (c *checker) externDecl(d *ast.ExternDecl) {
	sc := c.typeParamScope(c.global, d.TypeParams)
	for _, m := range d.Methods {
		m.Extern = d
		if m.IsAbstract {
			c.unsupportedf(m, "abstract method %s.%s", d.Name, m.Name)
		}
		msc := c.typeParamScope(sc, m.TypeParams)
		if m.Return != nil {
			c.resolveType(m.Return, msc)
		}
		if m.IsConstructor && m.Name != d.Name {
			c.errorf(m, "constructor %s of extern %s must have the extern's name", m.Name, d.Name)
		}
		c.paramTypes(m.Params, msc)
	}
}

// bodyScope checks the signature of a parser or control (kind) and
// returns the scope of its body with the parameters declared, or nil for
// a prototype or an unsupported generic body.
func (c *checker) bodyScope(d ast.Decl, kind string, tps []*ast.TypeParam, params, ctor []*ast.Param, proto bool) *scope {
	sc := c.typeParamScope(c.global, tps)
	c.paramTypes(params, sc)
	c.paramTypes(ctor, sc)
	if proto {
		return nil
	}
	if len(tps) > 0 {
		c.unsupportedf(d, "generic %s %s", kind, d.DeclName())
		return nil
	}
	return c.declareParams(sc, params, ctor)
}

func (c *checker) parserDecl(d *ast.ParserDecl) {
	sc := c.bodyScope(d, "parser", d.TypeParams, d.Params, d.CtorParams, d.IsPrototype)
	if sc == nil {
		return
	}
	defer c.enter(d)()
	saved := c.ctx
	c.ctx = ctxParser
	defer func() { c.ctx = saved }()
	for _, l := range d.Locals {
		c.localDecl(l, sc)
	}
	states := newScope(sc)
	for _, s := range d.States {
		s.Parser = d
		if s.Name == "accept" || s.Name == "reject" {
			c.errorf(s, "state %s: accept and reject are built-in states and cannot be declared", s.Name)
			continue
		}
		c.declare(states, s)
	}
	if d.StateByName("start") == nil {
		c.errorf(d, "parser %s has no start state", d.Name)
	}
	for _, s := range d.States {
		c.state(s, states)
	}
	if start := d.StateByName("start"); start != nil && !reachesEnd(start) {
		c.errorf(d, "%s: Parser never reaches accept or reject state", d.Name)
	}
}

// reachesEnd reports whether accept or reject is reachable from start
// through the states' transitions (p4c's frontends/p4/simplifyParsers).
func reachesEnd(start *ast.StateDecl) bool {
	seen := map[*ast.StateDecl]bool{}
	var visit func(s *ast.StateDecl) bool
	visit = func(s *ast.StateDecl) bool {
		if s == nil || seen[s] {
			return false
		}
		if s == ast.AcceptState || s == ast.RejectState || s.Name == "accept" || s.Name == "reject" {
			return true
		}
		seen[s] = true
		tr := s.Transition
		if tr == nil {
			return true // an error reported elsewhere: do not pile on
		}
		if tr.Next != nil {
			next, ok := tr.Next.Decl.(*ast.StateDecl)
			return !ok || visit(next)
		}
		if tr.Select == nil {
			return true
		}
		for _, cs := range tr.Select.Cases {
			next, ok := cs.State.Decl.(*ast.StateDecl)
			if !ok || visit(next) {
				return true
			}
		}
		return false
	}
	return visit(start)
}

func (c *checker) controlDecl(d *ast.ControlDecl) {
	sc := c.bodyScope(d, "control", d.TypeParams, d.Params, d.CtorParams, d.IsPrototype)
	if sc == nil {
		return
	}
	defer c.enter(d)()
	saved := c.ctx
	c.ctx = ctxControl
	defer func() { c.ctx = saved }()
	for _, l := range d.Locals {
		switch x := l.(type) {
		case *ast.ActionDecl:
			x.Control = d
			c.declare(sc, x)
			c.actionDecl(x, sc)
		case *ast.TableDecl:
			x.Control = d
			c.declare(sc, x)
			c.tableDecl(x, sc)
		default:
			c.localDecl(l, sc)
		}
	}
	c.ctx = ctxControl
	c.block(d.Apply, sc)
}

// localDecl checks and declares a parser/control/block local.
func (c *checker) localDecl(d ast.Decl, sc *scope) {
	switch x := d.(type) {
	case *ast.ConstDecl:
		c.constDecl(x, sc)
	case *ast.VarDecl:
		t := c.resolveType(x.Type, sc)
		if x.Init != nil && t != nil {
			c.expr(x.Init, t, sc)
			c.assignable(x.Init, t, "initializer of "+x.Name)
		}
		if t != nil {
			switch t.(type) {
			case *ast.ObjectType, *ast.VoidType, *ast.TableType, *ast.IntLitType, *ast.StringType:
				c.errorf(x, "%s: a variable cannot have type %s", x.Name, t)
			}
		}
	case *ast.InstanceDecl:
		c.instanceDecl(x, sc)
	case *ast.ValueSetDecl:
		c.valueSetDecl(x, sc)
	default:
		c.unsupportedf(d, "local declaration %T", d)
	}
	c.declare(sc, d)
}

// instanceDecl checks `Type(args) name;`.
func (c *checker) instanceDecl(d *ast.InstanceDecl, sc *scope) {
	if len(d.Initializer) > 0 {
		c.unsupportedf(d, "instance %s with an initializer block (abstract methods are outside the compiler's subset)", d.Name)
		return
	}
	t := c.resolveTypeAllowInfer(d.Type, sc)
	obj, ok := t.(*ast.ObjectType)
	if !ok {
		if t != nil {
			c.errorf(d.Type, "%s: cannot instantiate %s (only externs, parsers, controls and packages can be instantiated)", d.Name, t)
		}
		return
	}
	if sc == c.global {
		switch obj.Decl.(type) {
		case *ast.ControlDecl, *ast.ParserDecl:
			// p4c: parsers and controls are instantiated inside other
			// blocks or as package arguments, never at the top level.
			c.errorf(d, "%s: cannot instantiate a %s at the top level", d.Name, describeDecl(obj.Decl))
			return
		}
	}
	res := c.construct(d, obj, &d.Args, sc)
	if res != nil {
		if nt, isNamed := d.Type.(*ast.NamedType); isNamed {
			nt.T = res.typ
		}
		d.Ctor = res.ctor
	}
}

// valueSetDecl checks `value_set<T>(size) name;`: T is a bit string, a
// serializable enum or a struct of those (one per select expression).
func (c *checker) valueSetDecl(x *ast.ValueSetDecl, sc *scope) {
	t := c.resolveType(x.Type, sc)
	if n, ok := c.constIntExpr(x.Size, sc, "value_set size"); ok && n <= 0 {
		c.errorf(x.Size, "value_set %s: the size must be positive", x.Name)
	}
	if t == nil {
		return
	}
	elems := valueSetElems(t)
	for _, e := range elems {
		if ast.Bits(e, true) == nil && serEnumBits(e) == nil {
			c.errorf(x.Type, "value_set %s: elements must be bit<W>, int<W>, serializable enums or structs of those, not %s", x.Name, t)
			return
		}
	}
}

// valueSetElems are the components a value set of element type t matches:
// t itself, or the fields of a struct (nested structs flattened).
func valueSetElems(t ast.Type) []ast.Type {
	st, ok := t.(*ast.StructDecl)
	if !ok || st.Kind != ast.KindStruct {
		return []ast.Type{t}
	}
	var out []ast.Type
	for _, f := range st.Fields {
		out = append(out, valueSetElems(f.Type.Resolved())...)
	}
	return out
}

func describeDecl(d ast.Decl) string {
	switch d.(type) {
	case *ast.ActionDecl:
		return "action"
	case *ast.TableDecl:
		return "table"
	case *ast.ConstDecl:
		return "constant"
	case *ast.VarDecl:
		return "variable"
	case *ast.Param:
		return "parameter"
	case *ast.InstanceDecl:
		return "instance"
	case *ast.StructDecl, *ast.EnumDecl, *ast.TypedefDecl:
		return "type"
	case *ast.ExternDecl:
		return "extern"
	case *ast.ParserDecl:
		return "parser"
	case *ast.ControlDecl:
		return "control"
	case *ast.StateDecl:
		return "state"
	}
	return fmt.Sprintf("%T", d)
}
