package frontend

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
	"github.com/grid-ina/grid/harness/p4c/frontend/check"
)

// slotProblems lists the checker slots left empty in a checked program:
// untyped expressions, unresolved names, members and calls, integer
// literals without a constant value and unresolved type expressions.
func slotProblems(prog *ast.Program) []string {
	exempt := map[ast.Node]bool{}
	ast.Inspect(prog, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Call:
			exempt[x.Fun] = true
		case *ast.Member:
			if x.Kind == ast.MemberEnum || x.Kind == ast.MemberError {
				exempt[x.X] = true
			}
		case *ast.ExternDecl, *ast.ExternFunctionDecl, *ast.PackageDecl:
			return false
		case *ast.ParserDecl:
			return !x.IsPrototype
		case *ast.ControlDecl:
			return !x.IsPrototype
		}
		return true
	})
	var probs []string
	add := func(n ast.Node, what string) { probs = append(probs, n.Position().String()+": "+what) }
	typeExprs := func(ts ...ast.TypeExpr) {
		for _, t := range ts {
			if t != nil && t.Resolved() == nil {
				add(t, "unresolved type "+ast.TypeExprString(t))
			}
		}
	}
	ast.Inspect(prog, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ExternDecl, *ast.ExternFunctionDecl, *ast.PackageDecl:
			return false
		case *ast.ParserDecl:
			return !x.IsPrototype
		case *ast.ControlDecl:
			return !x.IsPrototype
		case *ast.Param:
			typeExprs(x.Type)
		case *ast.VarDecl:
			typeExprs(x.Type)
		case *ast.ConstDecl:
			typeExprs(x.Type)
		case *ast.InstanceDecl:
			typeExprs(x.Type)
		case *ast.Cast:
			typeExprs(x.Type)
		}
		e, isExpr := n.(ast.Expr)
		if !isExpr || exempt[n] {
			if id, ok := n.(*ast.Ident); ok && id.Decl == nil {
				add(n, "unresolved name "+id.Name)
			}
			return true
		}
		info := e.Info()
		if info.Type == nil {
			add(n, "untyped expression "+ast.ExprString(e))
		}
		if _, isInt := info.Type.(*ast.IntLitType); isInt && info.Const == nil {
			add(n, "integer-typed expression without a constant value "+ast.ExprString(e))
		}
		switch x := n.(type) {
		case *ast.Ident:
			if x.Decl == nil {
				add(n, "unresolved name "+x.Name)
			}
		case *ast.Member:
			if x.Kind == ast.MemberUnresolved {
				add(n, "unresolved member "+ast.ExprString(x))
			}
		case *ast.Call:
			if x.Kind == ast.CallUnresolved {
				add(n, "unresolved call "+ast.ExprString(x))
			}
		}
		return true
	})
	return probs
}

func TestCheckedCorpusProgramsHaveEverySlotFilled(t *testing.T) {
	opts := Options{Features: check.Features{HeaderUnions: true, Varbit: true}}
	for _, f := range corpusPrograms(t) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		prog, diags := Compile(f, src, opts)
		if diags.HasErrors() {
			continue
		}
		if prog.Main == nil {
			t.Errorf("%s: Program.Main not set", filepath.Base(f))
		}
		probs := slotProblems(prog)
		for i, p := range probs {
			if i == 5 {
				t.Errorf("%s: ... %d more", filepath.Base(f), len(probs)-5)
				break
			}
			t.Errorf("%s", p)
		}
	}
}
