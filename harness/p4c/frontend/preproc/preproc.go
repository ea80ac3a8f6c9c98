// Package preproc implements the C-like preprocessor P4 programs use, on
// tokens: #include <...> / "..." (the embedded core.p4 and v1model.p4
// serve the standard headers), #define (object-like and function-like
// macros), #undef, #if / #ifdef / #ifndef / #elif / #else / #endif with
// defined() and integer expressions, #error and #warning. Every output
// token keeps the file, line and column it came from; tokens produced by a
// macro expansion take the position of the macro's use.
package preproc

import (
	"bytes"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
	"github.com/grid-ina/grid/harness/p4c/frontend/diag"
	"github.com/grid-ina/grid/harness/p4c/frontend/lexer"
)

// Options configure the preprocessor.
type Options struct {
	// IncludeDirs are searched, in order, for #include "x" (after the
	// including file's directory) and #include <x> (before the embedded
	// standard headers).
	IncludeDirs []string
	// Defines are predefined object-like macros (like -DNAME=VALUE); an
	// empty value defines the name as 1.
	Defines map[string]string
	// ReadFile reads included files; nil means os.ReadFile.
	ReadFile func(path string) ([]byte, error)
	// StdInclude returns the embedded standard header with the given name
	// (core.p4, v1model.p4); nil means no standard headers.
	StdInclude func(name string) ([]byte, bool)
}

// maxExpansion bounds the number of tokens macro expansion may produce
// in one file, so that exponentially growing macros fail quickly.
const maxExpansion = 1 << 19

// maxIncludeDepth bounds #include nesting (a file including itself
// without a guard would otherwise never end).
const maxIncludeDepth = 64

type macro struct {
	name   string
	fn     bool     // function-like
	params []string // function-like only
	body   []lexer.Token
}

type cond struct {
	pos    ast.Pos
	active bool // the current branch is emitted
	taken  bool // some branch of this #if has been emitted
	outer  bool // the enclosing region is emitted
	inElse bool
}

type pp struct {
	opts   Options
	diags  *diag.List
	macros map[string]*macro
	out    []lexer.Token
	depth  int
	// expanded counts tokens produced by macro expansion; over
	// maxExpansion, expansion stops with one error.
	expanded     int
	expandFailed bool
}

// Preprocess preprocesses src (the contents of file) and returns the
// resulting tokens, ending with one EOF token. Problems are added to diags;
// the sources of every file read are recorded in diags.Sources.
func Preprocess(file string, src []byte, opts Options, diags *diag.List) []lexer.Token {
	if opts.ReadFile == nil {
		opts.ReadFile = os.ReadFile
	}
	if diags.Sources == nil {
		diags.Sources = diag.Sources{}
	}
	// Most programs include core.p4 and v1model.p4 (about 2000 tokens) and
	// have about one token per 4 bytes: start the output that large.
	p := &pp{opts: opts, diags: diags, macros: map[string]*macro{}, out: make([]lexer.Token, 0, 2048+len(src)/4)}
	for name, val := range opts.Defines {
		if val == "" {
			val = "1"
		}
		toks, _ := lexer.Lex("<command line>", []byte(val))
		p.macros[name] = &macro{name: name, body: toks[:len(toks)-1]}
	}
	p.file(file, src)
	var end ast.Pos
	if n := len(p.out); n > 0 {
		end = p.out[n-1].Pos
	} else {
		end = ast.Pos{File: file, Line: 1, Col: 1}
	}
	p.out = append(p.out, lexer.Token{Kind: lexer.EOF, Pos: end, BOL: true})
	return p.out
}

func (p *pp) file(name string, src []byte) {
	toks, errs := lexer.Lex(name, src)
	for _, e := range errs {
		p.diags.Errorf(e.Pos, "%s", e.Msg)
	}
	p.tokens(name, src, toks)
}

// stdLexed caches the tokens of the embedded standard headers (core.p4,
// v1model.p4), which every compilation includes: lexing is independent of
// the macros in force, so only the directives have to run again.
var stdLexed sync.Map // file name -> *lexedFile

type lexedFile struct {
	src  []byte
	toks []lexer.Token
}

