package ast

import (
	"math/big"
	"testing"
)

func TestSameTypeComparesWidthAndSignedness(t *testing.T) {
	if !SameType(&BitsType{Width: 8}, &BitsType{Width: 8}) {
		t.Error("bit<8> != bit<8>")
	}
	if SameType(&BitsType{Width: 8}, &BitsType{Width: 9}) {
		t.Error("bit<8> == bit<9>")
	}
	if SameType(&BitsType{Width: 8}, &BitsType{Width: 8, Signed: true}) {
		t.Error("bit<8> == int<8>")
	}
	if !SameType(TBool, &BoolType{}) || SameType(TBool, TInt) {
		t.Error("parameterless types compared wrongly")
	}
	h1 := &StructDecl{Kind: KindHeader, Name: "h"}
	h2 := &StructDecl{Kind: KindHeader, Name: "h"}
	if SameType(h1, h2) || !SameType(h1, h1) {
		t.Error("struct types must compare by declaration")
	}
}

func TestBitWidthOfHeaderSumsFields(t *testing.T) {
	f := func(name string, w int) *Field {
		return &Field{Name: name, Type: &BitTypeExpr{T: &BitsType{Width: w}}}
	}
	h := &StructDecl{Kind: KindHeader, Name: "eth", Fields: []*Field{f("dst", 48), f("src", 48), f("type", 16)}}
	if w, ok := BitWidth(h); !ok || w != 112 {
		t.Errorf("BitWidth(eth) = %d, %v; want 112, true", w, ok)
	}
	if w, ok := BitWidth(&StackType{Elem: h, Size: 3}); !ok || w != 336 {
		t.Errorf("BitWidth(eth[3]) = %d, %v; want 336", w, ok)
	}
	if _, ok := BitWidth(TError); ok {
		t.Error("error has no fixed width")
	}
}

func TestAnnotationStringArg(t *testing.T) {
	as := Annotations{{Name: "name", Args: []Expr{&StringLit{Value: "ingress.t"}}}, {Name: "hidden"}}
	if s, ok := as.StringArg("name"); !ok || s != "ingress.t" {
		t.Errorf("StringArg(name) = %q, %v", s, ok)
	}
	if _, ok := as.StringArg("hidden"); ok {
		t.Error("@hidden has no string argument")
	}
	if as.Get("priority") != nil {
		t.Error("Get of an absent annotation must be nil")
	}
}

func TestInspectVisitsNestedExpressions(t *testing.T) {
	lit := &IntLit{Value: big.NewInt(1)}
	x := &Ident{Name: "x"}
	stmt := &BlockStmt{Stmts: []Stmt{&AssignStmt{LHS: x, RHS: &Binary{Op: OpAdd, X: x, Y: lit}}}}
	var idents, lits int
	Inspect(stmt, func(n Node) bool {
		switch n.(type) {
		case *Ident:
			idents++
		case *IntLit:
			lits++
		}
		return true
	})
	if idents != 2 || lits != 1 {
		t.Errorf("visited %d idents, %d literals; want 2, 1", idents, lits)
	}
}

func TestExprStringRendersP4Syntax(t *testing.T) {
	e := &Binary{Op: OpAdd,
		X: &Member{X: &Ident{Name: "hdr"}, Name: "ttl"},
		Y: &Cast{Type: &BitTypeExpr{Width: &IntLit{Text: "8"}}, X: &Slice{X: &Ident{Name: "x"}, Hi: &IntLit{Text: "7"}, Lo: &IntLit{Text: "0"}}}}
	if got, want := ExprString(e), "(hdr.ttl + (bit<8>)x[7:0])"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
