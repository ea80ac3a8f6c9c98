// Package lexer splits P4_16 source text into tokens with positions.
//
// Keywords are returned as Ident tokens (the parser knows which names are
// reserved); `>` is never merged into `>>` here so that nested type
// arguments such as register<bit<8>> parse — the parser joins adjacent `>`
// tokens into the shift operator.
package lexer

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// Kind is a token kind.
type Kind int

const (
	EOF    Kind = iota
	Ident       // identifiers and keywords
	Int         // integer literal; Token.Int holds the parsed literal
	String      // string literal; Token.Text holds the unquoted value
	Punct       // operators and punctuation; Token.Text holds it
)

func (k Kind) String() string {
	return [...]string{"end of file", "identifier", "integer", "string", "punctuation"}[k]
}

// IntValue is a parsed integer literal.
type IntValue struct {
	Value  *big.Int
	Width  int // 0 when the literal has no width prefix
	Signed bool
}

// Token is one lexical token.
type Token struct {
	Kind Kind
	Text string // source text (for String: the unquoted, unescaped value)
	Pos  ast.Pos
	// BOL is true when the token is the first on its line (after
	// continuation lines are joined); the preprocessor uses it to find
	// directives and their ends.
	BOL bool
	// Space is true when whitespace or a comment precedes the token on its line.
	Space bool
	Int   *IntValue
}

func (t Token) String() string {
	switch t.Kind {
	case EOF:
		return "end of file"
	case String:
		return fmt.Sprintf("%q", t.Text)
	}
	return t.Text
}

// Error is a lexical error.
type Error struct {
	Pos ast.Pos
	Msg string
}

// puncts lists punctuation, longest first within each leading character.
var puncts = []string{
	"&&&", "|+|", "|-|", "...",
	"&&", "||", "==", "!=", "<=", ">=", "<<", "++", "..", "::",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
	"+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "<", ">", "=",
	"(", ")", "{", "}", "[", "]", ",", ";", ":", ".", "?", "@", "#",
}

// punctsByFirst lists, for each first byte, the punctuation starting with
// it, longest first.
var punctsByFirst = func() [256][]string {
	var t [256][]string
	for _, p := range puncts {
		t[p[0]] = append(t[p[0]], p)
	}
	return t
}()

// matchPunct returns the longest punctuation at the start of b, or "".
func matchPunct(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	for _, p := range punctsByFirst[b[0]] {
		if len(b) >= len(p) && string(b[:len(p)]) == p {
			return p
		}
	}
	return ""
}

// Lex returns the tokens of src (ending with an EOF token) and the lexical
// errors found. file is recorded in every position.
func Lex(file string, src []byte) ([]Token, []Error) {
	l := &lexer{file: file, src: src, line: 1, col: 1, bol: true, toks: make([]Token, 0, len(src)/3+16)}
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		l.i = 3 // a UTF-8 byte order mark is not part of the program
	}
	l.run()
	return l.toks, l.errs
}

type lexer struct {
	file      string
	src       []byte
	i         int
	line, col int
	bol       bool
	space     bool
	toks      []Token
	errs      []Error
}

func (l *lexer) pos() ast.Pos { return ast.Pos{File: l.file, Line: l.line, Col: l.col} }

func (l *lexer) errorf(p ast.Pos, format string, args ...any) {
	l.errs = append(l.errs, Error{Pos: p, Msg: fmt.Sprintf(format, args...)})
}

// advance moves over n bytes, tracking lines and columns.
func (l *lexer) advance(n int) {
	for k := 0; k < n && l.i < len(l.src); k++ {
		if l.src[l.i] == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
		l.i++
	}
}

func (l *lexer) peek(off int) byte {
	if l.i+off < len(l.src) {
		return l.src[l.i+off]
	}
	return 0
}

