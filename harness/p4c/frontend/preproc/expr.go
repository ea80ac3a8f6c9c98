package preproc

import (
	"fmt"
	"math/big"

	"github.com/grid-ina/grid/harness/p4c/frontend/lexer"
)

// evalCond evaluates the expression of #if / #elif: defined(X) and
// defined X are replaced first, then macros are expanded, then remaining
// identifiers count as 0, as in C.
func (p *pp) evalCond(kw lexer.Token, toks []lexer.Token) bool {
	var pre []lexer.Token
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.Kind == lexer.Ident && t.Text == "defined" {
			name, next := "", i+1
			if next < len(toks) && toks[next].Text == "(" {
				if next+2 < len(toks) && toks[next+2].Text == ")" {
					name, next = toks[next+1].Text, next+3
				}
			} else if next < len(toks) && toks[next].Kind == lexer.Ident {
				name, next = toks[next].Text, next+1
			}
			if name == "" {
				p.diags.Errorf(t.Pos, "defined needs a macro name")
				return false
			}
			v := int64(0)
			if _, ok := p.macros[name]; ok {
				v = 1
			}
			pre = append(pre, lexer.Token{Kind: lexer.Int, Text: fmt.Sprint(v), Pos: t.Pos, Int: &lexer.IntValue{Value: big.NewInt(v)}})
			i = next - 1
			continue
		}
		pre = append(pre, t)
	}
	e := &condEval{toks: p.expand(pre, nil)}
	if len(e.toks) == 0 {
		p.diags.Errorf(kw.Pos, "#%s with no expression", kw.Text)
		return false
	}
	v := e.ternary()
	if e.err == "" && e.i < len(e.toks) {
		e.err = fmt.Sprintf("unexpected %q", e.toks[e.i].Text)
	}
	if e.err != "" {
		pos := kw.Pos
		if e.i < len(e.toks) {
			pos = e.toks[e.i].Pos
		}
		p.diags.Errorf(pos, "invalid #%s expression: %s", kw.Text, e.err)
		return false
	}
	return v != 0
}

// condEval is a recursive-descent evaluator of C preprocessor integer
// expressions over int64.
type condEval struct {
	toks []lexer.Token
	i    int
	err  string
}

func (e *condEval) peek() string {
	if e.i < len(e.toks) {
		return e.toks[e.i].Text
	}
	return ""
}

// op2 reports whether the next two tokens are the adjacent pair a, b (the
// lexer never joins '>' '>').
func (e *condEval) op2(a, b string) bool {
	return e.i+1 < len(e.toks) && e.toks[e.i].Text == a && e.toks[e.i+1].Text == b && !e.toks[e.i+1].Space
}

func (e *condEval) fail(msg string) int64 {
	if e.err == "" {
		e.err = msg
	}
	return 0
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (e *condEval) ternary() int64 {
	c := e.binary(0)
	if e.peek() == "?" {
		e.i++
		a := e.ternary()
		if e.peek() != ":" {
			return e.fail("missing ':'")
		}
		e.i++
		b := e.ternary()
		if c != 0 {
			return a
		}
		return b
	}
	return c
}

var precedence = [][]string{
	{"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", ">", "<=", ">="}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"},
}

func (e *condEval) binary(level int) int64 {
	if level == len(precedence) {
		return e.unary()
	}
	x := e.binary(level + 1)
	for e.err == "" {
		op := ""
		switch {
		case e.op2(">", ">") && level == 7:
			op = ">>"
		default:
			for _, o := range precedence[level] {
				if e.peek() == o && !(o == ">" && e.op2(">", ">")) {
					op = o
				}
			}
		}
		if op == "" {
			return x
		}
		if op == ">>" {
			e.i += 2
		} else {
			e.i++
		}
		y := e.binary(level + 1)
		switch op {
		case "||":
			x = b2i(x != 0 || y != 0)
		case "&&":
			x = b2i(x != 0 && y != 0)
		case "|":
			x |= y
		case "^":
			x ^= y
		case "&":
			x &= y
		case "==":
			x = b2i(x == y)
		case "!=":
			x = b2i(x != y)
		case "<":
			x = b2i(x < y)
		case ">":
			x = b2i(x > y)
		case "<=":
			x = b2i(x <= y)
		case ">=":
			x = b2i(x >= y)
		case "<<":
			x <<= uint64(y) & 63
		case ">>":
			x >>= uint64(y) & 63
		case "+":
			x += y
		case "-":
			x -= y
		case "*":
			x *= y
		case "/", "%":
			if y == 0 {
				return e.fail("division by zero")
			}
			if op == "/" {
				x /= y
			} else {
				x %= y
			}
		}
	}
	return x
}

func (e *condEval) unary() int64 {
	if e.i >= len(e.toks) {
		return e.fail("unexpected end of expression")
	}
	t := e.toks[e.i]
	e.i++
	switch {
	case t.Kind == lexer.Int:
		if !t.Int.Value.IsInt64() {
			return e.fail("integer too large")
		}
		return t.Int.Value.Int64()
	case t.Kind == lexer.Ident:
		return 0 // an undefined (or non-numeric) name evaluates to 0
	case t.Text == "(":
		v := e.ternary()
		if e.peek() != ")" {
			return e.fail("missing ')'")
		}
		e.i++
		return v
	case t.Text == "!":
		return b2i(e.unary() == 0)
	case t.Text == "~":
		return ^e.unary()
	case t.Text == "-":
		return -e.unary()
	case t.Text == "+":
		return e.unary()
	}
	e.i--
	return e.fail(fmt.Sprintf("unexpected %q", t.Text))
}
