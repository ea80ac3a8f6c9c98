package p4c

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/p4rt"
)

// skeleton is a v1model program with holes: PRE (before the includes),
// TOP (declarations), STATES
// (parser states after start), INGRESS (ingress declarations) and APPLY
// (the ingress apply block).
const skeleton = `PRE
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; h_t[4] hs; }
struct meta_t { bit<8> x; bit<16> y; }
TOP
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
STATES
}
control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
INGRESS
    apply {
APPLY
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
`

type holes struct{ pre, top, states, ingress, apply string }

// source is the skeleton with its holes filled.
func (h holes) source() string {
	return strings.NewReplacer("PRE", h.pre, "TOP", h.top, "STATES", h.states, "INGRESS", h.ingress, "APPLY", h.apply).Replace(skeleton)
}

// compileSnippet compiles the skeleton with its holes filled.
func compileSnippet(t *testing.T, h holes) (*Result, error) {
	t.Helper()
	src := h.source()
	path := filepath.Join(t.TempDir(), "prog.p4")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return Compile(path, Options{})
}

// Programs p4c accepts that the compiler once rejected: each compiles, and
// its JSON loads into the engine.
func TestProgramsP4cAcceptsCompile(t *testing.T) {
	for _, c := range []struct {
		name string
		holes
		warning string // a warning p4c also gives, when not empty
	}{
		{name: "empty actions list gets NoAction", holes: holes{ingress: `table t { key = { hdr.h.a: exact; } actions = { } }`, apply: `t.apply();`}},
		{name: "state without transition rejects", holes: holes{states: `state dead { pkt.extract(hdr.h); }`}, warning: "state dead has no transition statement"},
		{name: "multi-line string literal", holes: holes{top: "@description(\"two\nlines\") const bit<8> K = 1;", apply: `meta.x = K;`}},
		{name: "quote in a free-form annotation", holes: holes{top: "@note(that's it) const bit<8> K = 1;", apply: `meta.x = K;`}},
		{name: "cast to int", holes: holes{apply: `meta.x = (bit<8>)((int)hdr.h.a + 1); meta.y = (bit<16>)(int)3;`}},
		{name: "one-element list keyset", holes: holes{ingress: `action a() { } table t { key = { hdr.h.a: exact; } actions = { a; } const entries = { {1} : a(); } }`, apply: `t.apply();`}},
		{name: "serializable enum as stack index", holes: holes{top: `enum bit<8> Idx { ZERO = 0, ONE = 1 }`, apply: `Idx i = (Idx)hdr.h.b; hdr.hs[i].a = 1;`}},
		{name: "PortId_t from v1model.p4", holes: holes{pre: "#define V1MODEL_VERSION 20200408", apply: `PortId_t p = 1; sm.egress_spec = p;`}},
		{name: "action named like an extern function", holes: holes{ingress: `action hash() { hash(meta.x, HashAlgorithm.crc16, 8w0, { hdr.h.a }, 8w7); }`, apply: `hash();`}},
		{name: "entry priorities and their properties", holes: holes{ingress: `action a() { } table t { key = { hdr.h.a: ternary; } actions = { a; } largest_priority_wins = false; priority_delta = 10; entries = { priority = 10: 1 &&& 0xf : a(); 2 : a(); } }`, apply: `t.apply();`}},
		{name: "unknown table property is ignored", holes: holes{ingress: `table t { actions = { NoAction; } junk = 1; }`, apply: `t.apply();`}, warning: "property junk is ignored"},
		{name: "static_assert", holes: holes{top: `const bool ok = static_assert(V1MODEL_VERSION >= 20160101, "old v1model");`, apply: `static_assert(true);`}},
		{name: "slices written [lo +: width]", holes: holes{apply: `meta.x = hdr.h.a[0 +: 4] ++ hdr.h.b[4+:4]; hdr.h.b[7 +: 1] = 1;`}},
		{name: "arrays declared name[N]", holes: holes{top: `struct arr_t { h_t hs2[2]; }`, ingress: `h_t loc[2];`, apply: `loc[1] = hdr.h; hdr.h = loc[1];`}},
		{name: "generic structs and headers", holes: holes{top: `header g_t<T> { T x; T y; } struct gs_t<T> { g_t<T> g; }`, ingress: `gs_t<bit<16>> v; gs_t<bit<8>> w;`, apply: `v.g.setValid(); v.g.x = 1; w.g.setValid(); w.g.y = hdr.h.a;`}},
		{name: "union stack indexed by a local never written again", holes: holes{top: `header a_t { bit<8> x; } header b_t { bit<8> y; } header_union u_t { a_t a; b_t b; }`, ingress: `u_t[2] us;`, apply: `bit<1> i = 1; us[i].a.setValid(); us[i].a.x = hdr.h.a;`}},
		{name: "select with no expression", holes: holes{states: `state s2 { transition select() { default: accept; } }`}},
		{name: "varbit in a metadata struct", holes: holes{top: `struct vb_t { varbit<8> v; }`, ingress: `vb_t vb;`}},
		{name: "struct inside a header, copied whole", holes: holes{top: `struct in_t { bit<8> p; bit<8> q; } header wrap_t { in_t s; }`, ingress: `wrap_t w;`, apply: `w.setValid(); w.s = { 1, 2 }; meta.x = w.s.q;`}},
		{name: "lookahead of a struct", holes: holes{top: `struct two_t { bit<8> p; bit<8> q; }`, states: `state s2 { two_t t = pkt.lookahead<two_t>(); transition select(t.q) { 1: accept; default: reject; } }`}},
		{name: "struct compared with a list", holes: holes{top: `struct pair_t { bit<8> p; bit<8> q; }`, apply: `pair_t v = { hdr.h.a, hdr.h.b }; if (v == { 1, 2 }) { sm.egress_spec = 2; }`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := compileSnippet(t, c.holes)
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if _, err := engine.Load(res.JSON); err != nil {
				t.Errorf("the engine refuses the JSON: %v", err)
			}
			if c.warning != "" && !strings.Contains(strings.Join(res.Warnings, "\n"), c.warning) {
				t.Errorf("warnings %q lack %q", res.Warnings, c.warning)
			}
		})
	}
}

