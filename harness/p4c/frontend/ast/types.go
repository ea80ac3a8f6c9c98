package ast

import (
	"fmt"
	"math/big"
	"strings"
)

// TypeExpr is a type as written in the source. The checker fills T with the
// semantic type; Resolved returns it.
type TypeExpr interface {
	Node
	Resolved() Type
}

// NamedType is a type name with optional type arguments:
// `ethernet_t`, `register<bit<32>>`, `packet_in`, `error`, `T`.
// Decl is the declaration the name resolves to (filled by the checker).
type NamedType struct {
	Pos
	Name     string
	TopLevel bool
	Args     []TypeExpr
	Decl     Decl
	T        Type
}

// BitTypeExpr is `bit<W>`, `int<W>`, `varbit<W>` or plain `bit` (Width nil, meaning 1).
type BitTypeExpr struct {
	Pos
	Signed bool
	Varbit bool
	Width  Expr
	T      Type
}

// BaseKind enumerates the built-in non-parameterised types.
type BaseKind int

const (
	BaseBool BaseKind = iota
	BaseInt           // `int`: infinite-precision integer
	BaseString
	BaseVoid
	BaseError
	BaseMatchKind
	BaseDontCare // `_` as a type argument
)

// BaseTypeExpr is one of bool, int, string, void, error, match_kind, _.
type BaseTypeExpr struct {
	Pos
	Kind BaseKind
	T    Type
}

// StackTypeExpr is `Elem[Size]`.
type StackTypeExpr struct {
	Pos
	Elem TypeExpr
	Size Expr
	T    Type
}

// TupleTypeExpr is `tuple<A, B>`.
type TupleTypeExpr struct {
	Pos
	Elems []TypeExpr
	T     Type
}

func (t *NamedType) Resolved() Type     { return t.T }
func (t *BitTypeExpr) Resolved() Type   { return t.T }
func (t *BaseTypeExpr) Resolved() Type  { return t.T }
func (t *StackTypeExpr) Resolved() Type { return t.T }
func (t *TupleTypeExpr) Resolved() Type { return t.T }

// Type is a semantic type. Typedefs are transparent (resolved to their
// target). Struct, header and header_union types are their *StructDecl;
// enum types are their *EnumDecl.
type Type interface {
	String() string
}

// BitsType is bit<W> (Signed false) or int<W> (Signed true).
type BitsType struct {
	Width  int
	Signed bool
}

// IntLitType is the type of infinite-precision integers (`int`, literals without width).
type IntLitType struct{}

// BoolType is bool.
type BoolType struct{}

// StringType is string.
type StringType struct{}

// VoidType is the return type of methods returning nothing.
type VoidType struct{}

// VarbitType is varbit<Max>.
type VarbitType struct{ MaxWidth int }

// ErrorType is the type `error`.
type ErrorType struct{}

// MatchKindType is the type `match_kind`.
type MatchKindType struct{}

// DontCareType is the type of `_` and of `default` keysets.
type DontCareType struct{}

// StackType is a header stack `Elem[Size]`.
type StackType struct {
	Elem Type
	Size int
}

// TupleType is tuple<...>; also the type of list expressions `{a, b}`.
type TupleType struct{ Elems []Type }

// TypeVar is a type parameter of a generic declaration.
type TypeVar struct {
	Name  string
	Param *TypeParam
}

// NewType is a type introduced by `type Underlying Name;`.
type NewType struct {
	Decl       *TypedefDecl
	Underlying Type
}

// ObjectType is the type of an instance of an extern, parser, control or
// package, with its type arguments (Args[i] binds Decl's i-th type parameter).
// Decl is an *ExternDecl, *ParserDecl, *ControlDecl or *PackageDecl.
type ObjectType struct {
	Decl Decl
	Args []Type
}

// TableType is the type of a table name.
type TableType struct{ Table *TableDecl }

// ApplyResultType is the type of `t.apply()`; it has hit, miss and action_run.
type ApplyResultType struct{ Table *TableDecl }

// ActionRunType is the type of `t.apply().action_run`: an enum of t's actions.
type ActionRunType struct{ Table *TableDecl }

// ActionType is the type of an action name used as an expression (callable).
type ActionType struct{ Action *ActionDecl }

// StateType is the type of a parser state name.
type StateType struct{}

// SetType is the type of a keyset expression (mask `&&&`, range `..`).
type SetType struct{ Elem Type }

func (t *BitsType) String() string {
	if t.Signed {
		return fmt.Sprintf("int<%d>", t.Width)
	}
	return fmt.Sprintf("bit<%d>", t.Width)
}
func (*IntLitType) String() string      { return "int" }
func (*BoolType) String() string        { return "bool" }
func (*StringType) String() string      { return "string" }
func (*VoidType) String() string        { return "void" }
func (t *VarbitType) String() string    { return fmt.Sprintf("varbit<%d>", t.MaxWidth) }
func (*ErrorType) String() string       { return "error" }
func (*MatchKindType) String() string   { return "match_kind" }
func (*DontCareType) String() string    { return "_" }
func (t *StackType) String() string     { return fmt.Sprintf("%s[%d]", t.Elem, t.Size) }
func (t *TypeVar) String() string       { return t.Name }
func (t *NewType) String() string       { return t.Decl.Name }
func (t *TableType) String() string     { return "table " + t.Table.Name }
func (*ApplyResultType) String() string { return "apply_result" }
func (*ActionRunType) String() string   { return "action_list" }
func (t *ActionType) String() string    { return "action " + t.Action.Name }
func (*StateType) String() string       { return "state" }
func (t *SetType) String() string       { return fmt.Sprintf("set<%s>", t.Elem) }
func (t *StructDecl) String() string    { return t.Kind.String() + " " + t.Name }
func (t *EnumDecl) String() string      { return "enum " + t.Name }
func (t *TupleType) String() string {
	parts := make([]string, len(t.Elems))
	for i, e := range t.Elems {
		parts[i] = e.String()
	}
	return "tuple<" + strings.Join(parts, ", ") + ">"
}
func (t *ObjectType) String() string {
	name := t.Decl.DeclName()
	if len(t.Args) == 0 {
		return name
	}
	parts := make([]string, len(t.Args))
	for i, e := range t.Args {
		parts[i] = e.String()
	}
	return name + "<" + strings.Join(parts, ", ") + ">"
}

