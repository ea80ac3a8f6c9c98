package check

import (
	"math/big"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
	"github.com/grid-ina/grid/harness/p4c/frontend/diag"
	"github.com/grid-ina/grid/harness/p4c/frontend/parser"
	"github.com/grid-ina/grid/harness/p4c/frontend/preproc"
	"github.com/grid-ina/grid/harness/p4c/include"
)

// skeleton is a complete v1model program; %INGRESS% and %DECLS% are
// replaced by each test.
const skeleton = `#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header lbl_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
struct H { eth_t eth; lbl_t[4] labels; }
struct M { bit<32> a; bit<16> b; bit<8> c; }
%DECLS%
parser P(packet_in pkt, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) {
            0x8847: labels;
            0x0800 &&& 0xff00: accept;
        }
    }
    state labels {
        pkt.extract(h.labels.next);
        transition select(h.labels.last.bos) {
            1: accept;
            0: labels;
        }
    }
}
control Vc(inout H h, inout M m) { apply {} }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
%INGRESS%
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control Ck(inout H h, inout M m) { apply {} }
control D(packet_out pkt, in H h) { apply { pkt.emit(h); } }
V1Switch(P(), Vc(), I(), E(), Ck(), D()) main;
`

func compile(t *testing.T, decls, ingress string) (*ast.Program, *diag.List) {
	t.Helper()
	return compileWith(t, Features{}, decls, ingress)
}

func compileWith(t *testing.T, f Features, decls, ingress string) (*ast.Program, *diag.List) {
	t.Helper()
	src := strings.Replace(strings.Replace(skeleton, "%DECLS%", decls, 1), "%INGRESS%", ingress, 1)
	d := &diag.List{}
	toks := preproc.Preprocess("t.p4", []byte(src), preproc.Options{StdInclude: include.Lookup}, d)
	prog := parser.Parse(toks, d)
	if d.HasErrors() {
		t.Fatalf("parse: %v", d)
	}
	Check(prog, d, f)
	return prog, d
}

func mustCompile(t *testing.T, decls, ingress string) *ast.Program {
	t.Helper()
	prog, d := compile(t, decls, ingress)
	if d.HasErrors() {
		t.Fatalf("unexpected errors:\n%v", d)
	}
	return prog
}

func constOf(t *testing.T, prog *ast.Program, name string) *ast.ExprInfo {
	t.Helper()
	c, ok := prog.Lookup(name).(*ast.ConstDecl)
	if !ok {
		t.Fatalf("no constant %s", name)
	}
	return c.Value.Info()
}

func TestConstantFoldingWrapsToTheType(t *testing.T) {
	decls := `
const bit<8> wrapsLiteral = 300;
const M structConst = {c = 3, b = 2, a = 1};
const bit<8> sum = 8w5 + 3;
const int<16> neg = 16s-3;
const bit<16> negAsBits = (bit<16>)16s-3;
const bit<4> truncated = (bit<4>)8w0xAB;
const bit<8> concat = 4w0xA ++ 4w0x5;
const bit<4> slice = 8w0xAB[7:4];
const bit<8> shiftedOut = 8w1 << 9;
const bit<8> satAdd = 8w250 |+| 8w10;
const int<8> satSub = 8s-100 |-| 8s100;
const bit<8> wrapAdd = 8w250 + 8w10;
const bit<8> wrapSub = 8w3 - 8w5;
const int<8> signExtendShift = 8s-128 >> 2;
const bit<32> fromInt = 2 * (1 << 20) + 0x1_0;
const bool cmp = 8w3 < 8w5 && !(4w1 == 4w2);
const bit<8> complement = ~8w0x0F;
const bit<1> fromBool = (bit<1>)true;
const int fromIntDivision = 7 / 2 + 7 % 2;
`
	prog := mustCompile(t, decls, "apply {}")
	want := map[string]string{
		"wrapsLiteral": "44", "sum": "8", "neg": "-3", "negAsBits": "65533", "truncated": "11",
		"concat": "165", "slice": "10", "shiftedOut": "0", "satAdd": "255", "satSub": "-128",
		"wrapAdd": "4", "wrapSub": "254", "signExtendShift": "-32", "fromInt": "2097168",
		"cmp": "true", "complement": "240", "fromBool": "1", "fromIntDivision": "4",
		"structConst": "{1, 2, 3}",
	}
	for name, w := range want {
		info := constOf(t, prog, name)
		if info.Const == nil {
			t.Errorf("%s: not folded", name)
			continue
		}
		if got := info.Const.String(); got != w {
			t.Errorf("%s = %s, want %s", name, got, w)
		}
	}
	if got := constOf(t, prog, "sum").Type.String(); got != "bit<8>" {
		t.Errorf("type of 8w5 + 3 = %s, want bit<8>", got)
	}
}

