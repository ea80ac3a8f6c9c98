package bmv2json

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/internal/repo"
)

// TestCheckBmv2ShapesAcceptsEveryJSONRealP4cWrote runs the check on real
// p4c's output for the conformance corpus: what p4c writes is what bmv2
// reads, so the check must refuse none of it.
func TestCheckBmv2ShapesAcceptsEveryJSONRealP4cWrote(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repo.SharedOrSkip(t, "p4c-conformance"), "reference", "*.json"))
	if err != nil || len(files) == 0 {
		t.Skipf("no reference JSON in the corpus (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(b)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if err := p.CheckBmv2Shapes(); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}

// TestShapeForBmv2MakesEveryWrappingCheckBmv2ShapesRefusesRunnable
// shapes the three wrappings bmv2 cannot run and checks the result passes.
func TestShapeForBmv2MakesEveryWrappingCheckBmv2ShapesRefusesRunnable(t *testing.T) {
	sum := Expr("+", Field("h", "a"), Hexstr("0x1"))
	p := &Program{
		Actions: []Action{{Name: "a", Primitives: []Primitive{{Op: "assign", Parameters: []*Value{Field("h", "a"), sum}}}}},
		Parsers: []Parser{{Name: "parser", ParseStates: []ParseState{{Name: "start", ParserOps: []Primitive{
			{Op: "verify", Parameters: []*Value{Wrap(Expr("==", Field("h", "a"), Hexstr("0x1"))), Hexstr("0x1")}},
			{Op: "set", Parameters: []*Value{Field("h", "a"), {Type: "stack_field", Kind: KindNames, Names: []string{"s", "a"}}}},
		}}}}},
	}
	if p.CheckBmv2Shapes() == nil {
		t.Fatal("the unshaped program passes the check")
	}
	p.ShapeForBmv2()
	if err := p.CheckBmv2Shapes(); err != nil {
		t.Fatalf("after ShapeForBmv2: %v", err)
	}
	if got := p.Actions[0].Primitives[0].Parameters[1]; got.Kind != KindInner || got.Inner.Kind != KindOp || got.Inner.Op.Op != "+" {
		t.Errorf("assign source %s, want the operation wrapped once more", got)
	}
}

// TestActionParameterInsideAnExpressionIsALocalBecauseBmv2RefusesRuntimeData:
// bmv2 refuses a program whose expressions read an action parameter as
// "runtime_data" ("Invalid 'type' in expression"), and simple_switch_grpc
// then refuses every entry ("Error when adding match entry to target",
// qos_classify's mark action); p4c writes "local" there, and a primitive's
// own parameter stays "runtime_data".
func TestActionParameterInsideAnExpressionIsALocalBecauseBmv2RefusesRuntimeData(t *testing.T) {
	shifted := Expr("<<", Param(0), Hexstr("0x2"))
	p := &Program{Actions: []Action{{Name: "mark", Primitives: []Primitive{
		{Op: "assign", Parameters: []*Value{Field("h", "a"), shifted}},
		{Op: "assign", Parameters: []*Value{Field("h", "b"), Param(0)}},
	}}}}
	if err := p.CheckBmv2Shapes(); err == nil {
		t.Fatal("runtime_data inside an expression passes the check")
	}
	p.ShapeForBmv2()
	if err := p.CheckBmv2Shapes(); err != nil {
		t.Fatalf("after ShapeForBmv2: %v", err)
	}
	prims := p.Actions[0].Primitives
	if got := prims[0].Parameters[1].Inner.Op.Left; got.Type != "local" || got.Int != 0 {
		t.Errorf("parameter inside the expression %s, want {\"type\":\"local\",\"value\":0}", got)
	}
	if got := prims[1].Parameters[1]; got.Type != "runtime_data" {
		t.Errorf("the primitive's own parameter %s, want runtime_data", got)
	}
	if shifted.Op.Left.Type != "runtime_data" {
		t.Error("the shared expression node was changed in place")
	}
}

// TestOptionalKeyMatchTypeIsRefusedBecauseBmv2LoadsNoSuchKey: bmv2
// refuses a program with an "optional" table key ("Invalid match type"),
// and simple_switch_grpc then runs without it, refusing every entry; p4c
// writes optional keys as ternary.
func TestOptionalKeyMatchTypeIsRefusedBecauseBmv2LoadsNoSuchKey(t *testing.T) {
	p := &Program{Pipelines: []Pipeline{{Name: "ingress", Tables: []Table{{Name: "classify",
		Key: []TableKey{{MatchType: "optional", Name: "hdr.ipv4.protocol"}}}}}}}
	err := p.CheckBmv2Shapes()
	if err == nil || !strings.Contains(err.Error(), `pipelines[0].tables[0] (classify) key[0] (hdr.ipv4.protocol) match_type: "optional"`) {
		t.Errorf("got %v, want the key's match_type named", err)
	}
	p.Pipelines[0].Tables[0].Key[0].MatchType = "ternary"
	if err := p.CheckBmv2Shapes(); err != nil {
		t.Errorf("as ternary: %v", err)
	}
}