// stdFile preprocesses an embedded standard header from its cached
// tokens (lexed on first use; a different src under the same name is
// lexed afresh and replaces the cache entry).
func (p *pp) stdFile(name string, src []byte) {
	c, ok := stdLexed.Load(name)
	lf, _ := c.(*lexedFile)
	if !ok || !bytes.Equal(lf.src, src) {
		toks, errs := lexer.Lex(name, src)
		if len(errs) > 0 {
			for _, e := range errs {
				p.diags.Errorf(e.Pos, "%s", e.Msg)
			}
			p.tokens(name, src, toks)
			return
		}
		lf = &lexedFile{src: bytes.Clone(src), toks: toks}
		stdLexed.Store(name, lf)
	}
	// Each compilation gets its own copy: the integer values end up in
	// the syntax tree, which later passes may change.
	toks := slices.Clone(lf.toks)
	for i := range toks {
		if iv := toks[i].Int; iv != nil {
			cp := *iv
			cp.Value = new(big.Int).Set(iv.Value)
			toks[i].Int = &cp
		}
	}
	p.tokens(name, src, toks)
}

// tokens preprocesses the lexed tokens of file name (whose text is src).
func (p *pp) tokens(name string, src []byte, toks []lexer.Token) {
	p.diags.Sources[name] = src
	p.out = slices.Grow(p.out, len(toks))
	var conds []cond
	emitting := func() bool { return len(conds) == 0 || conds[len(conds)-1].active }
	i := 0
	for toks[i].Kind != lexer.EOF {
		t := toks[i]
		if t.BOL && t.Kind == lexer.Punct && t.Text == "#" {
			// Directive: everything up to the next line start.
			j := i + 1
			for !toks[j].BOL {
				j++
			}
			p.directive(t, toks[i+1:j], &conds, emitting())
			i = j
			continue
		}
		// A run of ordinary lines up to the next directive.
		j := i + 1
		for toks[j].Kind != lexer.EOF && !(toks[j].BOL && toks[j].Kind == lexer.Punct && toks[j].Text == "#") {
			j++
		}
		if emitting() {
			// Expand straight into the output: no intermediate copy.
			if len(p.macros) == 0 {
				p.out = append(p.out, toks[i:j]...)
			} else {
				p.expandInto(&p.out, toks[i:j], nil)
			}
		}
		i = j
	}
	for _, c := range conds {
		p.diags.Errorf(c.pos, "#if without matching #endif")
	}
}

func (p *pp) directive(hash lexer.Token, line []lexer.Token, conds *[]cond, emitting bool) {
	if len(line) == 0 {
		return // null directive
	}
	name := line[0].Text
	args := line[1:]
	top := func() *cond {
		if len(*conds) == 0 {
			return nil
		}
		return &(*conds)[len(*conds)-1]
	}
	switch name {
	case "ifdef", "ifndef":
		c := cond{pos: hash.Pos, outer: emitting}
		if len(args) == 0 || args[0].Kind != lexer.Ident {
			p.diags.Errorf(line[0].Pos, "#%s needs a macro name", name)
		} else if emitting {
			_, def := p.macros[args[0].Text]
			c.active = def == (name == "ifdef")
			c.taken = c.active
		}
		*conds = append(*conds, c)
		return
	case "if":
		c := cond{pos: hash.Pos, outer: emitting}
		if emitting {
			c.active = p.evalCond(line[0], args)
			c.taken = c.active
		}
		*conds = append(*conds, c)
		return
	case "elif":
		c := top()
		if c == nil || c.inElse {
			p.diags.Errorf(hash.Pos, "#elif without #if")
			return
		}
		if c.outer && !c.taken {
			c.active = p.evalCond(line[0], args)
			c.taken = c.active
		} else {
			c.active = false
		}
		return
	case "else":
		c := top()
		if c == nil || c.inElse {
			p.diags.Errorf(hash.Pos, "#else without #if")
			return
		}
		c.inElse = true
		c.active = c.outer && !c.taken
		c.taken = true
		return
	case "endif":
		if len(*conds) == 0 {
			p.diags.Errorf(hash.Pos, "#endif without #if")
			return
		}
		*conds = (*conds)[:len(*conds)-1]
		return
	}
	if !emitting {
		return // other directives in skipped regions are ignored, even unknown ones
	}
	switch name {
	case "define":
		p.define(line[0], args)
	case "undef":
		if len(args) == 0 || args[0].Kind != lexer.Ident {
			p.diags.Errorf(line[0].Pos, "#undef needs a macro name")
			return
		}
		delete(p.macros, args[0].Text)
	case "include":
		p.include(line[0], args)
	case "error":
		p.diags.Errorf(hash.Pos, "#error %s", joinTokens(args))
	case "warning":
		p.diags.Warnf(hash.Pos, "#warning %s", joinTokens(args))
	case "pragma", "line":
		// Nothing to do: positions are tracked per token.
	default:
		p.diags.Errorf(line[0].Pos, "unknown preprocessor directive #%s", name)
	}
}

