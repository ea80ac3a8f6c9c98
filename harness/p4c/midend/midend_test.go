package midend

import (
	"math/big"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/p4c/frontend"
)

// skeleton wraps an ingress control body into a whole v1model program.
func skeleton(ingress string) string {
	return `#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { bit<8> m; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) {
            1 .. 3: accept;
            0x10 &&& 0xf0: accept;
            default: accept;
        }
    }
}
control Ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
` + ingress + `
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Cc(inout headers_t hdr, inout meta_t meta) { apply { } }
control Dp(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), Vc(), Ig(), Eg(), Cc(), Dp()) main;
`
}

func lower(t *testing.T, src string) *Program {
	t.Helper()
	return lowerWith(t, src, frontend.Options{})
}

func lowerWith(t *testing.T, src string, opts frontend.Options) *Program {
	t.Helper()
	prog, err := frontend.LoadSource("test.p4", []byte(src), opts)
	if err != nil {
		t.Fatalf("front end: %v", err)
	}
	p, err := Lower(prog, "test.p4")
	if err != nil {
		t.Fatalf("lower: %v", err)
	}
	return p
}

func actionNamed(p *Program, name string) *Action {
	for _, a := range p.Actions {
		if a.Name == name {
			return a
		}
	}
	return nil
}

func TestIfInsideActionBecomesForwardJumps(t *testing.T) {
	p := lower(t, skeleton(`
    action pick(bit<8> v) {
        if (hdr.h.a == v) {
            hdr.h.b = 1;
        } else {
            hdr.h.b = 2;
        }
    }
    table t { key = { hdr.h.a: exact; } actions = { pick; } }
    apply { t.apply(); }`))
	a := actionNamed(p, "Ig.pick")
	if a == nil {
		t.Fatalf("action Ig.pick missing; have %d actions", len(p.Actions))
	}
	var ops []string
	for _, pr := range a.Prims {
		ops = append(ops, pr.Op)
	}
	want := "_jump_if_zero assign _jump assign"
	if got := strings.Join(ops, " "); got != want {
		t.Fatalf("primitives %q, want %q", got, want)
	}
	// _jump_if_zero skips the then-branch and its _jump: to index 3.
	if got := a.Prims[0].Parameters[1].Str; got != "0x3" {
		t.Errorf("else target %s, want 0x3", got)
	}
	if got := a.Prims[2].Parameters[0].Str; got != "0x4" {
		t.Errorf("end target %s, want 0x4", got)
	}
	if len(a.Params) != 1 || a.Params[0].Name != "v" || a.Params[0].Width != 8 {
		t.Errorf("runtime data %+v, want v/8", a.Params)
	}
}

func TestStraightLineCodeBecomesHiddenTableBeforeConditional(t *testing.T) {
	p := lower(t, skeleton(`
    apply {
        meta.m = hdr.h.a + 1;
        if (meta.m == 2) {
            hdr.h.b = 7;
        }
    }`))
	ig := p.Ingress
	if len(ig.Tables) != 2 || len(ig.Conds) != 1 {
		t.Fatalf("%d tables and %d conditionals, want 2 and 1", len(ig.Tables), len(ig.Conds))
	}
	first := ig.Tables[0]
	if !first.Hidden || *ig.Init != first.Name {
		t.Errorf("pipeline starts at %s, want the hidden table %s", *ig.Init, first.Name)
	}
	if next := first.Next[first.Actions[0].Action.Name]; next == nil || *next != ig.Conds[0].Name {
		t.Errorf("hidden table continues to %v, want %s", next, ig.Conds[0].Name)
	}
	if c := ig.Conds[0]; c.True == nil || *c.True != ig.Tables[1].Name || c.False != nil {
		t.Errorf("conditional true=%v false=%v, want %s and end of pipeline", c.True, c.False, ig.Tables[1].Name)
	}
	// The 8-bit sum is truncated as p4c does.
	sum := first.Actions[0].Action.Prims[0].Parameters[1]
	if sum.Inner == nil || sum.Inner.Op == nil || sum.Inner.Op.Op != "&" || sum.Inner.Op.Right.Str != "0xff" {
		t.Errorf("sum not masked to 8 bits: %s", sum)
	}
}

