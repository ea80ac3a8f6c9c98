// Package ast defines the syntax tree of the P4_16 subset accepted by the
// embedded compiler, together with the semantic slots the type checker fills
// in (see doc.go of package frontend for the pipeline).
//
// The parser (package frontend/parser) builds the tree; the checker
// (package frontend/check) resolves every name (Ident.Decl, NamedType.Decl,
// Member.Kind, Call.Kind ...), types every expression (ExprInfo.Type), folds
// compile-time constants (ExprInfo.Const) and resolves every TypeExpr (its T
// field). Back ends consume only checked trees, so every slot documented as
// "filled by the checker" is non-nil on a program returned by frontend.Load.
package ast

import "fmt"

// Pos is a position in an original source file (after preprocessing,
// positions still point at the file and line the text came from).
// Line and Col are 1-based; Col counts bytes.
type Pos struct {
	File string
	Line int
	Col  int
}

// Position returns the position itself; embedding Pos gives every node this method.
func (p Pos) Position() Pos { return p }

// IsValid reports whether the position refers to a source location.
func (p Pos) IsValid() bool { return p.Line > 0 }

// Before reports whether p comes before q in the same file.
func (p Pos) Before(q Pos) bool {
	return p.File == q.File && (p.Line < q.Line || p.Line == q.Line && p.Col < q.Col)
}

func (p Pos) String() string {
	if p.File == "" {
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Node is any syntax tree node.
type Node interface {
	Position() Pos
}

// Annotation is `@name` or `@name(...)` or `@name[...]`.
// Raw holds the text of the body between the brackets exactly as tokens
// (joined by single spaces); Args holds the body parsed as a comma-separated
// expression list when that parse succeeds (e.g. @name("x"), @priority(3)),
// else nil.
type Annotation struct {
	Pos
	Name    string
	Raw     string
	Args    []Expr
	HasBody bool
	// Structured is set for @name[...] (P4_16 structured annotations).
	Structured bool
}

// Annotations is a list of annotations on a declaration, parameter, field,
// statement, table property, key element or entry.
type Annotations []*Annotation

// Get returns the annotation with the given name, or nil.
func (as Annotations) Get(name string) *Annotation {
	for _, a := range as {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// StringArg returns the string argument of annotation name (as in @name("x")).
func (as Annotations) StringArg(name string) (string, bool) {
	a := as.Get(name)
	if a == nil || len(a.Args) != 1 {
		return "", false
	}
	if s, ok := a.Args[0].(*StringLit); ok {
		return s.Value, true
	}
	return "", false
}

// Direction of a parameter.
type Direction int

const (
	DirNone Direction = iota // directionless (compile-time / action data)
	DirIn
	DirOut
	DirInOut
)

func (d Direction) String() string {
	switch d {
	case DirIn:
		return "in"
	case DirOut:
		return "out"
	case DirInOut:
		return "inout"
	}
	return ""
}

// Program is a whole preprocessed and parsed P4 program (including the
// declarations of core.p4 and v1model.p4).
type Program struct {
	Decls []Decl

	// Filled by the checker:

	// Main is the top-level package instance named "main".
	Main *InstanceDecl
	// Errors lists every error member, in declaration order (all
	// `error {}` declarations merged, as P4 requires).
	Errors []*EnumMember
	// MatchKinds lists every match_kind member in declaration order.
	MatchKinds []*EnumMember
}

// Lookup returns the top-level declaration with the given name (the first
// one for overloaded extern functions), or nil.
func (p *Program) Lookup(name string) Decl {
	for _, d := range p.Decls {
		if d.DeclName() == name {
			return d
		}
	}
	return nil
}

// Position of the program: the first declaration's, or the zero Pos.
func (p *Program) Position() Pos {
	if len(p.Decls) > 0 {
		return p.Decls[0].Position()
	}
	return Pos{}
}