func (p *pp) define(kw lexer.Token, args []lexer.Token) {
	if len(args) == 0 || args[0].Kind != lexer.Ident {
		p.diags.Errorf(kw.Pos, "#define needs a macro name")
		return
	}
	m := &macro{name: args[0].Text}
	body := args[1:]
	// Function-like when '(' follows the name without intervening space.
	if len(body) > 0 && body[0].Text == "(" && !body[0].Space && body[0].Kind == lexer.Punct {
		m.fn = true
		k := 1
		for {
			if k >= len(body) {
				p.diags.Errorf(body[0].Pos, "missing ')' in parameter list of macro %s", m.name)
				return
			}
			if body[k].Text == ")" {
				k++
				break
			}
			if body[k].Kind != lexer.Ident && body[k].Text != "..." {
				p.diags.Errorf(body[k].Pos, "invalid parameter %q of macro %s", body[k].Text, m.name)
				return
			}
			m.params = append(m.params, body[k].Text)
			k++
			if k < len(body) && body[k].Text == "," {
				k++
			}
		}
		body = body[k:]
	}
	m.body = body
	p.macros[m.name] = m
}

func (p *pp) include(kw lexer.Token, args []lexer.Token) {
	if len(args) == 0 {
		p.diags.Errorf(kw.Pos, "#include needs a file name")
		return
	}
	var name string
	system := false
	switch {
	case args[0].Kind == lexer.String:
		name = args[0].Text
	case args[0].Text == "<":
		system = true
		var b strings.Builder
		k := 1
		for ; k < len(args) && args[k].Text != ">"; k++ {
			if args[k].Space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(args[k].Text)
		}
		if k == len(args) {
			p.diags.Errorf(args[0].Pos, "missing '>' in #include")
			return
		}
		name = b.String()
	default:
		p.diags.Errorf(args[0].Pos, "#include expects \"FILE\" or <FILE>")
		return
	}
	if p.depth >= maxIncludeDepth {
		p.diags.Errorf(kw.Pos, "#include nested too deeply (more than %d levels): %s", maxIncludeDepth, name)
		return
	}
	var dirs []string
	switch {
	case filepath.IsAbs(name):
		dirs = []string{""}
	case !system:
		dirs = append(dirs, filepath.Dir(kw.Pos.File))
	}
	if !filepath.IsAbs(name) {
		dirs = append(dirs, p.opts.IncludeDirs...)
	}
	for _, d := range dirs {
		path := filepath.Join(d, name)
		if src, err := p.opts.ReadFile(path); err == nil {
			p.depth++
			p.file(path, src)
			p.depth--
			return
		}
	}
	if p.opts.StdInclude != nil {
		if src, ok := p.opts.StdInclude(name); ok {
			p.depth++
			p.stdFile(stdPath(name), src)
			p.depth--
			return
		}
	}
	p.diags.Errorf(args[0].Pos, "cannot find include file %s", name)
}

// stdPath is the file name diagnostics show for an embedded standard header.
func stdPath(name string) string { return "p4include/" + name }

// StdPath reports the file name under which the embedded standard header
// name appears in positions (e.g. "p4include/v1model.p4").
func StdPath(name string) string { return stdPath(name) }