// Shared instances of the parameterless types; the checker uses these, but
// compare types with the helpers below, never by pointer.
var (
	TInt       = &IntLitType{}
	TBool      = &BoolType{}
	TString    = &StringType{}
	TVoid      = &VoidType{}
	TError     = &ErrorType{}
	TMatchKind = &MatchKindType{}
	TDontCare  = &DontCareType{}
	TState     = &StateType{}
)

// Bits returns the *BitsType of t when t is bit<W> or int<W> (looking
// through serializable enums and `type` declarations to their
// underlying type only when through is true), else nil.
func Bits(t Type, through bool) *BitsType {
	switch x := t.(type) {
	case *BitsType:
		return x
	case *EnumDecl:
		if through && x.Underlying != nil {
			return Bits(x.Underlying.Resolved(), true)
		}
	case *NewType:
		if through {
			return Bits(x.Underlying, true)
		}
	}
	return nil
}

// IsHeader reports whether t is a header type.
func IsHeader(t Type) bool {
	s, ok := t.(*StructDecl)
	return ok && s.Kind == KindHeader
}

// SameType reports whether a and b are the same type.
func SameType(a, b Type) bool {
	switch x := a.(type) {
	case *BitsType:
		y, ok := b.(*BitsType)
		return ok && x.Width == y.Width && x.Signed == y.Signed
	case *VarbitType:
		y, ok := b.(*VarbitType)
		return ok && x.MaxWidth == y.MaxWidth
	case *StackType:
		y, ok := b.(*StackType)
		return ok && x.Size == y.Size && SameType(x.Elem, y.Elem)
	case *TupleType:
		y, ok := b.(*TupleType)
		if !ok || len(x.Elems) != len(y.Elems) {
			return false
		}
		for i := range x.Elems {
			if !SameType(x.Elems[i], y.Elems[i]) {
				return false
			}
		}
		return true
	case *ObjectType:
		y, ok := b.(*ObjectType)
		if !ok || x.Decl != y.Decl || len(x.Args) != len(y.Args) {
			return false
		}
		for i := range x.Args {
			if !SameType(x.Args[i], y.Args[i]) {
				return false
			}
		}
		return true
	case *NewType:
		y, ok := b.(*NewType)
		return ok && x.Decl == y.Decl
	case *TableType:
		y, ok := b.(*TableType)
		return ok && x.Table == y.Table
	case *ApplyResultType:
		y, ok := b.(*ApplyResultType)
		return ok && x.Table == y.Table
	case *ActionRunType:
		y, ok := b.(*ActionRunType)
		return ok && x.Table == y.Table
	case *SetType:
		y, ok := b.(*SetType)
		return ok && SameType(x.Elem, y.Elem)
	case *StructDecl, *EnumDecl, *TypeVar, *ActionType:
		return a == b
	}
	// Parameterless types: same dynamic type.
	return fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b)
}

// BitWidth returns the number of bits a value of type t occupies when
// serialized (bit/int/bool(1)/serializable enum/header/struct of those/
// stack), and false for types without a fixed width (varbit counts its
// maximum width).
func BitWidth(t Type) (int, bool) {
	switch x := t.(type) {
	case *BitsType:
		return x.Width, true
	case *BoolType:
		return 1, true
	case *VarbitType:
		return x.MaxWidth, true
	case *EnumDecl:
		if b := Bits(x, true); b != nil {
			return b.Width, true
		}
	case *NewType:
		return BitWidth(x.Underlying)
	case *StackType:
		w, ok := BitWidth(x.Elem)
		return w * x.Size, ok
	case *StructDecl:
		total := 0
		for _, f := range x.Fields {
			w, ok := BitWidth(f.Type.Resolved())
			if !ok {
				return 0, false
			}
			total += w
		}
		return total, true
	}
	return 0, false
}

// ValueKind is the kind of a compile-time value.
type ValueKind int

const (
	ValInt ValueKind = iota
	ValBool
	ValString
	ValError // Member is the *EnumMember of the error
	ValEnum  // Member is the *EnumMember; for serializable enums Int holds its value too
	ValTuple // Elems: a tuple, or a struct/header value with its fields in declaration order
)

// Value is a compile-time constant value.
type Value struct {
	Kind   ValueKind
	Int    *big.Int
	Bool   bool
	Str    string
	Member *EnumMember
	Elems  []*Value
}

func (v *Value) String() string {
	switch v.Kind {
	case ValInt:
		return v.Int.String()
	case ValBool:
		return fmt.Sprint(v.Bool)
	case ValString:
		return fmt.Sprintf("%q", v.Str)
	case ValError:
		return "error." + v.Member.Name
	case ValEnum:
		return v.Member.Parent.DeclName() + "." + v.Member.Name
	case ValTuple:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = e.String()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return "?"
}
