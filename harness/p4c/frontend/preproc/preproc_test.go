package preproc

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/p4c/frontend/diag"
	"github.com/grid-ina/grid/harness/p4c/frontend/lexer"
)

// run preprocesses main.p4 from files and returns the output tokens as
// text and the diagnostics.
func run(t *testing.T, files map[string]string, opts Options) ([]lexer.Token, string, *diag.List) {
	t.Helper()
	opts.ReadFile = func(path string) ([]byte, error) {
		if s, ok := files[path]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	if opts.StdInclude == nil {
		opts.StdInclude = func(name string) ([]byte, bool) {
			if name == "std.p4" {
				return []byte("std_decl"), true
			}
			return nil, false
		}
	}
	d := &diag.List{}
	toks := Preprocess("dir/main.p4", []byte(files["dir/main.p4"]), opts, d)
	var parts []string
	for _, tk := range toks {
		if tk.Kind != lexer.EOF {
			parts = append(parts, tk.Text)
		}
	}
	return toks, strings.Join(parts, " "), d
}

func TestObjectAndFunctionLikeMacrosExpand(t *testing.T) {
	src := `#define WIDTH 16
#define IS_CLONE(m) (m.instance_type == 1)
#define NESTED WIDTH + 1
bit<WIDTH> x = NESTED;
if (IS_CLONE(std_meta)) {}
#undef WIDTH
WIDTH
`
	_, out, d := run(t, map[string]string{"dir/main.p4": src}, Options{})
	if d.HasErrors() {
		t.Fatal(d)
	}
	want := "bit < 16 > x = 16 + 1 ; if ( ( std_meta . instance_type == 1 ) ) { } WIDTH"
	if out != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

// ## pastes tokens (count-min sketches name their registers so); its
// operands are the arguments as written, not expanded first.
func TestTokenPastingJoinsNeighbours(t *testing.T) {
	src := `#define N 3
#define REG(i) register<bit<32>>(N) sketch ## i
#define CAT(a, b) a ## b
REG(0);
CAT(N, 1) CAT(x, N) CAT(8, w5)
`
	_, out, d := run(t, map[string]string{"dir/main.p4": src}, Options{})
	if d.HasErrors() {
		t.Fatal(d)
	}
	want := "register < bit < 32 > > ( 3 ) sketch0 ; N1 xN 8w5"
	if out != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	_, _, d = run(t, map[string]string{"dir/main.p4": "#define BAD(a) a ## +\nBAD(x)\n"}, Options{})
	if !d.HasErrors() {
		t.Error("pasting x and + gave no error")
	}
}

func TestExpandedTokensKeepTheUseSitePosition(t *testing.T) {
	src := "#define PORT 7\n\n  x = PORT;\n"
	toks, _, _ := run(t, map[string]string{"dir/main.p4": src}, Options{})
	for _, tk := range toks {
		if tk.Text == "7" && (tk.Pos.Line != 3 || tk.Pos.Col != 7 || tk.Pos.File != "dir/main.p4") {
			t.Errorf("expansion of PORT at %v, want dir/main.p4:3:7", tk.Pos)
		}
	}
}

func TestConditionalsSelectBranches(t *testing.T) {
	src := `#define V 20200408
#if V >= 20200408 && defined(V)
new
#elif V > 1
mid
#else
old
#endif
#ifdef UNDEFINED
skipped
#ifndef ALSO
nested_skipped
#endif
#else
taken
#endif
#if (1 << 3) == 8 ? !0 : 0
shifts
#endif
#ifndef V
no
#endif
`
	_, out, d := run(t, map[string]string{"dir/main.p4": src}, Options{})
	if d.HasErrors() {
		t.Fatal(d)
	}
	if out != "new taken shifts" {
		t.Errorf("got %q, want %q", out, "new taken shifts")
	}
}

func TestIncludesResolveRelativeThenDirsThenStandard(t *testing.T) {
	files := map[string]string{
		"dir/main.p4":    "#include \"local.p4\"\n#include <lib.p4>\n#include <std.p4>\n#include \"/abs/x.p4\"\nend\n",
		"/abs/x.p4":      "abs_decl\n",
		"dir/local.p4":   "local_decl\n",
		"inc/lib.p4":     "#include \"sibling.p4\"\n",
		"inc/sibling.p4": "sibling_decl\n",
	}
	toks, out, d := run(t, files, Options{IncludeDirs: []string{"inc"}})
	if d.HasErrors() {
		t.Fatal(d)
	}
	if out != "local_decl sibling_decl std_decl abs_decl end" {
		t.Errorf("got %q", out)
	}
	if toks[0].Pos.File != "dir/local.p4" || toks[1].Pos.File != "inc/sibling.p4" || toks[2].Pos.File != StdPath("std.p4") {
		t.Errorf("positions do not name the included files: %v %v %v", toks[0].Pos, toks[1].Pos, toks[2].Pos)
	}
	if d.Sources["dir/local.p4"] == nil {
		t.Error("included sources must be recorded for diagnostics")
	}
}

func TestPreprocessorErrorsNameFileAndLine(t *testing.T) {
	cases := map[string]string{
		"#include \"missing.p4\"\n":  "dir/main.p4:1:10: error: cannot find include file missing.p4",
		"\n#error stop here\n":       "dir/main.p4:2:1: error: #error stop here",
		"#if 1\nx\n":                 "dir/main.p4:1:1: error: #if without matching #endif",
		"#endif\n":                   "dir/main.p4:1:1: error: #endif without #if",
		"#frobnicate\n":              "dir/main.p4:1:2: error: unknown preprocessor directive #frobnicate",
		"#define F(a, b) a\nF(1)\n":  "dir/main.p4:2:1: error: macro F expects 2 arguments, got 1",
		"#if 1 +\n#endif\n":          "dir/main.p4:1:2: error: invalid #if expression: unexpected end of expression",
		"#include \"dir/main.p4\"\n": "maxdepth",
	}
	for src, want := range cases {
		files := map[string]string{"dir/main.p4": src, "dir/dir/main.p4": "#include \"main.p4\"\n"}
		_, _, d := run(t, files, Options{})
		if !d.HasErrors() {
			t.Errorf("%q: no error", src)
			continue
		}
		if want == "maxdepth" {
			if !strings.Contains(d.Diags[0].Msg, "nested too deeply") {
				t.Errorf("%q: got %s, want the include depth error", src, d.Diags[0])
			}
			continue
		}
		if got := d.Diags[0].String(); got != want {
			t.Errorf("%q:\n got  %s\n want %s", src, got, want)
		}
	}
}

func TestPredefinedMacros(t *testing.T) {
	_, out, _ := run(t, map[string]string{"dir/main.p4": "#ifdef DEBUG\nA\n#endif\nLEVEL\n"}, Options{Defines: map[string]string{"DEBUG": "", "LEVEL": "3"}})
	if out != "A 3" {
		t.Errorf("got %q, want %q", out, "A 3")
	}
}

func TestExponentialMacroExpansionStopsWithOneError(t *testing.T) {
	var src strings.Builder
	src.WriteString("#define A0 x x\n")
	for i := 1; i < 30; i++ {
		fmt.Fprintf(&src, "#define A%d A%d A%d\n", i, i-1, i-1)
	}
	src.WriteString("A29\n")
	_, _, d := run(t, map[string]string{"dir/main.p4": src.String()}, Options{})
	if d.ErrorCount() != 1 || !strings.Contains(d.Diags[0].Msg, "macro expansion of A") {
		t.Errorf("want one expansion-limit error, got:\n%v", d)
	}
}

// The embedded standard headers are lexed once and cached; their
// directives still see each compilation's macros, and a different text
// under the same name is not served from the cache.
func TestCachedStandardHeaderStillFollowsMacrosAndItsText(t *testing.T) {
	header := "#ifdef NEW_API\nnew_decl 8w7\n#else\nold_decl 8w7\n#endif\n"
	std := func(text *string) func(string) ([]byte, bool) {
		return func(name string) ([]byte, bool) {
			if name == "cached_std.p4" {
				return []byte(*text), true
			}
			return nil, false
		}
	}
	files := map[string]string{"dir/main.p4": "#include <cached_std.p4>\n"}
	for range 2 {
		_, got, d := run(t, files, Options{StdInclude: std(&header), Defines: map[string]string{"NEW_API": ""}})
		if d.HasErrors() || got != "new_decl 8w7" {
			t.Fatalf("with NEW_API: got %q (%v)", got, d.Err())
		}
		toks, got, _ := run(t, files, Options{StdInclude: std(&header)})
		if got != "old_decl 8w7" {
			t.Fatalf("without NEW_API: got %q", got)
		}
		// Integer values are each compilation's own: the previous round's
		// change must not show.
		if toks[1].Int == nil || toks[1].Int.Value.Int64() != 7 {
			t.Fatalf("8w7 lexed as %+v", toks[1].Int)
		}
		toks[1].Int.Value.SetInt64(99)
	}
	changed := "changed_decl\n"
	if _, got, _ := run(t, files, Options{StdInclude: std(&changed)}); got != "changed_decl" {
		t.Fatalf("a new text under the cached name: got %q", got)
	}
}
