package bmv2json

import (
	"os"
	"path/filepath"
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
	if got := p.Actions[0].Primitives[0].Parameters[1]; got.Kind != KindInner || got.Inner != sum {
		t.Errorf("assign source %s, want the operation wrapped once more", got)
	}
}
