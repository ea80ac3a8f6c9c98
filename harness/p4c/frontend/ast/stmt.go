package ast

// Stmt is a statement.
type Stmt interface {
	Node
	stmtNode()
}

// BlockStmt is `{ ... }`.
type BlockStmt struct {
	Pos
	Annos Annotations
	Stmts []Stmt
	End   Pos // position of the closing brace
}

// AssignStmt is `LHS = RHS;`. The parser also produces it for compound
// assignments `LHS op= RHS` (Compound true); the checker rewrites those to
// `LHS = LHS op RHS` (clearing Compound) when LHS has no side effects and
// reports them unsupported otherwise, so back ends never see Compound set.
type AssignStmt struct {
	Pos
	Annos    Annotations
	LHS      Expr
	RHS      Expr
	Compound bool
	Op       BinaryOp // operator of a compound assignment
}

// CallStmt is a call used as a statement: `f(x);`, `t.apply();`, `h.setValid();`.
type CallStmt struct {
	Pos
	Annos Annotations
	Call  *Call
}

// IfStmt is `if (Cond) Then [else Else]`; Else is nil, a *BlockStmt, an
// *IfStmt or any other statement.
type IfStmt struct {
	Pos
	Annos Annotations
	Cond  Expr
	Then  Stmt
	Else  Stmt
}

// SwitchStmt is `switch (Expr) { cases }` — on `t.apply().action_run`
// (labels are action names) or on a bit/enum/error value (labels are
// constants).
type SwitchStmt struct {
	Pos
	Annos Annotations
	Expr  Expr
	Cases []*SwitchCase
}

// SwitchCase is `label: body` or `label:` (fall-through to the next case's
// body; Body nil). A default label is *Default.
type SwitchCase struct {
	Pos
	Label Expr
	Body  *BlockStmt
}

// ExitStmt is `exit;`.
type ExitStmt struct {
	Pos
	Annos Annotations
}

// ReturnStmt is `return [Value];`.
type ReturnStmt struct {
	Pos
	Annos Annotations
	Value Expr
}

// EmptyStmt is `;`.
type EmptyStmt struct {
	Pos
}

// DeclStmt is a local declaration inside a block: *VarDecl, *ConstDecl or
// *InstanceDecl.
type DeclStmt struct {
	Pos
	Decl Decl
}

// ForStmt is `for (Init; Cond; Update) Body` (P4 1.2.5). Init and
// Update hold assignments, calls and (Init only) local declarations.
type ForStmt struct {
	Pos
	Annos  Annotations
	Init   []Stmt
	Cond   Expr // nil when omitted
	Update []Stmt
	Body   Stmt
}

// ForInStmt is `for (T Var in Range) Body` (P4 1.2.5); Range is usually
// a `lo .. hi` Binary with OpRange.
type ForInStmt struct {
	Pos
	Annos Annotations
	Var   *VarDecl
	Range Expr
	Body  Stmt
}

// BreakStmt is `break;` inside a for loop.
type BreakStmt struct {
	Pos
}

// ContinueStmt is `continue;` inside a for loop.
type ContinueStmt struct {
	Pos
}

func (*ForStmt) stmtNode()      {}
func (*ForInStmt) stmtNode()    {}
func (*BreakStmt) stmtNode()    {}
func (*ContinueStmt) stmtNode() {}
func (*BlockStmt) stmtNode()    {}
func (*AssignStmt) stmtNode()   {}
func (*CallStmt) stmtNode()     {}
func (*IfStmt) stmtNode()       {}
func (*SwitchStmt) stmtNode()   {}
func (*ExitStmt) stmtNode()     {}
func (*ReturnStmt) stmtNode()   {}
func (*EmptyStmt) stmtNode()    {}
func (*DeclStmt) stmtNode()     {}