func isLetter(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func (l *lexer) emit(t Token) {
	t.BOL = l.bol
	t.Space = l.space
	l.bol = false
	l.space = false
	l.toks = append(l.toks, t)
}

func (l *lexer) run() {
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == '\n':
			l.advance(1)
			l.bol = true
			l.space = false
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.advance(1)
			l.space = true
		case c == '\\' && (l.peek(1) == '\n' || l.peek(1) == '\r' && l.peek(2) == '\n'):
			// Line continuation: the next line belongs to this one.
			if l.peek(1) == '\r' {
				l.advance(1)
			}
			l.advance(2)
			l.space = true
		case c == '/' && l.peek(1) == '/':
			for l.i < len(l.src) && l.src[l.i] != '\n' {
				l.advance(1)
			}
			l.space = true
		case c == '/' && l.peek(1) == '*':
			p := l.pos()
			l.advance(2)
			for l.i < len(l.src) && !(l.src[l.i] == '*' && l.peek(1) == '/') {
				l.advance(1)
			}
			if l.i >= len(l.src) {
				l.errorf(p, "unterminated comment")
			} else {
				l.advance(2)
			}
			l.space = true
		case isLetter(c):
			p := l.pos()
			start := l.i
			for l.i < len(l.src) && (isLetter(l.src[l.i]) || isDigit(l.src[l.i])) {
				l.advance(1)
			}
			l.emit(Token{Kind: Ident, Text: string(l.src[start:l.i]), Pos: p})
		case isDigit(c):
			l.number()
		case c == '"':
			l.str()
		default:
			p := l.pos()
			if s := matchPunct(l.src[l.i:]); s != "" {
				l.advance(len(s))
				l.emit(Token{Kind: Punct, Text: s, Pos: p})
				continue
			}
			if c > ' ' && c < 0x7f {
				// A stray character is a token of its own: free-form
				// annotation bodies may hold any (`@note(that's it)`), and
				// the parser rejects it anywhere else.
				l.advance(1)
				l.emit(Token{Kind: Punct, Text: string(c), Pos: p})
				continue
			}
			l.errorf(p, "unexpected character %q", c)
			l.advance(1)
		}
	}
	l.bol = true
	l.toks = append(l.toks, Token{Kind: EOF, Pos: l.pos(), BOL: true})
}

func (l *lexer) str() {
	p := l.pos()
	l.advance(1)
	var b strings.Builder
	for {
		if l.i >= len(l.src) {
			l.errorf(p, "unterminated string literal")
			break
		}
		c := l.src[l.i]
		if c == '"' {
			l.advance(1)
			break
		}
		if c == '\\' && l.i+1 < len(l.src) {
			e := l.src[l.i+1]
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\n':
			default:
				b.WriteByte(e)
			}
			l.advance(2)
			continue
		}
		b.WriteByte(c)
		l.advance(1)
	}
	l.emit(Token{Kind: String, Text: b.String(), Pos: p})
}

// number lexes [width(w|s)][-]value where value is decimal, 0x, 0o, 0d or
// 0b with optional '_' separators.
func (l *lexer) number() {
	p := l.pos()
	start := l.i
	for l.i < len(l.src) && (isLetter(l.src[l.i]) || isDigit(l.src[l.i])) {
		l.advance(1)
	}
	// A signed width literal may carry a sign after the prefix: 16s-3.
	word := string(l.src[start:l.i])
	if n := len(word); n > 1 && word[n-1] == 's' && allDigits(word[:n-1]) && l.peek(0) == '-' && isDigit(l.peek(1)) {
		l.advance(1)
		for l.i < len(l.src) && (isLetter(l.src[l.i]) || isDigit(l.src[l.i])) {
			l.advance(1)
		}
	}
	text := string(l.src[start:l.i])
	v, err := ParseInt(text)
	if err != nil {
		l.errorf(p, "%s", err)
		v = &IntValue{Value: new(big.Int)}
	}
	l.emit(Token{Kind: Int, Text: text, Pos: p, Int: v})
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// ParseInt parses a P4 integer literal: 42, 1_000, 0x2A, 0b101, 0o17,
// 0d42, 8w5, 8w0xFF, 16s5, 16s-3. The value is returned as written; the
// checker wraps it to its width.
func ParseInt(text string) (*IntValue, error) {
	v := &IntValue{}
	body := text
	// Width prefix: digits followed by w or s (and not a base prefix 0x...).
	for i := 0; i < len(text); i++ {
		c := text[i]
		if isDigit(c) {
			continue
		}
		if (c == 'w' || c == 's') && i > 0 {
			w, ok := new(big.Int).SetString(text[:i], 10)
			if !ok || !w.IsInt64() || w.Int64() <= 0 || w.Int64() > 1<<20 {
				return nil, fmt.Errorf("invalid width in integer literal %q", text)
			}
			v.Width = int(w.Int64())
			v.Signed = c == 's'
			body = text[i+1:]
		}
		break
	}
	neg := false
	if strings.HasPrefix(body, "-") {
		neg = true
		body = body[1:]
	}
	base := 10
	prefixed := false
	if len(body) > 2 && body[0] == '0' {
		prefixed = true
		switch body[1] {
		case 'x', 'X':
			base, body = 16, body[2:]
		case 'b', 'B':
			base, body = 2, body[2:]
		case 'o', 'O':
			base, body = 8, body[2:]
		case 'd', 'D':
			base, body = 10, body[2:]
		default:
			prefixed = false
		}
	}
	clean := strings.ReplaceAll(body, "_", "")
	// Like p4c's lexer, an underscore may follow a base prefix (0x_0A).
	if clean == "" || !prefixed && strings.HasPrefix(body, "_") {
		return nil, fmt.Errorf("invalid integer literal %q", text)
	}
	n, ok := new(big.Int).SetString(clean, base)
	if !ok {
		return nil, fmt.Errorf("invalid integer literal %q", text)
	}
	if neg {
		n.Neg(n)
	}
	v.Value = n
	return v, nil
}