func TestLiteralThatDoesNotFitWarns(t *testing.T) {
	_, d := compile(t, "const bit<8> big = 256; const bit<8> allOnes = -1;", "apply {}")
	if d.HasErrors() || len(d.Diags) != 1 || d.Diags[0].Severity != diag.Warning || !strings.Contains(d.Diags[0].Msg, "does not fit in bit<8>") {
		t.Errorf("want one 'does not fit' warning, got:\n%v", d)
	}
}

func TestTypeRuleViolationsAreErrors(t *testing.T) {
	cases := []struct{ decls, body, msg string }{
		{"", "apply { m.a = m.b; }", "m.b has type bit<16> but bit<32> is expected"},
		{"", "apply { m.a = m.a + m.b; }", "+: cannot combine bit<32> and bit<16>"},
		{"", "apply { m.c = (bit<8>)(int<16>)m.b; }", "cannot cast int<16> to bit<8> in one step"},
		{"", "apply { m.c = (bit<8>)(bit<16>)(int<16>)(bit<16>)m.c; }", ""},
		{"", "apply { m.a = (bit<32>)(int<8>)m.c; }", "cannot cast int<8> to bit<32> in one step"},
		{"", "apply { bool b = m.c; }", "m.c has type bit<8> but bool is expected"},
		{"", "apply { m.c = ~1; }", "~ cannot be applied to an integer literal of unknown width"},
		{"", "apply { m.a = 1 << m.c; }", "shifting an integer literal of unknown width by a non-constant amount"},
		{"", "apply { m.a = m.a << (int<8>)m.c; }", "the shift amount must be unsigned"},
		{"", "apply { m.c = m.c ++ 1; }", "++: operands must be bit<W> or int<W> values with known widths"},
		{"", "apply { if (m.c == true) {} }", "==: operands have different types bit<8> and bool"},
		{"", "apply { h.eth.setValid(1); }", "setValid: expected 0 arguments, got 1"},
		{"", "apply { h.labels.push_front(m.c); }", "push_front count must be a compile-time integer constant"},
		{"", "apply { m.c = h.eth.dst[48:41]; }", "slice [48:41] is out of range for bit<48>"},
		{"", "apply { m.c = h.labels.next.ttl; }", "h.labels.next is only allowed in parsers"},
		{"", "apply { m.c = m.c / (bit<8>)0; }", ""},
		{"const bit<8> Z = 0;", "apply { m.c = 4 / Z; }", "/: division by zero"},
		{"", "apply { m.a = 5 / 0; }", "/: division by zero"},
		{"", "apply { error e = error.Nope; }", "error.Nope: no such error"},
		{"enum Color { Red }", "apply { Color c = Color.Blue; }", "Color.Blue: enum Color has no member Blue"},
		{"", "apply { exit; return; }", ""},
		{"", "apply { int x = 5; m.c = (bit<8>)x; }", "x: a variable cannot have type int"},
		{"bit<8> f(int n) { return (bit<8>)-n; }", "apply { m.c = f(1); }", "unsupported: n: parameters of type int"},
		{"int g() { return 3; }", "apply { m.c = (bit<8>)g(); }", "unsupported: g(): an integer of unknown width that is not a compile-time constant"},
		{"", "apply { m.c = {8w1, 2}[1]; }", ""},
		{"", "apply { h.eth = {#}; }", "unsupported: the invalid header expression {#}"},
		{"const bool ok = static_assert(8w1 < 8w2, \"order\");", "apply {}", ""},
		{"const bool bad = static_assert(8w2 < 8w1, \"order\");", "apply {}", "static assertion failed: order"},
		{"", "apply { static_assert(m.c == 1); }", "static_assert: the condition must be a compile-time constant"},
		{"control D2(packet_out pkt, in H h, in M m) { apply { pkt.emit(m); } }", "apply {}", "emit: m has type struct M, but only headers"},
		{"bit<8> f(in bit<8> x) { if (x > 1) { return x; } }", "apply {}", "missing return statement"},
		{"", "apply { random(m.c, 0, 255); hash(m.b, HashAlgorithm.crc16, 16w0, {h.eth.dst, m.c}, 16w1024); }", ""},
		{"", "register<bit<8>>(4) r; apply { r.write(0, m.b); }", "m.b has type bit<16> but bit<8> is expected"},
		{"", "register<bit<8>>(4) r; apply { r.read(m.b, 0); }", "register.read: argument m.b has type bit<16> but out parameter result has type bit<8>"},
		{"", "apply { mark_to_drop(); }", ""},
		{"", "apply { clone(CloneType.I2E, 5); }", ""},
		{"", "apply { verify_checksum(true, {h.eth.dst}, m.b, HashAlgorithm.csum16); }", ""},
		{"", "apply { update_checksum(true, {h.eth.dst}, 16w1, HashAlgorithm.csum16); }", "update_checksum: the argument for inout parameter checksum must be writable, but 16w1 is not a variable"},
	}
	for _, c := range cases {
		_, d := compile(t, c.decls, c.body)
		if c.msg == "" {
			if d.HasErrors() {
				t.Errorf("%s %s: unexpected errors:\n%v", c.decls, c.body, d)
			}
			continue
		}
		if !strings.Contains(d.Error(), c.msg) {
			t.Errorf("%s %s:\n got  %v\n want an error containing %q", c.decls, c.body, d, c.msg)
		}
	}
}

