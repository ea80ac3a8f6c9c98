package p4c

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// The tests below pin the JSON shapes real bmv2 (simple_switch 1.15.5)
// needs where the embedded compiler once wrote others; each was found by a
// conformance program that passed on the engine and crashed
// simple_switch_grpc (bmv2json.CheckBmv2Shapes explains the two readings
// of an expression node). The programs in brackets pass on real bmv2 with
// grid's JSON since (TestConformanceCorpusOnRealBmv2WithBothJSONs in
// harness/p4test runs them).

// shapeProgram compiles a v1model program made of the given parser state
// body and ingress body around headers h (bit<8> i, a) and s (two
// elements of bit<8> v), and returns its bmv2 JSON.
func shapeProgram(t *testing.T, decls, parserStart, ingress string) *bmv2json.Program {
	t.Helper()
	src := `#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> i; bit<8> a; }
header e_t { bit<8> v; }
struct H { h_t h; e_t[2] s; }
struct M {}
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { ` + parserStart + ` }
}
control V(inout H h, inout M m) { apply {} }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    ` + decls + `
    apply { ` + ingress + ` }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control C(inout H h, inout M m) { apply {} }
control D(packet_out pk, in H h) { apply { pk.emit(h.h); pk.emit(h.s); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
`
	path := filepath.Join(t.TempDir(), "shape.p4")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Compile(path, Options{})
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, src)
	}
	j, err := bmv2json.Parse(res.JSON)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.CheckBmv2Shapes(); err != nil {
		t.Errorf("the JSON would not run on bmv2: %v", err)
	}
	return j
}

// parserOps are the ops of every parser state, in order.
func parserOps(j *bmv2json.Program) []bmv2json.Primitive {
	var ops []bmv2json.Primitive
	for _, p := range j.Parsers {
		for _, st := range p.ParseStates {
			ops = append(ops, st.ParserOps...)
		}
	}
	return ops
}

// actionPrims are the primitives of every action, in order.
func actionPrims(j *bmv2json.Program) []bmv2json.Primitive {
	var prims []bmv2json.Primitive
	for _, a := range j.Actions {
		prims = append(prims, a.Primitives...)
	}
	return prims
}

// TestVerifyConditionIsOneExpressionNodeBecauseBmv2ReadsItAsTheOperation:
// bmv2 builds a parser verify's condition from the parameter itself, so a
// second wrapper leaves it an operation without an opcode and
// simple_switch crashes on the first packet (checksum-l4-bmv2,
// checksum1/2/3-bmv2, subparser-with-header-stack-bmv2).
func TestVerifyConditionIsOneExpressionNodeBecauseBmv2ReadsItAsTheOperation(t *testing.T) {
	j := shapeProgram(t, "", `pk.extract(h.h); verify(h.h.a == 1, error.NoMatch); transition accept;`, "sm.egress_spec = 0;")
	found := false
	for _, op := range parserOps(j) {
		if op.Op != "verify" {
			continue
		}
		found = true
		cond := op.Parameters[0]
		if cond.Type != "expression" || cond.Kind != bmv2json.KindOp || cond.Op.Op != "==" {
			t.Errorf("verify condition %s, want {\"type\":\"expression\",\"value\":{\"op\":\"==\",...}}", cond)
		}
	}
	if !found {
		t.Fatal("no verify parser op")
	}
}

// TestStackElementAtARuntimeIndexAsDestinationIsWrappedBecauseBmv2RefusesABareOperation:
// a primitive's expression parameter must hold a typed node; an
// access_field operation directly under the destination makes bmv2 refuse
// the program ("Invalid 'type' in expression") (gauntlet_index_1/7/9-bmv2,
// opassign2-bmv2, predication_issue_3).
func TestStackElementAtARuntimeIndexAsDestinationIsWrappedBecauseBmv2RefusesABareOperation(t *testing.T) {
	j := shapeProgram(t, "", `pk.extract(h.h); pk.extract(h.s.next); pk.extract(h.s.next); transition accept;`,
		"h.s[h.h.i].v = 8w1; sm.egress_spec = 0;")
	found := false
	for _, pr := range actionPrims(j) {
		dst := pr.Parameters[0]
		if pr.Op != "assign" || dst.Type != "expression" {
			continue
		}
		found = true
		if dst.Kind != bmv2json.KindInner || dst.Inner.Kind != bmv2json.KindOp || dst.Inner.Op.Op != "access_field" {
			t.Errorf("destination %s, want {\"type\":\"expression\",\"value\":{\"type\":\"expression\",\"value\":{\"op\":\"access_field\",...}}}", dst)
		}
	}
	if !found {
		t.Fatal("no assignment to a stack element at a run-time index")
	}
}

// TestParserSetFromAStacksLastElementGoesThroughAnExpressionBecauseBmv2TakesNoStackFieldSource:
// bmv2's parser set takes a field, hexstr, lookahead or expression source
// and refuses a stack_field (subparser-with-header-stack-bmv2).
func TestParserSetFromAStacksLastElementGoesThroughAnExpressionBecauseBmv2TakesNoStackFieldSource(t *testing.T) {
	j := shapeProgram(t, "", `pk.extract(h.h); pk.extract(h.s.next); h.h.a = h.s.last.v; transition accept;`, "sm.egress_spec = 0;")
	found := false
	for _, op := range parserOps(j) {
		if op.Op != "set" || !strings.Contains(op.Parameters[1].String(), "stack_field") {
			continue
		}
		found = true
		if src := op.Parameters[1]; src.Type != "expression" || src.Kind != bmv2json.KindInner || src.Inner.Type != "stack_field" {
			t.Errorf("set source %s, want {\"type\":\"expression\",\"value\":{\"type\":\"stack_field\",...}}", src)
		}
	}
	if !found {
		t.Fatal("no parser set from the stack's last element")
	}
}

// TestInoutArgumentTheActionNeverNamesIsNotCopiedBecauseBmv2AbortsOnAnOutOfRangeStackIndex:
// copying the argument in and out would read and write a header stack
// element at a run-time index, and bmv2 aborts (std::out_of_range) when
// the index is beyond the stack, though the action never looks at it; p4c
// leaves such copies out too (gauntlet_index_5-bmv2).
func TestInoutArgumentTheActionNeverNamesIsNotCopiedBecauseBmv2AbortsOnAnOutOfRangeStackIndex(t *testing.T) {
	j := shapeProgram(t, "action ignore(inout bit<8> x) {}", `pk.extract(h.h); transition accept;`,
		"ignore(h.s[h.h.i].v); sm.egress_spec = 0;")
	for _, pr := range actionPrims(j) {
		for _, p := range pr.Parameters {
			if strings.Contains(p.String(), "dereference_header_stack") {
				t.Errorf("%s %s reads or writes the stack element the action never names", pr.Op, p)
			}
		}
	}
}
