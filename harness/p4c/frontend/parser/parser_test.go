package parser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
	"github.com/grid-ina/grid/harness/p4c/frontend/diag"
	"github.com/grid-ina/grid/harness/p4c/frontend/lexer"
)

func parse(t *testing.T, src string) (*ast.Program, *diag.List) {
	t.Helper()
	toks, errs := lexer.Lex("t.p4", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("lex: %v", errs)
	}
	d := &diag.List{Sources: diag.Sources{"t.p4": []byte(src)}}
	return Parse(toks, d), d
}

// exprOf parses `const T x = EXPR;` preceded by decls and returns EXPR.
func exprOf(t *testing.T, decls, e string) ast.Expr {
	t.Helper()
	prog, d := parse(t, decls+"\nconst bit<8> x = "+e+";")
	if d.HasErrors() {
		t.Fatalf("%s: %v", e, d)
	}
	return prog.Decls[len(prog.Decls)-1].(*ast.ConstDecl).Value
}

func TestOperatorPrecedenceFollowsP4(t *testing.T) {
	cases := map[string]string{
		"a + b * c":                    "(a + (b * c))",
		"a - b - c":                    "((a - b) - c)",
		"a << 1 + b":                   "(a << (1 + b))",
		"a & b == c":                   "((a & b) == c)", // bitwise binds tighter than comparison in P4
		"a | b ^ c & d":                "(a | (b ^ (c & d)))",
		"a == b && c < d":              "((a == b) && (c < d))",
		"a || b && c":                  "(a || (b && c))",
		"a ++ b + c":                   "((a ++ b) + c)",
		"a |+| b |-| c":                "((a |+| b) |-| c)",
		"!a && ~b == -c":               "(!a && (~b == -c))",
		"c ? a : b ? d : e":            "(c ? a : (b ? d : e))",
		"a >> 2 > b":                   "((a >> 2) > b)",
		"x[7:0] ++ y.f[3]":             "(x[7:0] ++ y.f[3])",
		"(bit<8>)a + b":                "((bit<8>)a + b)",
		"(a) + b":                      "(a + b)",
		"(T)a":                         "(T)a",
		"f<bit<8>>(a) + 1":             "(f<bit<8>>(a) + 1)",
		"a < b && c > d":               "((a < b) && (c > d))",
		".top + 1":                     "(.top + 1)",
		"{a, b}":                       "{a, b}",
		"{f = 1, g = a}":               "{f = 1, g = a}",
		"h.isValid() && t.apply().hit": "(h.isValid() && t.apply().hit)",
	}
	for in, want := range cases {
		got := ast.ExprString(exprOf(t, "typedef bit<8> T;", in))
		if got != want {
			t.Errorf("%s parsed as %s, want %s", in, got, want)
		}
	}
}

func TestParsesControlWithTableAndSwitch(t *testing.T) {
	src := `
control c(inout H h, inout standard_metadata_t sm) {
    @name("c.count") counter(32w16, CounterType.packets) cnt;
    action set(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = {
            h.eth.dst : exact @name("dst");
            h.ip.dst  : lpm;
        }
        actions = { set; @defaultonly NoAction; }
        const default_action = NoAction();
        size = 1024;
        counters = direct_counter(CounterType.packets);
        const entries = {
            (0x1, 10.. 20) : set(1);
            priority = 3 : (_, 0x0a000000 &&& 0xff000000) : set(2);
            (default, _) : NoAction();
        }
    }
    apply {
        switch (t.apply().action_run) {
            set: { cnt.count(0); }
            NoAction:
            default: { exit; }
        }
        h.eth.dst = h.eth.src;
        h.stack.push_front(1);
        bit<8> tmp = 8w1;
        H2 v;
        x_t[3] arr;
    }
}`
	prog, d := parse(t, src)
	if d.HasErrors() {
		t.Fatal(d)
	}
	c := prog.Decls[0].(*ast.ControlDecl)
	if len(c.Locals) != 3 {
		t.Fatalf("locals = %d, want 3", len(c.Locals))
	}
	inst := c.Locals[0].(*ast.InstanceDecl)
	if s, _ := inst.Annos.StringArg("name"); s != "c.count" {
		t.Errorf("instance annotation lost: %q", s)
	}
	tbl := c.Locals[2].(*ast.TableDecl)
	if len(tbl.Keys) != 2 || tbl.Keys[0].Annos.Get("name") == nil || tbl.Keys[1].MatchKind.Name != "lpm" {
		t.Errorf("keys parsed wrongly: %+v", tbl.Keys)
	}
	if len(tbl.Actions) != 2 || tbl.Actions[1].Annos.Get("defaultonly") == nil || tbl.Actions[0].HasParens {
		t.Errorf("actions parsed wrongly")
	}
	if !tbl.DefaultActionConst || tbl.DefaultAction.Name.Name != "NoAction" || !tbl.EntriesConst || len(tbl.Entries) != 3 {
		t.Errorf("default action / entries parsed wrongly")
	}
	if e := tbl.Entries[1]; e.Priority == nil || len(e.Keys) != 2 {
		t.Errorf("entry with priority parsed wrongly")
	} else if b, ok := e.Keys[1].(*ast.Binary); !ok || b.Op != ast.OpMask {
		t.Errorf("mask keyset parsed as %T", e.Keys[1])
	}
	if r, ok := tbl.Entries[0].Keys[1].(*ast.Binary); !ok || r.Op != ast.OpRange {
		t.Errorf("range keyset parsed as %T", tbl.Entries[0].Keys[1])
	}
	if tbl.Size == nil || len(tbl.Custom) != 1 || tbl.Custom[0].Name != "counters" {
		t.Errorf("size/custom properties parsed wrongly")
	}
	sw := c.Apply.Stmts[0].(*ast.SwitchStmt)
	if len(sw.Cases) != 3 || sw.Cases[1].Body != nil {
		t.Errorf("switch fall-through case parsed wrongly")
	}
	for i, want := range []string{"*ast.DeclStmt", "*ast.DeclStmt", "*ast.DeclStmt"} {
		if got := fmt.Sprintf("%T", c.Apply.Stmts[3+i]); got != want {
			t.Errorf("statement %d is %s, want %s", 3+i, got, want)
		}
	}
}