func TestSelectWithoutDefaultIsAccepted(t *testing.T) {
	// p4c does not require a default case: packets matching no case are
	// rejected with error.NoMatch. The skeleton's parser has none.
	prog, d := compile(t, "", "apply {}")
	if d.HasErrors() {
		t.Fatal(d)
	}
	p := prog.Lookup("P").(*ast.ParserDecl)
	sel := p.States[0].Transition.Select
	if sel.Cases[0].State.Decl != p.States[1] || sel.Cases[1].State.Decl != ast.AcceptState {
		t.Error("select case states not resolved")
	}
	mask := sel.Cases[1].Keys[0].(*ast.Binary)
	if _, ok := mask.Type.(*ast.SetType); !ok || mask.X.Info().Type.String() != "bit<16>" {
		t.Errorf("mask keyset typed %v / %v, want set<bit<16>> with bit<16> operands", mask.Type, mask.X.Info().Type)
	}
}

func TestTablesApplyResultAndSwitch(t *testing.T) {
	body := `
    direct_counter(CounterType.packets) dc;
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table t {
        key = { h.eth.dst : exact; h.eth.type : ternary; }
        actions = { fwd; drop; }
        default_action = fwd(9w1);
        counters = dc;
        const entries = {
            (48w1, 0x0800 &&& 0xffff) : fwd(2);
            (_, _) : drop();
        }
    }
    apply {
        if (t.apply().hit) { m.c = 1; }
        switch (t.apply().action_run) {
            fwd: { m.c = 2; }
            drop: {}
        }
    }`
	prog := mustCompile(t, "", body)
	ctl := prog.Lookup("I").(*ast.ControlDecl)
	tbl := ctl.Locals[3].(*ast.TableDecl)
	if tbl.DefaultAction.Name.Decl != ctl.Locals[1] {
		t.Error("default action not resolved to fwd")
	}
	if got := tbl.DefaultAction.Args[0].Value.Info().Type.String(); got != "bit<9>" {
		t.Errorf("default action argument typed %s, want bit<9>", got)
	}
	if mk := tbl.Keys[1].MatchKind.Decl.(*ast.EnumMember); mk.Name != "ternary" {
		t.Errorf("match kind resolved to %s", mk.Name)
	}
	ifs := ctl.Apply.Stmts[0].(*ast.IfStmt)
	hit := ifs.Cond.(*ast.Member)
	call := hit.X.(*ast.Call)
	if hit.Kind != ast.MemberTableHit || call.Kind != ast.CallTableApply || call.Table != tbl {
		t.Errorf("t.apply().hit resolved as %v / %v", hit.Kind, call.Kind)
	}

	_, d := compile(t, "", strings.Replace(body, "drop: {}", "drop: {}\n            NoAction: {}", 1))
	if !strings.Contains(d.Error(), "NoAction is not an action of table t") {
		t.Errorf("switch label outside the action list not rejected:\n%v", d)
	}
	_, d = compile(t, "", strings.Replace(body, "(_, _) : drop();", "(48w2) : drop();", 1))
	if !strings.Contains(d.Error(), "the keyset has 1 elements but 2 are matched") {
		t.Errorf("short entry keyset not rejected:\n%v", d)
	}
	_, d = compile(t, "", strings.Replace(body, "fwd(9w1)", "fwd(sm.ingress_port)", 1))
	if !strings.Contains(d.Error(), "action data for port must be a compile-time constant") {
		t.Errorf("non-constant action data not rejected:\n%v", d)
	}
}