// Programs p4c rejects: each fails with an error on the line p4c names
// (marked /*HERE*/ in the snippet) that says what is wrong.
func TestProgramsP4cRejectsFailOnItsLine(t *testing.T) {
	for _, c := range []struct {
		name string
		holes
		want string
	}{
		{name: "two actions with one control-plane name", holes: holes{top: `@name(".drop") action d1() { }`, ingress: "/*HERE*/ @name(\".drop\") action d2() { }\n table t { actions = { d2; } }", apply: `d1(); t.apply();`}, want: "conflicting control-plane name drop"},
		{name: "@defaultonly action in an entry", holes: holes{ingress: "action a() { } table t { key = { hdr.h.a: exact; } actions = { @defaultonly a; }\n const entries = {\n/*HERE*/ 1 : a(); } }", apply: `t.apply();`}, want: "marked @defaultonly"},
		{name: "@tableonly action as default", holes: holes{ingress: "action a() { } table t { key = { hdr.h.a: exact; } actions = { @tableonly a; }\n/*HERE*/ default_action = a; }", apply: `t.apply();`}, want: "marked @tableonly"},
		{name: "control instantiated at top level", holes: holes{top: "control C() { apply { } }\n/*HERE*/ C() c;"}, want: "cannot instantiate a control at the top level"},
		{name: "unknown v1model version", holes: holes{pre: "#define V1MODEL_VERSION 20000101"}, want: "unknown v1model version"},
		{name: "mask on an optional key", holes: holes{ingress: "action a() { } table t { key = { hdr.h.a: optional; } actions = { a; }\n const entries = {\n/*HERE*/ 1 &&& 3 : a(); } }", apply: `t.apply();`}, want: "optional key takes an exact value"},
		{name: "entries before the key", holes: holes{ingress: "action a() { } table t {\n/*HERE*/ const entries = { 1 : a(); }\n key = { hdr.h.a: exact; } actions = { a; } }", apply: `t.apply();`}, want: "must come after the table's key"},
		{name: "priority on a key without one", holes: holes{ingress: "action a() { } table t {\n/*HERE*/ key = { hdr.h.a: exact; } actions = { a; }\n entries = { priority = 3: 1 : a(); } }", apply: `t.apply();`}, want: "do not require priorities"},
		{name: "first entry without a priority", holes: holes{ingress: "action a() { } table t { key = { hdr.h.a: ternary; } actions = { a; }\n entries = {\n/*HERE*/ 1 : a();\n priority = 3: 2 : a(); } }", apply: `t.apply();`}, want: "first entry must have a priority"},
		{name: "priorities below zero", holes: holes{ingress: "action a() { }\n/*HERE*/ table t { key = { hdr.h.a: ternary; } actions = { a; } priority_delta = 10;\n entries = { priority = 12: 1 : a(); 2 : a(); 3 : a(); } }", apply: `t.apply();`}, want: "overflow in priority computation"},
		{name: "register of a struct, read", holes: holes{top: `struct pair_t { bit<8> p; bit<8> q; }`, ingress: "register<pair_t>(4) r; pair_t v;", apply: "\n/*HERE*/ r.read(v, 0);"}, want: "a structure) is not supported on this target"},
		{name: "complex key without @name", holes: holes{ingress: "action a() { } table t { key = {\n/*HERE*/ hdr.h.a + hdr.h.b: exact; } actions = { a; } }", apply: `t.apply();`}, want: "Complex key expression requires a @name annotation"},
		{name: "bool in @p4runtime_translation", holes: holes{top: "\n/*HERE*/ @p4runtime_translation(\"p4.org/x\", bool) type bit<8> X_t;"}, want: "must be a positive bit width, bit<W>, string or enum"},
		{name: "int literal where an extern needs a width", holes: holes{apply: "\n/*HERE*/ hash(meta.y, HashAlgorithm.crc16, 16w0, { hdr.h.a }, 0xFFFF);"}, want: "could not infer a width"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := compileSnippet(t, c.holes)
			if err == nil {
				t.Fatalf("compiled, want an error %q", c.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) {
				t.Fatalf("error %v\ndoes not say %q", err, c.want)
			}
			src := c.source()
			if i := strings.Index(src, "/*HERE*/"); i >= 0 {
				line := strings.Count(src[:i], "\n") + 1
				if got := firstErrorLine(msg, "prog.p4"); got != line {
					t.Errorf("first error on line %d, want line %d: %v", got, line, err)
				}
			}
		})
	}
}

