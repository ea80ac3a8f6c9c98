package ast

// Decl is a named declaration. Every name an Ident can resolve to is a Decl.
type Decl interface {
	Node
	DeclName() string
}

// Param is a parameter of an action, function, method, parser, control,
// package or constructor.
type Param struct {
	Pos
	Annos   Annotations
	Dir     Direction
	Type    TypeExpr
	Name    string
	Default Expr // optional default value
}

// ConstDecl is `const T name = value;` (top level or local).
type ConstDecl struct {
	Pos
	Annos Annotations
	Type  TypeExpr
	Name  string
	Value Expr // checker fills Value.Info().Const
}

// VarDecl is a local variable `T name [= init];` in a parser, control,
// action, function or block.
type VarDecl struct {
	Pos
	Annos Annotations
	Type  TypeExpr
	Name  string
	Init  Expr // may be nil
}

// TypedefDecl is `typedef T name;` (IsNewType false: transparent alias) or
// `type T name;` (IsNewType true: a distinct type, see NewType).
type TypedefDecl struct {
	Pos
	Annos     Annotations
	Type      TypeExpr
	Name      string
	IsNewType bool
}

// StructKind distinguishes the three struct-like declarations.
type StructKind int

const (
	KindStruct StructKind = iota
	KindHeader
	KindHeaderUnion
)

func (k StructKind) String() string {
	switch k {
	case KindHeader:
		return "header"
	case KindHeaderUnion:
		return "header_union"
	}
	return "struct"
}

// StructDecl is a struct, header or header_union declaration. It is also
// the semantic Type of values of that struct/header/union.
type StructDecl struct {
	Pos
	Annos      Annotations
	Kind       StructKind
	Name       string
	TypeParams []*TypeParam // generic structs: parsed, rejected by the checker
	Fields     []*Field
}

// Field is a field of a struct, header or header_union.
type Field struct {
	Pos
	Annos Annotations
	Type  TypeExpr // Type.Resolved() is the field's type
	Name  string
}