func TestGenericExternCallsBindTypeArguments(t *testing.T) {
	body := `
    register<bit<16>>(8) r;
    apply {
        r.read(m.b, 3);
        hash(m.a, HashAlgorithm.crc32, 32w0, {h.eth.dst, h.eth.type}, 32w65536);
    }`
	prog := mustCompile(t, "", body)
	ctl := prog.Lookup("I").(*ast.ControlDecl)
	read := ctl.Apply.Stmts[0].(*ast.CallStmt).Call
	if read.Kind != ast.CallExternMethod || read.Method.Name != "read" {
		t.Fatalf("r.read resolved as %v", read.Kind)
	}
	if idx := read.Args[1].Value.Info(); idx.Type.String() != "bit<32>" || idx.Const.Int.Cmp(big.NewInt(3)) != 0 {
		t.Errorf("index argument typed %v = %v, want bit<32> 3", idx.Type, idx.Const)
	}
	hash := ctl.Apply.Stmts[1].(*ast.CallStmt).Call
	bound := map[string]string{}
	for tp, ty := range hash.TypeBindings {
		bound[tp.Name] = ty.String()
	}
	want := map[string]string{"O": "bit<32>", "T": "bit<32>", "D": "tuple<bit<48>, bit<16>>", "M": "bit<32>"}
	for k, v := range want {
		if bound[k] != v {
			t.Errorf("hash type argument %s = %s, want %s", k, bound[k], v)
		}
	}
	if obj := prog.Main.Type.Resolved().(*ast.ObjectType); len(obj.Args) != 2 || obj.Args[0].String() != "struct H" {
		t.Errorf("V1Switch type arguments inferred as %v", obj)
	}
}

func TestCompoundAssignmentBecomesPlainAssignment(t *testing.T) {
	prog := mustCompile(t, "", "apply { m.a += 1; m.c |= 0x80; }")
	ctl := prog.Lookup("I").(*ast.ControlDecl)
	a := ctl.Apply.Stmts[0].(*ast.AssignStmt)
	if a.Compound || ast.ExprString(a.RHS) != "(m.a + 1)" || a.RHS.Info().Type.String() != "bit<32>" {
		t.Errorf("m.a += 1 became %s = %s (%v)", ast.ExprString(a.LHS), ast.ExprString(a.RHS), a.RHS.Info().Type)
	}
}

func TestDirectControlInvocation(t *testing.T) {
	decls := "control Sub(inout M m) { apply { m.c = 1; } }"
	prog := mustCompile(t, decls, "apply { Sub.apply(m); }")
	call := prog.Lookup("I").(*ast.ControlDecl).Apply.Stmts[0].(*ast.CallStmt).Call
	if call.Kind != ast.CallControlApply {
		t.Fatalf("Sub.apply(m) resolved as %v", call.Kind)
	}
	if recv := call.Receiver().(*ast.Ident); recv.Decl != prog.Lookup("Sub") {
		t.Error("receiver of a direct invocation must resolve to the control declaration")
	}
}