// runOn loads a compiled program into a fresh engine switch.
func runOn(t *testing.T, res *Result) *engine.Switch {
	t.Helper()
	prog, err := engine.Load(res.JSON)
	if err != nil {
		t.Fatalf("the engine refuses the JSON: %v", err)
	}
	return engine.NewSwitch(prog, engine.Config{})
}

// send processes one frame and returns the frames out, by port.
func send(t *testing.T, sw *engine.Switch, port uint32, frame []byte) map[uint32][]byte {
	t.Helper()
	out := map[uint32][]byte{}
	if err := sw.Process(port, frame, func(o engine.Output) { out[o.Port] = o.Data }); err != nil {
		t.Fatal(err)
	}
	return out
}

// An action selector's table holds groups of members: a packet runs the
// member its selector input hashes to (identity: input modulo the group
// size), and the P4Info names the selector with its table.
func TestActionSelectorTablesRunGroupsOfMembers(t *testing.T) {
	res, err := compileSnippet(t, holes{
		ingress: `action fwd(bit<9> port) { sm.egress_spec = port; }
    action_selector(HashAlgorithm.identity, 32w16, 32w8) sel;
    table t {
        key = { hdr.h.a: exact; hdr.h.b: selector; }
        actions = { fwd; NoAction; }
        implementation = sel;
    }`,
		apply: `t.apply();`,
	})
	if err != nil {
		t.Fatal(err)
	}
	if aps := res.P4Info.ActionProfiles; len(aps) != 1 || aps[0].Preamble.Name != "Ig.sel" || !aps[0].WithSelector || aps[0].Size != 16 || len(aps[0].TableIds) != 1 || res.P4Info.Tables[0].ImplementationId != aps[0].Preamble.Id {
		t.Errorf("P4Info action profiles %v", aps)
	}
	sw := runOn(t, res)
	var members []engine.MemberHandle
	for _, port := range []byte{2, 3} {
		m, err := sw.AddMember("Ig.sel", "Ig.fwd", [][]byte{{0, port}})
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, m)
	}
	g, err := sw.AddGroup("Ig.sel")
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.SetGroupMembers("Ig.sel", g, members); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.AddEntry("Ig.t", engine.Entry{Match: []engine.Match{engine.Exact([]byte{7})}, Group: g}); err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]bool{}
	for b := byte(0); b < 4; b++ {
		for port := range send(t, sw, 0, []byte{7, b}) {
			seen[port] = true
		}
	}
	if !seen[2] || !seen[3] || len(seen) != 2 {
		t.Errorf("packets left on ports %v, want both members' ports 2 and 3", seen)
	}
	if out := send(t, sw, 0, []byte{8, 0}); out[0] == nil || len(out) != 1 {
		t.Errorf("a miss ran NoAction and should leave on port 0, left on %v", out)
	}
}

// A serializable enum in a packet_in header is described in P4Info's
// type_info, and the metadata field names it (as p4c does), so that
// controllers can decode it.
func TestControllerHeaderEnumsReachTypeInfo(t *testing.T) {
	res, err := compileSnippet(t, holes{top: `enum bit<8> Reason { MISS = 1, TTL = 2 }
@controller_header("packet_in") header packet_in_t { Reason reason; bit<8> pad; }`})
	if err != nil {
		t.Fatal(err)
	}
	se := res.P4Info.GetTypeInfo().GetSerializableEnums()["Reason"]
	if se == nil || len(se.Members) != 2 || se.UnderlyingType.GetBitwidth() != 8 {
		t.Errorf("type_info serializable enums %v, want Reason with 2 members", res.P4Info.GetTypeInfo().GetSerializableEnums())
	}
	md := res.P4Info.GetControllerPacketMetadata()
	if len(md) != 1 || md[0].Metadata[0].GetTypeName().GetName() != "Reason" {
		t.Errorf("controller packet metadata %v, want field reason of type Reason", md)
	}
}