func TestHitMissAndSwitchLinkTableSuccessors(t *testing.T) {
	p := lower(t, skeleton(`
    action x() { hdr.h.b = 1; }
    action y() { hdr.h.b = 2; }
    table t1 { key = { hdr.h.a: exact; } actions = { x; y; } }
    table t2 { key = { hdr.h.b: exact; } actions = { x; NoAction; } }
    table t3 { actions = { y; } default_action = y(); }
    apply {
        if (!t1.apply().hit) {
            switch (t2.apply().action_run) {
                x: { t3.apply(); }
            }
        }
    }`))
	tables := map[string]*Table{}
	for _, tb := range p.Ingress.Tables {
		tables[tb.Name] = tb
	}
	t1, t2, t3 := tables["Ig.t1"], tables["Ig.t2"], tables["Ig.t3"]
	if t1 == nil || t2 == nil || t3 == nil {
		t.Fatalf("tables %v", tables)
	}
	if n := t1.Next["__MISS__"]; n == nil || *n != "Ig.t2" {
		t.Errorf("t1 miss goes to %v, want Ig.t2", n)
	}
	if n := t1.Next["__HIT__"]; n != nil {
		t.Errorf("t1 hit goes to %s, want end", *n)
	}
	if n := t2.Next["Ig.x"]; n == nil || *n != "Ig.t3" {
		t.Errorf("t2 action x goes to %v, want Ig.t3", n)
	}
	if n := t2.Next["NoAction"]; n != nil {
		t.Errorf("t2 NoAction goes to %s, want end", *n)
	}
	if t2.Default == nil || t2.Default.Name != "NoAction" {
		t.Errorf("t2 default %v, want NoAction", t2.Default)
	}
}

func TestTableAppliedTwiceOnOnePathIsUnsupported(t *testing.T) {
	prog, err := frontend.LoadSource("test.p4", []byte(skeleton(`
    table t { actions = { NoAction; } }
    apply { t.apply(); t.apply(); }`)), frontend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lower(prog, "test.p4")
	if err == nil || !strings.Contains(err.Error(), "unsupported: Ig.t is reached again after itself") {
		t.Fatalf("error %v, want the cycle rejected", err)
	}
	if !strings.HasPrefix(err.Error(), "test.p4:") {
		t.Errorf("error %q does not start with the file position", err)
	}
}

func TestSelectRangesBecomeMaskedTransitions(t *testing.T) {
	p := lower(t, skeleton(`apply { }`))
	var got []string
	for _, tr := range p.Parser.States[0].Transitions {
		if tr.Default {
			got = append(got, "default")
			continue
		}
		got = append(got, tr.Value+"/"+tr.Mask)
	}
	// 1..3 = {1} ∪ {2,3}; then the masked keyset; then default.
	want := "0x01/0xff 0x02/0xfe 0x10/0xf0 default"
	if strings.Join(got, " ") != want {
		t.Fatalf("transitions %q, want %q", strings.Join(got, " "), want)
	}
}

func TestRangePartsCoverTheRangeExactly(t *testing.T) {
	lo, hi := big.NewInt(0x0800), big.NewInt(0x0806)
	parts := rangeParts(lo, hi, 16)
	covered := map[int64]bool{}
	for _, p := range parts {
		for v := int64(0); v < 1<<16; v++ {
			if new(big.Int).And(big.NewInt(v), p.m).Cmp(p.v) == 0 {
				if covered[v] {
					t.Fatalf("value %#x covered twice", v)
				}
				covered[v] = true
			}
		}
	}
	for v := int64(0); v < 1<<16; v++ {
		if in := v >= 0x0800 && v <= 0x0806; covered[v] != in {
			t.Fatalf("value %#x covered=%v, want %v", v, covered[v], in)
		}
	}
	if len(parts) != 3 {
		t.Errorf("%d parts, want 3 (0x800/4, 0x804/2, 0x806/1)", len(parts))
	}
}

func TestHexConstPadsToTheWidthLikeP4c(t *testing.T) {
	cases := []struct {
		v    int64
		w    int
		want string
	}{{1, 16, "0x0001"}, {5, 8, "0x05"}, {-1, 8, "-0x01"}, {0x1ff, 9, "0x1ff"}, {3, 0, "0x3"}}
	for _, c := range cases {
		if got := hexConst(big.NewInt(c.v), c.w); got != c.want {
			t.Errorf("hexConst(%d, %d) = %s, want %s", c.v, c.w, got, c.want)
		}
	}
}

func TestCopyOutRunsWhenAnActionExits(t *testing.T) {
	p := lower(t, skeleton(`
    action set_and_exit(inout bit<8> v) {
        v = 3;
        exit;
    }
    apply { set_and_exit(hdr.h.b); }`))
	tb := p.Ingress.Tables[0]
	a := tb.Actions[0].Action
	// copy-in, v = 3, exit, jump to the exit path, copy-out, jump over the
	// exit path, exit path: copy-out.
	assigns, exits := 0, 0
	for _, pr := range a.Prims {
		switch pr.Op {
		case "assign":
			if h, f, ok := pr.Parameters[0].FieldRef(); ok && h == "h" && f == "b" {
				assigns++
			}
		case "exit":
			exits++
		}
	}
	if exits != 1 || assigns != 2 {
		t.Fatalf("%d exits and %d copy-outs to h.b, want 1 and 2 (normal and exit path)", exits, assigns)
	}
}
