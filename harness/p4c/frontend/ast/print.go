package ast

import (
	"strings"
)

// ExprString renders an expression in P4 syntax (fully parenthesised
// binary operations), for messages and names.
func ExprString(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

// TypeExprString renders a type expression in P4 syntax.
func TypeExprString(t TypeExpr) string {
	var b strings.Builder
	writeType(&b, t)
	return b.String()
}

// writeList writes n items separated by ", " using item.
func writeList(b *strings.Builder, n int, item func(i int)) {
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		item(i)
	}
}

func writeType(b *strings.Builder, t TypeExpr) {
	switch x := t.(type) {
	case *NamedType:
		if x.TopLevel {
			b.WriteByte('.')
		}
		b.WriteString(x.Name)
		if len(x.Args) > 0 {
			b.WriteByte('<')
			writeList(b, len(x.Args), func(i int) { writeType(b, x.Args[i]) })
			b.WriteByte('>')
		}
	case *BitTypeExpr:
		switch {
		case x.Varbit:
			b.WriteString("varbit")
		case x.Signed:
			b.WriteString("int")
		default:
			b.WriteString("bit")
		}
		if x.Width != nil {
			b.WriteByte('<')
			writeExpr(b, x.Width)
			b.WriteByte('>')
		}
	case *BaseTypeExpr:
		b.WriteString([...]string{BaseBool: "bool", BaseInt: "int", BaseString: "string", BaseVoid: "void",
			BaseError: "error", BaseMatchKind: "match_kind", BaseDontCare: "_"}[x.Kind])
	case *StackTypeExpr:
		writeType(b, x.Elem)
		b.WriteByte('[')
		writeExpr(b, x.Size)
		b.WriteByte(']')
	case *TupleTypeExpr:
		b.WriteString("tuple<")
		writeList(b, len(x.Elems), func(i int) { writeType(b, x.Elems[i]) })
		b.WriteByte('>')
	case nil:
		b.WriteString("?")
	}
}

func writeExprs(b *strings.Builder, es []Expr) {
	writeList(b, len(es), func(i int) { writeExpr(b, es[i]) })
}

func writeExpr(b *strings.Builder, e Expr) {
	switch x := e.(type) {
	case *Ident:
		if x.TopLevel {
			b.WriteByte('.')
		}
		b.WriteString(x.Name)
	case *IntLit:
		b.WriteString(x.Text)
	case *BoolLit:
		if x.Value {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case *StringLit:
		b.WriteString(`"` + x.Value + `"`)
	case *Member:
		writeExpr(b, x.X)
		b.WriteByte('.')
		b.WriteString(x.Name)
	case *Index:
		writeExpr(b, x.X)
		b.WriteByte('[')
		writeExpr(b, x.Index)
		b.WriteByte(']')
	case *Slice:
		writeExpr(b, x.X)
		b.WriteByte('[')
		if x.Width != nil {
			writeExpr(b, x.Lo)
			b.WriteString(" +: ")
			writeExpr(b, x.Width)
		} else {
			writeExpr(b, x.Hi)
			b.WriteByte(':')
			writeExpr(b, x.Lo)
		}
		b.WriteByte(']')
	case *Call:
		writeExpr(b, x.Fun)
		if len(x.TypeArgs) > 0 {
			b.WriteByte('<')
			writeList(b, len(x.TypeArgs), func(i int) { writeType(b, x.TypeArgs[i]) })
			b.WriteByte('>')
		}
		b.WriteByte('(')
		writeList(b, len(x.Args), func(i int) {
			if x.Args[i].Name != "" {
				b.WriteString(x.Args[i].Name + " = ")
			}
			writeExpr(b, x.Args[i].Value)
		})
		b.WriteByte(')')
	case *Unary:
		b.WriteString(x.Op.String())
		writeExpr(b, x.X)
	case *Binary:
		b.WriteByte('(')
		writeExpr(b, x.X)
		b.WriteString(" " + x.Op.String() + " ")
		writeExpr(b, x.Y)
		b.WriteByte(')')
	case *Ternary:
		b.WriteByte('(')
		writeExpr(b, x.Cond)
		b.WriteString(" ? ")
		writeExpr(b, x.Then)
		b.WriteString(" : ")
		writeExpr(b, x.Else)
		b.WriteByte(')')
	case *Cast:
		b.WriteByte('(')
		writeType(b, x.Type)
		b.WriteByte(')')
		writeExpr(b, x.X)
	case *ListExpr:
		b.WriteByte('{')
		writeExprs(b, x.Elems)
		b.WriteByte('}')
	case *StructInit:
		b.WriteByte('{')
		writeList(b, len(x.Fields), func(i int) {
			b.WriteString(x.Fields[i].Name + " = ")
			writeExpr(b, x.Fields[i].Value)
		})
		if x.Dots {
			if len(x.Fields) > 0 {
				b.WriteString(", ")
			}
			b.WriteString("...")
		}
		b.WriteByte('}')
	case *InvalidHeader:
		b.WriteString("{#}")
	case *Default:
		b.WriteString("default")
	case *DontCare:
		b.WriteString("_")
	case *TypeArgExpr:
		writeType(b, x.Type)
	case *SelectExpr:
		b.WriteString("select(")
		writeExprs(b, x.Exprs)
		b.WriteString(")")
	case nil:
		b.WriteString("?")
	}
}

// Start returns the position of the leftmost token of e (Member, Index,
// Slice, Binary and Call nodes are positioned at their operator or name).
func Start(e Expr) Pos {
	for {
		switch x := e.(type) {
		case *Member:
			e = x.X
		case *Index:
			e = x.X
		case *Slice:
			e = x.X
		case *Binary:
			e = x.X
		case *Ternary:
			e = x.Cond
		case *Call:
			e = x.Fun
		default:
			return e.Position()
		}
	}
}
