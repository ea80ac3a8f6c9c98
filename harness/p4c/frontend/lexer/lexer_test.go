package lexer

import (
	"math/big"
	"slices"
	"testing"
)

func TestParseIntLiteralForms(t *testing.T) {
	cases := []struct {
		text   string
		value  string
		width  int
		signed bool
	}{
		{"42", "42", 0, false},
		{"1_000", "1000", 0, false},
		{"0x2A", "42", 0, false},
		{"0X2a", "42", 0, false},
		{"0b101", "5", 0, false},
		{"0o17", "15", 0, false},
		{"0d42", "42", 0, false},
		{"8w5", "5", 8, false},
		{"8w0xFF", "255", 8, false},
		{"32w0b1_0000", "16", 32, false},
		{"16s5", "5", 16, true},
		{"16s-3", "-3", 16, true},
		{"48w0xffff_ffff_ffff", "281474976710655", 48, false},
		{"16w0x_0A_0B", "2571", 16, false},
	}
	for _, c := range cases {
		v, err := ParseInt(c.text)
		if err != nil {
			t.Errorf("%s: %v", c.text, err)
			continue
		}
		want, _ := new(big.Int).SetString(c.value, 10)
		if v.Value.Cmp(want) != 0 || v.Width != c.width || v.Signed != c.signed {
			t.Errorf("%s = %s w%d s%v; want %s w%d s%v", c.text, v.Value, v.Width, v.Signed, c.value, c.width, c.signed)
		}
	}
	for _, bad := range []string{"0x", "0x_", "8wz", "0b102", "0w5", "12abc"} {
		if _, err := ParseInt(bad); err == nil {
			t.Errorf("%s: accepted, want an error", bad)
		}
	}
}

func TestLexPositionsCommentsAndLineStarts(t *testing.T) {
	src := "a /* c\n */ b // x\n  #define\n\"s\\\"q\" >>\n"
	toks, errs := Lex("f.p4", []byte(src))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	type want struct {
		kind      Kind
		text      string
		line, col int
		bol       bool
	}
	exp := []want{
		{Ident, "a", 1, 1, true},
		{Ident, "b", 2, 5, false},
		{Punct, "#", 3, 3, true},
		{Ident, "define", 3, 4, false},
		{String, `s"q`, 4, 1, true},
		{Punct, ">", 4, 8, false},
		{Punct, ">", 4, 9, false},
		{EOF, "", 5, 1, true},
	}
	if len(toks) != len(exp) {
		t.Fatalf("got %d tokens %v, want %d", len(toks), toks, len(exp))
	}
	for i, w := range exp {
		g := toks[i]
		if g.Kind != w.kind || g.Text != w.text || g.Pos.Line != w.line || g.Pos.Col != w.col || g.BOL != w.bol {
			t.Errorf("token %d = %v %q %d:%d bol=%v; want %v %q %d:%d bol=%v", i, g.Kind, g.Text, g.Pos.Line, g.Pos.Col, g.BOL, w.kind, w.text, w.line, w.col, w.bol)
		}
	}
	if toks[6].Space {
		t.Error("the second '>' of '>>' must be marked adjacent (no space)")
	}
}

func TestLexLongestPunctuation(t *testing.T) {
	toks, _ := Lex("f", []byte("a &&& b |+| c |-| d ++ e .. f == g"))
	var ops []string
	for _, tk := range toks {
		if tk.Kind == Punct {
			ops = append(ops, tk.Text)
		}
	}
	want := []string{"&&&", "|+|", "|-|", "++", "..", "=="}
	if len(ops) != len(want) {
		t.Fatalf("got %v, want %v", ops, want)
	}
	for i := range want {
		if ops[i] != want[i] {
			t.Errorf("op %d = %q, want %q", i, ops[i], want[i])
		}
	}
}

func TestLexReportsUnterminatedCommentAndString(t *testing.T) {
	for _, src := range []string{"/* open", "\"open\n", "a \x01 b"} {
		if _, errs := Lex("f", []byte(src)); len(errs) == 0 {
			t.Errorf("%q: no lexical error reported", src)
		}
	}
}

// String literals may span lines (p4c's do), and a stray printable
// character is a token of its own, as free-form annotation bodies need.
func TestLexMultiLineStringsAndStrayCharacters(t *testing.T) {
	toks, errs := Lex("f", []byte("\"two\nlines\" that's"))
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	var got []string
	for _, tk := range toks[:len(toks)-1] {
		got = append(got, tk.Text)
	}
	if want := []string{"two\nlines", "that", "'", "s"}; !slices.Equal(got, want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
	if toks[2].Pos.Line != 2 {
		t.Errorf("the token after a two-line string is on line %d, want 2", toks[2].Pos.Line)
	}
}

// FuzzLex checks that lexing never panics, always ends with EOF and
// produces positions in source order.
func FuzzLex(f *testing.F) {
	for _, s := range []string{"8w5 + 0x1F", "/* x */ a // b\n\"s\\n\"", "16s-3 |+| 1_000", "#include <v1model.p4>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		toks, _ := Lex("f", src)
		if len(toks) == 0 || toks[len(toks)-1].Kind != EOF {
			t.Fatal("token list must end with EOF")
		}
		for i := 1; i < len(toks); i++ {
			a, b := toks[i-1].Pos, toks[i].Pos
			if b.Line < a.Line || b.Line == a.Line && b.Col <= a.Col && toks[i].Kind != EOF {
				t.Fatalf("token %d at %v precedes token %d at %v", i, b, i-1, a)
			}
		}
	})
}
