package stf

import (
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// resolverProgram has two tables named "t" in different controls, keys on a
// validity bit, a stack element and a field, and actions with parameters.
func resolverProgram(t *testing.T) *nameIndex {
	t.Helper()
	prog := &bmv2json.Program{
		HeaderTypes: []bmv2json.HeaderType{
			{Name: "h_t", Fields: []bmv2json.HeaderField{{Name: "f", Bitwidth: 16}, {Name: "g", Bitwidth: 12}}},
		},
		Headers: []bmv2json.Header{{Name: "h", HeaderType: "h_t"}, {Name: "s[0]", HeaderType: "h_t"}},
		Actions: []bmv2json.Action{
			{Name: "ingress.a.set", ID: 0, RuntimeData: []bmv2json.RuntimeData{{Name: "v", Bitwidth: 12}}},
			{Name: "ingress.b.set", ID: 1, RuntimeData: []bmv2json.RuntimeData{{Name: "v", Bitwidth: 12}}},
			{Name: "NoAction", ID: 2},
		},
		Pipelines: []bmv2json.Pipeline{{Name: "ingress", Tables: []bmv2json.Table{
			{Name: "ingress.a.t", Key: []bmv2json.TableKey{
				{MatchType: "exact", Name: "hdr.h.$valid$", Target: []string{"h", "$valid$"}},
				{MatchType: "lpm", Name: "hdr.h.f", Target: []string{"h", "f"}},
			}, ActionIDs: []int{0, 2}},
			{Name: "ingress.b.t", Key: []bmv2json.TableKey{
				{MatchType: "ternary", Name: "hdr.s[0].g", Target: []string{"s[0]", "g"}},
				{MatchType: "range", Name: "hdr.h.f", Target: []string{"h", "f"}},
			}, ActionIDs: []int{0, 1, 2}},
		}}},
	}
	p, err := newNames(prog)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func resolveLine(t *testing.T, p *nameIndex, line string) (*resolvedEntry, error) {
	t.Helper()
	return p.resolveAdd(mustParse(t, line)[0].(*Add))
}

func TestResolveFollowsBmv2stfNaming(t *testing.T) {
	p := resolverProgram(t)
	e, err := resolveLine(t, p, "add a.t h.valid:1 f:0x12** ingress.a.set(v:0xabc)")
	if err != nil {
		t.Fatal(err)
	}
	if e.Table != "ingress.a.t" || e.Action != "ingress.a.set" || string(e.ActionArgs[0]) != "\x0a\xbc" {
		t.Errorf("resolved to %+v", e)
	}
	if v := e.Keys[0]; v.Field != "hdr.h.$valid$" || string(v.Value) != "\x01" {
		t.Errorf("validity key %+v", v)
	}
	// Without '/', the prefix covers the digits before the '*'s.
	if v := e.Keys[1]; v.PrefixLen != 8 || string(v.Value) != "\x12\x00" {
		t.Errorf("lpm key %+v, want 0x1200/8", v)
	}
	e, err = resolveLine(t, p, "add b.t 7 s$0.g:0x0f* h.f:0x10->0x20 b.set(v:1)")
	if err != nil {
		t.Fatal(err)
	}
	if v := e.Keys[0]; string(v.Value) != "\x00\xf0" || string(v.Mask) != "\x0f\xf0" {
		t.Errorf("ternary key from 0x0f* = value %x mask %x, want 00f0/0ff0", v.Value, v.Mask)
	}
	if v := e.Keys[1]; string(v.Value) != "\x00\x10" || string(v.High) != "\x00\x20" || e.Priority != 7 {
		t.Errorf("range key %+v priority %d", v, e.Priority)
	}
	// Keys left out are wildcards.
	e, err = resolveLine(t, p, "add b.t 1 NoAction()")
	if err != nil {
		t.Fatal(err)
	}
	if v := e.Keys[0]; string(v.Mask) != "\x00\x00" {
		t.Errorf("omitted ternary key %+v, want mask 0", v)
	}
	if v := e.Keys[1]; string(v.Value) != "\x00\x00" || string(v.High) != "\xff\xff" {
		t.Errorf("omitted range key %+v, want 0..0xffff", v)
	}
}

func TestResolveRejectsAmbiguousAndUnknownNames(t *testing.T) {
	p := resolverProgram(t)
	cases := []struct{ line, want string }{
		{"add t h.f:1 NoAction()", `table name "t" is ambiguous: ingress.a.t, ingress.b.t`},
		{"add b.t 1 set(v:1)", `action name "set" is ambiguous: ingress.a.set, ingress.b.set`},
		{"add a.t g:1 NoAction()", `table ingress.a.t has no key field "g" (its keys: hdr.h.$valid$, hdr.h.f)`},
		{"add a.t f:1 f:2 NoAction()", "key field hdr.h.f given twice"},
		{"add a.t f:1&&&3 NoAction()", "hdr.h.f is a lpm key"},
		{"add a.t f:1/17 NoAction()", "prefix length 17 is longer than the 16-bit field"},
		{"add b.t 1 h.f:0x1* NoAction()", "'*' digits"},
		{"add a.t f:0x10000 NoAction()", "value 0x10000 does not fit in 16 bits"},
		{"add a.t f:1 a.set(v:1, v:2)", "parameter v given twice"},
	}
	for _, c := range cases {
		if _, err := resolveLine(t, p, c.line); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.line, err, c.want)
		}
	}
}

func TestResolveTakesNegativeArgumentsInTwosComplement(t *testing.T) {
	p := resolverProgram(t)
	e, err := resolveLine(t, p, "add a.t f:1 a.set(v:-1)")
	if err != nil {
		t.Fatal(err)
	}
	if string(e.ActionArgs[0]) != "\x0f\xff" {
		t.Errorf("v:-1 in 12 bits = %x, want 0fff", e.ActionArgs[0])
	}
}