// FieldByName returns the field with the given name, or nil.
func (s *StructDecl) FieldByName(name string) *Field {
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// EnumDecl is `enum name {...}` or the serializable `enum bit<W> name {...}`.
// It is also the semantic Type of its members.
type EnumDecl struct {
	Pos
	Annos      Annotations
	Name       string
	Underlying TypeExpr // nil for a plain enum
	Members    []*EnumMember
}

// EnumMember is a member of an enum, of `error` or of `match_kind`.
type EnumMember struct {
	Pos
	Annos Annotations
	Name  string
	Value Expr // serializable enums only; checker fills Value.Info().Const
	// Parent is the *EnumDecl, *ErrorDecl or *MatchKindDecl that declares it.
	Parent Decl
}

// ErrorDecl is one `error { ... }` declaration; all of them are merged into
// the single error type (Program.Errors).
type ErrorDecl struct {
	Pos
	Members []*EnumMember
}

// MatchKindDecl is one `match_kind { ... }` declaration.
type MatchKindDecl struct {
	Pos
	Members []*EnumMember
}

// TypeParam is a type parameter `T` of a generic declaration. It is a Decl
// (names resolve to it) and its semantic type is a *TypeVar.
type TypeParam struct {
	Pos
	Name string
	Var  *TypeVar
}

// ActionDecl is an action, at top level or inside a control.
type ActionDecl struct {
	Pos
	Annos  Annotations
	Name   string
	Params []*Param
	Body   *BlockStmt
	// Control is the enclosing control, nil for a top-level action
	// (filled by the parser).
	Control *ControlDecl
}

// FunctionDecl is a P4 function `T name<...>(params) { ... }`.
type FunctionDecl struct {
	Pos
	Annos      Annotations
	Return     TypeExpr
	Name       string
	TypeParams []*TypeParam
	Params     []*Param
	Body       *BlockStmt
}

// ExternFunctionDecl is `extern T name<...>(params);`.
type ExternFunctionDecl struct {
	Pos
	Annos      Annotations
	Return     TypeExpr
	Name       string
	TypeParams []*TypeParam
	Params     []*Param
}

// ExternDecl is `extern Name<...> { constructors and methods }`.
type ExternDecl struct {
	Pos
	Annos      Annotations
	Name       string
	TypeParams []*TypeParam
	Methods    []*MethodDecl // constructors included (IsConstructor)
}

// MethodDecl is a constructor or method prototype of an extern.
type MethodDecl struct {
	Pos
	Annos         Annotations
	Return        TypeExpr // nil for constructors
	Name          string
	TypeParams    []*TypeParam
	Params        []*Param
	IsConstructor bool
	IsAbstract    bool
	Extern        *ExternDecl
}

// ParserDecl is a parser declaration with a body, or (IsPrototype) a parser
// type declaration such as v1model's `parser Parser<H, M>(...);`.
type ParserDecl struct {
	Pos
	Annos       Annotations
	Name        string
	TypeParams  []*TypeParam
	Params      []*Param
	CtorParams  []*Param
	IsPrototype bool
	Locals      []Decl // VarDecl, ConstDecl, InstanceDecl, ValueSetDecl
	States      []*StateDecl
}

// StateByName returns the state with the given name, or nil.
func (p *ParserDecl) StateByName(name string) *StateDecl {
	for _, s := range p.States {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// StateDecl is a parser state. The two built-in final states are the
// package variables AcceptState and RejectState.
type StateDecl struct {
	Pos
	Annos      Annotations
	Name       string
	Stmts      []Stmt
	Transition *Transition // nil only for accept/reject and states without transition (an error)
	Parser     *ParserDecl
}

// AcceptState and RejectState are what the names accept and reject resolve to.
var (
	AcceptState = &StateDecl{Name: "accept"}
	RejectState = &StateDecl{Name: "reject"}
)

// Transition is `transition next;` (Next set) or `transition select(...) {...}` (Select set).
type Transition struct {
	Pos
	Next   *Ident // resolves to a *StateDecl
	Select *SelectExpr
}

// SelectExpr is `select(e1, e2) { keyset: state; ... }`.
type SelectExpr struct {
	Pos
	ExprInfo
	Exprs []Expr
	Cases []*SelectCase
}

// SelectCase is one `keyset: state;`. Keys has one element per select
// expression (a tuple keyset `(a, b)` is flattened); a `default` or `_`
// keyset is *Default/*DontCare.
type SelectCase struct {
	Pos
	Keys  []Expr
	State *Ident
}

// ValueSetDecl is `value_set<T>(size) name;` (parsed; the checker reports it unsupported).
type ValueSetDecl struct {
	Pos
	Annos Annotations
	Type  TypeExpr
	Size  Expr
	Name  string
}

// ControlDecl is a control with a body, or (IsPrototype) a control type
// declaration such as v1model's `control Ingress<H, M>(...);`.
type ControlDecl struct {
	Pos
	Annos       Annotations
	Name        string
	TypeParams  []*TypeParam
	Params      []*Param
	CtorParams  []*Param
	IsPrototype bool
	Locals      []Decl // VarDecl, ConstDecl, InstanceDecl, ActionDecl, TableDecl, FunctionDecl
	Apply       *BlockStmt
}

// PackageDecl is `package Name<...>(params);`.
type PackageDecl struct {
	Pos
	Annos      Annotations
	Name       string
	TypeParams []*TypeParam
	Params     []*Param
}

// InstanceDecl is an instantiation `Type(args) name;` of an extern, parser,
// control or package (e.g. `register<bit<32>>(16) r;`, `V1Switch(...) main;`).
type InstanceDecl struct {
	Pos
	Annos Annotations
	Type  TypeExpr // Type.Resolved() is an *ObjectType
	Args  []*Arg
	Name  string
	// Initializer is the optional `= { ... }` block of abstract-method
	// implementations (parsed; the checker reports it unsupported).
	Initializer []Decl
	// Ctor is the extern constructor chosen by the checker (nil for
	// parser/control/package instances).
	Ctor *MethodDecl
}

// TableDecl is a table. Standard properties get their own fields;
// anything else (implementation, counters, meters, support_timeout,
// psa_* ...) is kept in Custom in source order.
type TableDecl struct {
	Pos
	Annos   Annotations
	Name    string
	Keys    []*KeyElement // nil when the table has no key property
	KeyPos  Pos           // of the key property
	Actions []*ActionRef  // nil when the table has no actions property
	// DefaultAction is nil when the program does not set one (the backend
	// then uses NoAction as p4c does).
	DefaultAction      *ActionRef
	DefaultActionConst bool
	Size               Expr // nil when absent
	Entries            []*Entry
	EntriesConst       bool
	HasEntries         bool
	EntriesPos         Pos // of the entries property
	Custom             []*TableProperty
	Control            *ControlDecl
}

// CustomProperty returns the custom property with the given name, or nil.
func (t *TableDecl) CustomProperty(name string) *TableProperty {
	for _, p := range t.Custom {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// KeyElement is `expr : match_kind` in a table key.
type KeyElement struct {
	Pos
	Annos     Annotations
	Expr      Expr
	MatchKind *Ident // resolves to an *EnumMember of a MatchKindDecl
}

// ActionRef is an element of `actions = {...}` or the default_action, or an
// entry's action: a name with optional arguments.
type ActionRef struct {
	Pos
	Annos Annotations
	Name  *Ident // resolves to an *ActionDecl
	Args  []*Arg // nil when written without parentheses
	// HasParens reports whether the reference was written with ( ).
	HasParens bool
}

// Entry is one `keyset : action(args);` of an entries list.
type Entry struct {
	Pos
	Annos    Annotations
	Keys     []Expr // one per key element (tuple flattened); *Default/*DontCare allowed
	Action   *ActionRef
	Priority Expr // `priority = N :` prefix, nil when absent
	IsConst  bool // `const` before this entry
}

// TableProperty is a non-standard table property `name = value;`.
type TableProperty struct {
	Pos
	Annos   Annotations
	Name    string
	Value   Expr
	IsConst bool
}

// DeclName implementations.
func (d *Param) DeclName() string              { return d.Name }
func (d *ConstDecl) DeclName() string          { return d.Name }
func (d *VarDecl) DeclName() string            { return d.Name }
func (d *TypedefDecl) DeclName() string        { return d.Name }
func (d *StructDecl) DeclName() string         { return d.Name }
func (d *EnumDecl) DeclName() string           { return d.Name }
func (d *EnumMember) DeclName() string         { return d.Name }
func (d *ErrorDecl) DeclName() string          { return "error" }
func (d *MatchKindDecl) DeclName() string      { return "match_kind" }
func (d *TypeParam) DeclName() string          { return d.Name }
func (d *ActionDecl) DeclName() string         { return d.Name }
func (d *FunctionDecl) DeclName() string       { return d.Name }
func (d *ExternFunctionDecl) DeclName() string { return d.Name }
func (d *ExternDecl) DeclName() string         { return d.Name }
func (d *MethodDecl) DeclName() string         { return d.Name }
func (d *ParserDecl) DeclName() string         { return d.Name }
func (d *StateDecl) DeclName() string          { return d.Name }
func (d *ValueSetDecl) DeclName() string       { return d.Name }
func (d *ControlDecl) DeclName() string        { return d.Name }
func (d *PackageDecl) DeclName() string        { return d.Name }
func (d *InstanceDecl) DeclName() string       { return d.Name }
func (d *TableDecl) DeclName() string          { return d.Name }
