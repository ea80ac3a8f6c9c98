package ast

// Inspect traverses the tree rooted at n in depth-first order, calling f for
// each node; when f returns false the node's children are skipped.
// Declarations referenced by resolved slots (Ident.Decl etc.) are not
// followed, only syntactic children.
func Inspect(n Node, f func(Node) bool) {
	if n == nil || !f(n) {
		return
	}
	exprs := func(es []Expr) {
		for _, e := range es {
			if e != nil {
				Inspect(e, f)
			}
		}
	}
	expr := func(e Expr) {
		if e != nil {
			Inspect(e, f)
		}
	}
	args := func(as []*Arg) {
		for _, a := range as {
			expr(a.Value)
		}
	}
	params := func(ps []*Param) {
		for _, p := range ps {
			Inspect(p, f)
		}
	}
	decls := func(ds []Decl) {
		for _, d := range ds {
			Inspect(d, f)
		}
	}
	switch x := n.(type) {
	case *Program:
		decls(x.Decls)
	case *Param:
		expr(x.Default)
	case *ConstDecl:
		expr(x.Value)
	case *VarDecl:
		expr(x.Init)
	case *EnumDecl:
		for _, m := range x.Members {
			Inspect(m, f)
		}
	case *EnumMember:
		expr(x.Value)
	case *ErrorDecl:
		for _, m := range x.Members {
			Inspect(m, f)
		}
	case *MatchKindDecl:
		for _, m := range x.Members {
			Inspect(m, f)
		}
	case *ActionDecl:
		params(x.Params)
		if x.Body != nil {
			Inspect(x.Body, f)
		}
	case *FunctionDecl:
		params(x.Params)
		if x.Body != nil {
			Inspect(x.Body, f)
		}
	case *ExternFunctionDecl:
		params(x.Params)
	case *ExternDecl:
		for _, m := range x.Methods {
			Inspect(m, f)
		}
	case *MethodDecl:
		params(x.Params)
	case *ParserDecl:
		params(x.Params)
		params(x.CtorParams)
		decls(x.Locals)
		for _, s := range x.States {
			Inspect(s, f)
		}
	case *StateDecl:
		for _, s := range x.Stmts {
			Inspect(s, f)
		}
		if x.Transition != nil {
			Inspect(x.Transition, f)
		}
	case *Transition:
		if x.Next != nil {
			Inspect(x.Next, f)
		}
		if x.Select != nil {
			Inspect(x.Select, f)
		}
	case *SelectExpr:
		exprs(x.Exprs)
		for _, c := range x.Cases {
			Inspect(c, f)
		}
	case *SelectCase:
		exprs(x.Keys)
		Inspect(x.State, f)
	case *ValueSetDecl:
		expr(x.Size)
	case *ControlDecl:
		params(x.Params)
		params(x.CtorParams)
		decls(x.Locals)
		if x.Apply != nil {
			Inspect(x.Apply, f)
		}
	case *PackageDecl:
		params(x.Params)
	case *InstanceDecl:
		args(x.Args)
		decls(x.Initializer)
	case *TableDecl:
		for _, k := range x.Keys {
			Inspect(k, f)
		}
		for _, a := range x.Actions {
			Inspect(a, f)
		}
		if x.DefaultAction != nil {
			Inspect(x.DefaultAction, f)
		}
		expr(x.Size)
		for _, e := range x.Entries {
			Inspect(e, f)
		}
		for _, p := range x.Custom {
			Inspect(p, f)
		}
	case *KeyElement:
		expr(x.Expr)
		Inspect(x.MatchKind, f)
	case *ActionRef:
		Inspect(x.Name, f)
		args(x.Args)
	case *Entry:
		expr(x.Priority)
		exprs(x.Keys)
		Inspect(x.Action, f)
	case *TableProperty:
		expr(x.Value)
	case *Member:
		expr(x.X)
	case *Index:
		expr(x.X)
		expr(x.Index)
	case *Slice:
		expr(x.X)
		if x.Hi != nil {
			expr(x.Hi)
		}
		expr(x.Lo)
		if x.Width != nil {
			expr(x.Width)
		}
	case *Call:
		expr(x.Fun)
		args(x.Args)
	case *Unary:
		expr(x.X)
	case *Binary:
		expr(x.X)
		expr(x.Y)
	case *Ternary:
		expr(x.Cond)
		expr(x.Then)
		expr(x.Else)
	case *Cast:
		expr(x.X)
	case *ListExpr:
		exprs(x.Elems)
	case *StructInit:
		for _, nf := range x.Fields {
			expr(nf.Value)
		}
	case *BlockStmt:
		for _, s := range x.Stmts {
			Inspect(s, f)
		}
	case *AssignStmt:
		expr(x.LHS)
		expr(x.RHS)
	case *CallStmt:
		Inspect(x.Call, f)
	case *IfStmt:
		expr(x.Cond)
		Inspect(x.Then, f)
		if x.Else != nil {
			Inspect(x.Else, f)
		}
	case *SwitchStmt:
		expr(x.Expr)
		for _, c := range x.Cases {
			Inspect(c, f)
		}
	case *SwitchCase:
		expr(x.Label)
		if x.Body != nil {
			Inspect(x.Body, f)
		}
	case *ReturnStmt:
		expr(x.Value)
	case *ForStmt:
		for _, st := range x.Init {
			Inspect(st, f)
		}
		expr(x.Cond)
		for _, st := range x.Update {
			Inspect(st, f)
		}
		Inspect(x.Body, f)
	case *ForInStmt:
		Inspect(x.Var, f)
		expr(x.Range)
		Inspect(x.Body, f)
	case *DeclStmt:
		Inspect(x.Decl, f)
	}
}
