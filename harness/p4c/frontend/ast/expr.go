package ast

import "math/big"

// Expr is an expression. Info returns the semantic slots filled by the checker.
type Expr interface {
	Node
	Info() *ExprInfo
}

// ExprInfo holds what the checker computes for an expression.
type ExprInfo struct {
	// Type is the expression's type. Integer literals without a width that
	// were not forced to a width by their context keep *IntLitType.
	Type Type
	// Const is the compile-time value, nil when the expression is not a
	// compile-time constant. Integer values are normalised to the
	// expression's type (wrapped to W bits; for int<W> in two's-complement
	// range [-2^(W-1), 2^(W-1))).
	Const *Value
	// LValue reports whether the expression denotes a writable location
	// (out/inout parameter, local variable, field of one ...).
	LValue bool
}

// Info returns the receiver; embedding ExprInfo gives every Expr this method.
func (e *ExprInfo) Info() *ExprInfo { return e }

// Ident is a name. Decl is filled by the checker: it is the declaration the
// name refers to (*Param, *VarDecl, *ConstDecl, *InstanceDecl, *TableDecl,
// *ActionDecl, *StateDecl, *EnumMember (match kinds), *ExternFunctionDecl,
// *FunctionDecl, ...). For a name that denotes a type in expression
// position (an enum or `error` before `.`), Decl is the *EnumDecl or
// *ErrorDecl.
type Ident struct {
	Pos
	ExprInfo
	Name string
	// TopLevel is true for `.name` (look up at the top level only).
	TopLevel bool
	Decl     Decl
}

// IntLit is an integer literal: 5, 0x1F, 0b101, 0o17, 8w5, 16s-3, 1_000.
// Width is 0 when no width was written.
type IntLit struct {
	Pos
	ExprInfo
	Value  *big.Int // value as written (before wrapping to Width)
	Width  int
	Signed bool // `s` width prefix
	Text   string
}

// BoolLit is true or false.
type BoolLit struct {
	Pos
	ExprInfo
	Value bool
}

// StringLit is a string literal (used by annotations and log_msg).
type StringLit struct {
	Pos
	ExprInfo
	Value string
}

// MemberKind says what `X.Name` denotes; filled by the checker.
type MemberKind int

const (
	MemberUnresolved     MemberKind = iota
	MemberField                     // field of a struct/header/union value; Field set
	MemberEnum                      // Enum.Member; EnumMember set (enum or serializable enum)
	MemberError                     // error.Name; EnumMember set
	MemberMethod                    // method of an extern instance (resolved further by the Call)
	MemberBuiltinMethod             // isValid, setValid, setInvalid, push_front, pop_front, apply, minSizeInBits...
	MemberStackNext                 // hs.next
	MemberStackLast                 // hs.last
	MemberStackSize                 // hs.size
	MemberStackLastIndex            // hs.lastIndex
	MemberStackNextIndex            // hs.nextIndex (parsers)
	MemberTableHit                  // t.apply().hit
	MemberTableMiss                 // t.apply().miss
	MemberTableActionRun            // t.apply().action_run
)

// Member is `X.Name`. For MemberEnum and MemberError, X is a type name:
// an *Ident whose Decl is the *EnumDecl or *ErrorDecl and whose Type is nil.
type Member struct {
	Pos
	ExprInfo
	X    Expr
	Name string

	Kind       MemberKind
	Field      *Field
	EnumMember *EnumMember
}

// Index is a header stack element `X[Index]`.
type Index struct {
	Pos
	ExprInfo
	X     Expr
	Index Expr
}

// Slice is a bit slice `X[Hi:Lo]`; the checker fills HiVal/LoVal.
type Slice struct {
	Pos
	ExprInfo
	X      Expr
	Hi, Lo Expr
	// Width is set for [Lo +: Width] (Hi is then nil).
	Width        Expr
	HiVal, LoVal int
}

// Arg is an argument; Name is set for named arguments (`name = value`).
// Value is *DontCare for `_`.
type Arg struct {
	Pos
	Name  string
	Value Expr
}

// CallKind is what a call invokes; filled by the checker.
type CallKind int

const (
	CallUnresolved     CallKind = iota
	CallAction                  // direct action call; Action set
	CallFunction                // P4 function; Function set
	CallExternFunction          // extern function (mark_to_drop, hash, ...); ExternFunc set
	CallExternMethod            // method of an extern instance; Method set, Receiver is Fun.(*Member).X
	CallBuiltin                 // isValid/setValid/setInvalid/push_front/pop_front/minSizeInBits...; Builtin set
	CallTableApply              // t.apply(); Table set
	// CallControlApply is c.apply(...) of a control instance; the control
	// is the receiver's type (*ObjectType).Decl. The receiver may also be
	// an Ident whose Decl is the *ControlDecl itself: P4's direct
	// invocation `MyControl.apply(...)` of a control without constructor
	// parameters (one anonymous instance per call site).
	CallControlApply
	CallParserApply // p.apply(...) of a parser instance (sub-parser); direct invocation as for controls
	// CallConstructor is an instantiation written as an expression: a
	// package argument `V1Switch(MyParser(), ...)` or a table property
	// `counters = direct_counter(CounterType.packets)`. Ctor is set for
	// externs; the Call's type is the *ObjectType created.
	CallConstructor
)