func joinTokens(toks []lexer.Token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && t.Space {
			b.WriteByte(' ')
		}
		if t.Kind == lexer.String {
			fmt.Fprintf(&b, "%q", t.Text)
		} else {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// expand macro-expands toks. active holds the macros being expanded (a
// macro is not expanded again inside its own expansion).
func (p *pp) expand(toks []lexer.Token, active []string) []lexer.Token {
	if len(p.macros) == 0 {
		return toks
	}
	var out []lexer.Token
	p.expandInto(&out, toks, active)
	return out
}

// expandInto appends the expansion of toks to out; it writes into one
// buffer so that nested expansions do not copy their results level by level.
func (p *pp) expandInto(out *[]lexer.Token, toks []lexer.Token, active []string) {
	for i := 0; i < len(toks); i++ {
		if p.expandFailed {
			return
		}
		t := toks[i]
		m := p.macros[t.Text]
		if t.Kind != lexer.Ident || m == nil || slices.Contains(active, m.name) {
			*out = append(*out, t)
			continue
		}
		var body []lexer.Token
		if m.fn {
			if i+1 >= len(toks) || toks[i+1].Text != "(" {
				*out = append(*out, t) // a function-like macro name without arguments is left alone
				continue
			}
			args, end, ok := collectArgs(toks, i+1)
			if !ok {
				p.diags.Errorf(t.Pos, "unterminated argument list of macro %s", m.name)
				*out = append(*out, t)
				continue
			}
			if len(args) == 1 && len(args[0]) == 0 && len(m.params) == 0 {
				args = nil
			}
			if len(args) != len(m.params) {
				p.diags.Errorf(t.Pos, "macro %s expects %d arguments, got %d", m.name, len(m.params), len(args))
				*out = append(*out, t)
				continue
			}
			expanded := make(map[string][]lexer.Token, len(args))
			raw := make(map[string][]lexer.Token, len(args))
			for k, a := range args {
				expanded[m.params[k]] = p.expand(a, active)
				raw[m.params[k]] = a
			}
			for k, b := range m.body {
				if a, isParam := expanded[b.Text]; isParam && b.Kind == lexer.Ident {
					if pasteAt(m.body, k-2) || pasteAt(m.body, k+1) {
						a = raw[b.Text] // operands of ## are not expanded first (C)
					}
					body = append(body, a...)
					continue
				}
				body = append(body, b)
			}
			i = end
		} else {
			body = m.body
		}
		body = p.paste(body)
		p.expanded += len(body)
		if p.expanded > maxExpansion {
			p.diags.Errorf(t.Pos, "macro expansion of %s produces more than %d tokens", m.name, maxExpansion)
			p.expandFailed = true
			return
		}
		placed := make([]lexer.Token, len(body))
		for k, b := range body {
			b.Pos = t.Pos
			b.BOL = false
			placed[k] = b
		}
		p.expandInto(out, placed, append(active[:len(active):len(active)], m.name))
	}
}

// pasteAt reports whether toks[k], toks[k+1] is the ## operator (two
// adjacent # tokens).
func pasteAt(toks []lexer.Token, k int) bool {
	return k >= 0 && k+1 < len(toks) && toks[k].Kind == lexer.Punct && toks[k].Text == "#" &&
		toks[k+1].Kind == lexer.Punct && toks[k+1].Text == "#" && !toks[k+1].Space && !toks[k+1].BOL
}

// paste applies ## in a macro body: the tokens either side become one
// token, lexed again (a ## b is the identifier ab, x ## 1 is x1).
func (p *pp) paste(body []lexer.Token) []lexer.Token {
	var out []lexer.Token
	for k := 0; k < len(body); k++ {
		if !pasteAt(body, k) {
			out = append(out, body[k])
			continue
		}
		if len(out) == 0 || k+2 >= len(body) {
			p.diags.Errorf(body[k].Pos, "'##' cannot be at either end of a macro expansion")
			continue
		}
		left, right := out[len(out)-1], body[k+2]
		toks, errs := lexer.Lex(left.Pos.File, []byte(left.Text+right.Text))
		if len(errs) > 0 || len(toks) != 2 { // one token and EOF
			p.diags.Errorf(body[k].Pos, "pasting %q and %q does not give a valid token", left.Text, right.Text)
			continue
		}
		t := toks[0]
		t.Pos, t.BOL, t.Space = left.Pos, left.BOL, left.Space
		out[len(out)-1] = t
		k += 2
	}
	return out
}

// collectArgs reads a parenthesised, comma-separated argument list starting
// at toks[open] == "(" and returns the arguments and the index of ")".
func collectArgs(toks []lexer.Token, open int) ([][]lexer.Token, int, bool) {
	depth := 0
	var args [][]lexer.Token
	var cur []lexer.Token
	for k := open; k < len(toks); k++ {
		t := toks[k]
		if t.Kind == lexer.Punct {
			switch t.Text {
			case "(", "[", "{":
				depth++
				if depth == 1 {
					continue
				}
			case ")", "]", "}":
				depth--
				if depth == 0 {
					return append(args, cur), k, true
				}
			case ",":
				if depth == 1 {
					args = append(args, cur)
					cur = nil
					continue
				}
			}
		}
		cur = append(cur, t)
	}
	return nil, 0, false
}