func TestParsesParserSelectAndGenerics(t *testing.T) {
	src := `
extern register<T> { register(bit<32> size); void read(out T r, in bit<32> i); }
parser p(packet_in b, out H h) {
    register<bit<8>>(4) r;
    state start {
        b.extract(h.eth);
        transition select(h.eth.type, b.lookahead<bit<8>>()) {
            (0x800, 4): ipv4;
            (0x86dd &&& 0xffff, _): accept;
            default: reject;
        }
    }
    state ipv4 { transition accept; }
}`
	prog, d := parse(t, src)
	if d.HasErrors() {
		t.Fatal(d)
	}
	p := prog.Decls[1].(*ast.ParserDecl)
	sel := p.States[0].Transition.Select
	if len(sel.Exprs) != 2 || len(sel.Cases) != 3 || len(sel.Cases[0].Keys) != 2 || len(sel.Cases[2].Keys) != 1 {
		t.Errorf("select parsed wrongly: %d exprs, %d cases", len(sel.Exprs), len(sel.Cases))
	}
	call := sel.Exprs[1].(*ast.Call)
	if len(call.TypeArgs) != 1 {
		t.Errorf("lookahead<bit<8>>() type argument lost")
	}
	inst := p.Locals[0].(*ast.InstanceDecl)
	if nt := inst.Type.(*ast.NamedType); len(nt.Args) != 1 {
		t.Errorf("register<bit<8>> type argument lost")
	}
}

func TestSyntaxErrorsRecoverPerDeclaration(t *testing.T) {
	src := `header h_t { bit<8> f }
const bit<8> ok = 1;
control c() { apply { x = ; } }
struct s_t { bit<8> g; }
`
	prog, d := parse(t, src)
	if d.ErrorCount() != 2 {
		t.Fatalf("got %d errors, want 2:\n%v", d.ErrorCount(), d)
	}
	if got := d.Diags[0].String(); got != `t.p4:1:23: error: syntax error, unexpected "}", expecting ";"` {
		t.Errorf("first error: %s", got)
	}
	if got := d.Diags[1].String(); got != `t.p4:3:27: error: syntax error, unexpected ";", expecting an expression` {
		t.Errorf("second error: %s", got)
	}
	var names []string
	for _, decl := range prog.Decls {
		names = append(names, decl.DeclName())
	}
	if strings.Join(names, ",") != "ok,s_t" {
		t.Errorf("declarations kept after recovery: %v, want ok,s_t", names)
	}
}

func TestNestingDepthIsBounded(t *testing.T) {
	src := "const bit<8> x = " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000) + ";"
	_, d := parse(t, src)
	if !d.HasErrors() || !strings.Contains(d.Diags[0].Msg, "nested too deeply") {
		t.Errorf("deep nesting not rejected: %v", d)
	}
}

func TestCompoundAssignmentIsMarked(t *testing.T) {
	_, d := parse(t, "control c() { apply { x |+|= 1; } }")
	if !d.HasErrors() {
		t.Error("|+|= is not a P4 operator and must be a syntax error")
	}
	prog, d := parse(t, "control c() { apply { x += 1; } }")
	if d.HasErrors() {
		t.Fatal(d)
	}
	a := prog.Decls[0].(*ast.ControlDecl).Apply.Stmts[0].(*ast.AssignStmt)
	if !a.Compound || a.Op != ast.OpAdd {
		t.Errorf("x += 1 parsed as %+v", a)
	}
}

// Nested speculative parses (casts inside widths inside casts) are
// memoised; without that this input takes exponential time.
func TestNestedCastsInWidthsParseInLinearTime(t *testing.T) {
	e := strings.Repeat("(bit<(", 40) + "1" + strings.Repeat(")>)1", 40)
	got := ast.ExprString(exprOf(t, "", e))
	if !strings.HasPrefix(got, "(bit<(bit<") {
		t.Errorf("parsed as %s", got[:min(len(got), 40)])
	}
}