func TestSerializableEnumsAndErrors(t *testing.T) {
	decls := `
typedef bit<16> ethertype_t;
enum ethertype_t EtherType { IPV4 = 0x0800, ARP = 0x0806 }
const bit<16> arp = (bit<16>)EtherType.ARP;
const bool isArp = EtherType.ARP == 16w0x0806;
const bool below = EtherType.IPV4 < 16w0x0806;
error { BadLabel }`
	body := `apply {
        if (h.eth.type == EtherType.IPV4) { m.b = EtherType.ARP; }
        if (sm.parser_error == error.BadLabel) { m.c = 1; }
    }`
	prog := mustCompile(t, decls, body)
	if got := constOf(t, prog, "arp").Const.String(); got != "2054" {
		t.Errorf("(bit<16>)EtherType.ARP = %s, want 2054", got)
	}
	if got := constOf(t, prog, "isArp").Const.String(); got != "true" {
		t.Errorf("EtherType.ARP == 16w0x0806 folded to %s", got)
	}
	if got := constOf(t, prog, "below").Const.String(); got != "true" {
		t.Errorf("EtherType.IPV4 < 16w0x0806 folded to %s", got)
	}
	found := false
	for _, e := range prog.Errors {
		if e.Name == "BadLabel" {
			found = true
		}
	}
	if !found || prog.Errors[0].Name != "NoError" {
		t.Errorf("program errors not merged in declaration order: %v", prog.Errors)
	}
}

func TestCompoundAssignmentEvaluatesCallsInTheTargetOnce(t *testing.T) {
	decls := "bit<8> postincr(inout bit<8> x) { bit<8> r = x; x = x + 1; return r; }"
	prog := mustCompile(t, decls, "apply { h.labels[postincr(m.c) & 3].ttl |= 8w1; }")
	blk, ok := prog.Lookup("I").(*ast.ControlDecl).Apply.Stmts[0].(*ast.BlockStmt)
	if !ok || len(blk.Stmts) != 2 {
		t.Fatalf("statement not rewritten into a block of two statements")
	}
	tmp := blk.Stmts[0].(*ast.DeclStmt).Decl.(*ast.VarDecl)
	if tmp.Type.Resolved().String() != "bit<8>" || tmp.Init.(*ast.Call).Function == nil {
		t.Errorf("temporary %s : %v = %s", tmp.Name, tmp.Type.Resolved(), ast.ExprString(tmp.Init))
	}
	a := blk.Stmts[1].(*ast.AssignStmt)
	want := "h.labels[(" + tmp.Name + " & 3)].ttl"
	if a.Compound || ast.ExprString(a.LHS) != want || ast.ExprString(a.RHS) != "("+want+" | 8w1)" {
		t.Errorf("got %s = %s, want %s = (%s | 8w1)", ast.ExprString(a.LHS), ast.ExprString(a.RHS), want, want)
	}
	if a.LHS.(*ast.Member).X.(*ast.Index).Index.(*ast.Binary).X.(*ast.Ident).Decl != tmp {
		t.Error("the index must refer to the temporary")
	}
}

func TestForLoopsAreUnsupportedUnlessEnabled(t *testing.T) {
	body := `action sum() {
        for (bit<8> i = 1; i <= m.c; i = i + 1) {
            if (i == 5) { break; }
            m.a = m.a + (bit<32>)i;
        }
        for (bit<8> j in 0 .. 3) { h.labels[0].ttl = h.labels[0].ttl |+| j; continue; }
    }
    apply { sum(); }`
	_, d := compile(t, "", body)
	if !d.OnlyUnsupported() || !strings.Contains(d.Error(), "unsupported: for loops") {
		t.Errorf("want unsupported for loops, got:\n%v", d)
	}
	prog, d := compileWith(t, Features{Loops: true}, "", body)
	if d.HasErrors() {
		t.Fatalf("with loops enabled: %v", d)
	}
	act := prog.Lookup("I").(*ast.ControlDecl).Locals[0].(*ast.ActionDecl)
	loop := act.Body.Stmts[0].(*ast.ForStmt)
	if loop.Cond.Info().Type.String() != "bool" || len(loop.Init) != 1 || len(loop.Update) != 1 {
		t.Errorf("for loop checked wrongly")
	}
	_, d = compileWith(t, Features{Loops: true}, "", "apply { break; }")
	if !strings.Contains(d.Error(), "break and continue are only allowed inside a for loop") {
		t.Errorf("break outside a loop accepted: %v", d)
	}
}