// Call is `Fun<TypeArgs>(Args)`. After checking, Fun.Info().Type is nil
// (a callee has no value type; Kind and the resolved slots say what is
// called); Fun's Ident.Decl or Member.Kind and receiver are filled.
type Call struct {
	Pos
	ExprInfo
	Fun      Expr
	TypeArgs []TypeExpr
	Args     []*Arg

	Kind       CallKind
	Action     *ActionDecl
	Function   *FunctionDecl
	ExternFunc *ExternFunctionDecl
	Method     *MethodDecl
	Table      *TableDecl
	Builtin    string
	Ctor       *MethodDecl
	// TypeBindings maps each type parameter of the callee (including those
	// of the receiver's extern type) to its inferred or explicit type.
	TypeBindings map[*TypeParam]Type
	// ArgParams is the callee parameter each argument binds to, in the
	// order of Args (named arguments reordered by the checker are still
	// listed in Args order).
	ArgParams []*Param
}

// Receiver returns the object a method call is invoked on, or nil.
func (c *Call) Receiver() Expr {
	if m, ok := c.Fun.(*Member); ok {
		return m.X
	}
	return nil
}

// UnaryOp is a unary operator.
type UnaryOp int

const (
	OpNeg    UnaryOp = iota // -
	OpPlus                  // +
	OpBitNot                // ~
	OpNot                   // !
)

var unaryOpText = [...]string{OpNeg: "-", OpPlus: "+", OpBitNot: "~", OpNot: "!"}

func (o UnaryOp) String() string { return unaryOpText[o] }

// Unary is `Op X`.
type Unary struct {
	Pos
	ExprInfo
	Op UnaryOp
	X  Expr
}

// BinaryOp is a binary operator.
type BinaryOp int

const (
	OpMul    BinaryOp = iota // *
	OpDiv                    // /
	OpMod                    // %
	OpAdd                    // +
	OpSub                    // -
	OpAddSat                 // |+|
	OpSubSat                 // |-|
	OpShl                    // <<
	OpShr                    // >>
	OpLe                     // <=
	OpGe                     // >=
	OpLt                     // <
	OpGt                     // >
	OpEq                     // ==
	OpNe                     // !=
	OpBitAnd                 // &
	OpBitXor                 // ^
	OpBitOr                  // |
	OpConcat                 // ++
	OpAnd                    // &&
	OpOr                     // ||
	OpMask                   // &&& (keysets only)
	OpRange                  // .. (keysets only)
)

var binaryOpText = [...]string{
	OpMul: "*", OpDiv: "/", OpMod: "%", OpAdd: "+", OpSub: "-", OpAddSat: "|+|", OpSubSat: "|-|",
	OpShl: "<<", OpShr: ">>", OpLe: "<=", OpGe: ">=", OpLt: "<", OpGt: ">", OpEq: "==", OpNe: "!=",
	OpBitAnd: "&", OpBitXor: "^", OpBitOr: "|", OpConcat: "++", OpAnd: "&&", OpOr: "||",
	OpMask: "&&&", OpRange: "..",
}

func (o BinaryOp) String() string { return binaryOpText[o] }

// Binary is `X Op Y`.
type Binary struct {
	Pos
	ExprInfo
	Op   BinaryOp
	X, Y Expr
}

// Ternary is `Cond ? Then : Else`.
type Ternary struct {
	Pos
	ExprInfo
	Cond, Then, Else Expr
}

// Cast is `(Type) X`.
type Cast struct {
	Pos
	ExprInfo
	Type TypeExpr
	X    Expr
}

// ListExpr is `{a, b, c}`: a tuple (hash/checksum field lists) or, when the
// context expects a struct or header, a struct initializer by position.
type ListExpr struct {
	Pos
	ExprInfo
	Elems []Expr
}

// StructInit is `{a = 1, b = 2}` (optionally `(T){...}` via Cast).
type StructInit struct {
	Pos
	ExprInfo
	Fields []*NamedExpr
	// Dots is a trailing `...`: the fields not named get their default
	// values (0, false, invalid).
	Dots bool
}

// NamedExpr is `name = value` inside a StructInit.
type NamedExpr struct {
	Pos
	Name  string
	Value Expr
}

// InvalidHeader is `{#}`, an invalid header or header union value
// (P4 1.2.2). The checker currently reports it unsupported.
type InvalidHeader struct {
	Pos
	ExprInfo
}

// Default is the `default` keyset.
type Default struct {
	Pos
	ExprInfo
}

// DontCare is `_` (keyset wildcard or don't-care out argument).
type DontCare struct {
	Pos
	ExprInfo
}

// TypeArgExpr wraps a type used where an expression is syntactically
// expected (e.g. `bit<8>` as a constructor argument of a generic call);
// it also serves `sizeof`-like builtins. Rare; the checker reports it
// unsupported except where documented.
type TypeArgExpr struct {
	Pos
	ExprInfo
	Type TypeExpr
}