// [lo +: w] is the w bits from bit lo up, as [lo + w - 1 : lo].
func TestPlusColonSlicesTakeWidthBitsFromTheStart(t *testing.T) {
	res, err := compileSnippet(t, holes{apply: `hdr.h.a = hdr.h.a[0 +: 4] ++ hdr.h.b[4+:4]; hdr.h.b[7 +: 1] = 0; sm.egress_spec = 1;`})
	if err != nil {
		t.Fatal(err)
	}
	out := send(t, runOn(t, res), 0, []byte{0xab, 0xcd})
	if got := out[1]; len(got) != 2 || got[0] != 0xbc || got[1] != 0x4d {
		t.Errorf("out %x, want bc4d", got)
	}
}

// A parser whose states only loop among themselves is an error (p4c:
// "Parser never reaches accept or reject state"), at the parser.
func TestParserThatNeverEndsIsRejected(t *testing.T) {
	src := strings.Replace(holes{}.source(), "state start { pkt.extract(hdr.h); transition accept; }",
		"state start { pkt.extract(hdr.h); transition loop; }\n    state loop { transition select(hdr.h.a) { 1: start; default: loop; } }", 1)
	path := filepath.Join(t.TempDir(), "prog.p4")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Compile(path, Options{})
	if err == nil || !strings.Contains(err.Error(), "Parser never reaches accept or reject state") {
		t.Fatalf("error %v, want the parser never ending", err)
	}
	if line := firstErrorLine(err.Error(), "prog.p4"); line != strings.Count(src[:strings.Index(src, "parser P")], "\n")+1 {
		t.Errorf("error on line %d, want the parser's", line)
	}
}

// A struct inside a controller header is flattened in P4Info ("b.p"), and
// a key on a slice is as wide as the slice in both the JSON and P4Info,
// so that the P4Runtime server takes the pair.
func TestControllerHeaderStructsAndSliceKeysLoadIntoP4Runtime(t *testing.T) {
	res, err := compileSnippet(t, holes{
		top:     `struct pair_t { bit<8> p; bit<8> q; } @controller_header("packet_out") header po_t { pair_t b; }`,
		ingress: `action a() { } table t { key = { hdr.h.a[3:0]: exact; } actions = { a; } }`,
		apply:   `t.apply();`,
	})
	if err != nil {
		t.Fatal(err)
	}
	md := res.P4Info.GetControllerPacketMetadata()
	if len(md) != 1 || len(md[0].Metadata) != 2 || md[0].Metadata[0].Name != "b.p" || md[0].Metadata[0].Bitwidth != 8 {
		t.Errorf("controller packet metadata %v, want b.p and b.q of 8 bits", md)
	}
	if err := p4rt.NewServer(p4rt.Options{DeviceID: 1}).LoadPipeline(res.P4Info, res.JSON); err != nil {
		t.Errorf("the P4Runtime server refuses the program: %v", err)
	}
}

// A key that applies another table (sub.apply().hit) runs that table
// first and matches on its hit, as p4c hoists it.
func TestTableAppliedInAKeyRunsFirst(t *testing.T) {
	res, err := compileSnippet(t, holes{
		ingress: `action fwd(bit<9> port) { sm.egress_spec = port; }
    table sub { key = { hdr.h.a: exact; } actions = { NoAction; } }
    table main_t { key = { sub.apply().hit: exact @name("sub_hit"); } actions = { fwd; NoAction; } default_action = NoAction(); }`,
		apply: `main_t.apply();`,
	})
	if err != nil {
		t.Fatal(err)
	}
	sw := runOn(t, res)
	if _, err := sw.AddEntry("Ig.sub", engine.Entry{Match: []engine.Match{engine.Exact([]byte{1})}, Action: "NoAction"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.AddEntry("Ig.main_t", engine.Entry{Match: []engine.Match{engine.Exact([]byte{1})}, Action: "Ig.fwd", Args: [][]byte{{0, 2}}}); err != nil {
		t.Fatal(err)
	}
	if out := send(t, sw, 0, []byte{1, 0}); out[2] == nil {
		t.Errorf("a = 1 hits sub, so main_t forwards to port 2; left on %v", out)
	}
	if out := send(t, sw, 0, []byte{0, 0}); out[0] == nil {
		t.Errorf("a = 0 misses sub, so main_t misses; left on %v", out)
	}
}