func TestTupleElementsAreIndexedByConstants(t *testing.T) {
	prog := mustCompile(t, "", "apply { tuple<bit<8>, bit<16>> x = {1, 2}; m.b = x[1]; }")
	a := prog.Lookup("I").(*ast.ControlDecl).Apply.Stmts[1].(*ast.AssignStmt)
	if a.RHS.Info().Type.String() != "bit<16>" {
		t.Errorf("x[1] typed %v", a.RHS.Info().Type)
	}
	_, d := compile(t, "", "apply { tuple<bit<8>, bit<16>> x = {1, 2}; m.b = x[2]; }")
	if !strings.Contains(d.Error(), "a tuple index must be a constant between 0 and 1") {
		t.Errorf("out-of-range tuple index accepted: %v", d)
	}
}

func TestActionParametersWithDefaults(t *testing.T) {
	body := `
    action add(bit<32> va, bit<32> vb = 7) { m.a = m.a + va + vb; }
    table t {
        key = { m.b : exact; }
        actions = { add; }
        const default_action = add(10);
    }
    apply { t.apply(); add(1, 2); add(3); }`
	prog := mustCompile(t, "", body)
	act := prog.Lookup("I").(*ast.ControlDecl).Locals[0].(*ast.ActionDecl)
	if d := act.Params[1].Default.Info(); d.Type.String() != "bit<32>" || d.Const.Int.Int64() != 7 {
		t.Errorf("default value typed %v = %v, want bit<32> 7", d.Type, d.Const)
	}
	_, d := compile(t, "", strings.Replace(body, "add(10)", "add()", 1))
	if !strings.Contains(d.Error(), "action add expects 1 to 2 arguments here, got 0") {
		t.Errorf("missing required action data accepted: %v", d)
	}
}

func TestRecursionIsRejected(t *testing.T) {
	cases := map[string]string{
		"bit<8> f(in bit<8> x) { if (x == 0) { return 0; } return f(x - 1); }":          "recursion is not allowed in P4: f -> f",
		"bit<8> g(in bit<8> x) { return h(x); } bit<8> h(in bit<8> x) { return g(x); }": "recursion is not allowed in P4: g -> h -> g",
		"control Loop(inout M m) { Loop() inner; apply { inner.apply(m); } }":           "recursion is not allowed in P4: Loop -> Loop",
	}
	for decls, want := range cases {
		_, d := compile(t, decls, "apply {}")
		if !strings.Contains(d.Error(), want) {
			t.Errorf("%s:\n got  %v\n want %q", decls, d, want)
		}
	}
}

func TestLiteralsTakeTheTypeBoundByALaterArgument(t *testing.T) {
	decls := "extern void pick<T>(in T a, in T b);"
	prog := mustCompile(t, decls, "apply { pick(300, m.c); }")
	call := prog.Lookup("I").(*ast.ControlDecl).Apply.Stmts[0].(*ast.CallStmt).Call
	if a := call.Args[0].Value.Info(); a.Type.String() != "bit<8>" || a.Const.Int.Int64() != 44 {
		t.Errorf("300 passed for T = bit<8> became %v %v, want bit<8> 44", a.Type, a.Const)
	}
}

func TestHeaderSizeQueriesFoldToConstants(t *testing.T) {
	prog := mustCompile(t, "", `apply {
        m.a = h.eth.minSizeInBits();
        m.b = (bit<16>)h.labels[0].maxSizeInBytes();
        m.c = (bit<8>)m.minSizeInBytes();
    }`)
	stmts := prog.Lookup("I").(*ast.ControlDecl).Apply.Stmts
	want := []string{"112", "4", "7"}
	for i, w := range want {
		if got := stmts[i].(*ast.AssignStmt).RHS.Info().Const; got == nil || got.String() != w {
			t.Errorf("statement %d folded to %v, want %s", i, got, w)
		}
	}
}
