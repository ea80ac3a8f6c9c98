package p4rt

import (
	"path/filepath"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"

	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/p4c"
)

// Every example program and the GRID aggregator load: their P4Info, as the
// embedded compiler writes it, agrees with their bmv2 JSON.
func TestExampleProgramsAndAggregatorLoad(t *testing.T) {
	root := repo.RootOrFail(t)
	files, err := filepath.Glob(filepath.Join(root, "p4", "examples", "*.p4"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example programs: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			res, err := p4c.Compile(file, p4c.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := NewServer(Options{}).LoadPipeline(res.P4Info, res.JSON); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("aggregator.p4", func(t *testing.T) {
		// p4c directly, not harness/aggregator, which imports (through the
		// data plane) this package; the default build needs no defines.
		res, err := p4c.Compile(filepath.Join(root, "p4", "aggregator", "aggregator.p4"), p4c.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := NewServer(Options{}).LoadPipeline(res.P4Info, res.JSON); err != nil {
			t.Fatal(err)
		}
	})
}

// A table with const entries reads them back (is_const set) and refuses
// writes with PERMISSION_DENIED.
func TestConstEntriesAreReadAndCannotBeWritten(t *testing.T) {
	res, err := p4c.Compile(filepath.Join(repo.RootOrFail(t), "p4", "examples", "qos_classify.p4"), p4c.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	f.prog = res
	f.setup()
	table := f.tableID("QosIngress.dscp_of_class")
	got := f.read(tableEntity(&p4v1.TableEntry{TableId: table}))
	if len(got) != 3 {
		t.Fatalf("%d const entries read, want 3", len(got))
	}
	first := got[0].GetTableEntry()
	if !first.IsConst || string(first.Match[0].GetExact().GetValue()) != "\x05" || string(first.Action.GetAction().Params[0].Value) != "\x2e" {
		t.Fatalf("first const entry %v, want tc 5 -> mark(46), is_const", first)
	}
	err = f.write(1, update(p4v1.Update_DELETE, tableEntity(&p4v1.TableEntry{TableId: table, Match: first.Match})))
	oneUpdateError(t, err, codes.PermissionDenied, "table QosIngress.dscp_of_class has const entries")
}

// A match field of type error has no width in the P4Info (p4c leaves it 0);
// the server takes the JSON's and accepts entries on it.
func TestErrorTypedMatchFieldTakesTheJSONWidth(t *testing.T) {
	dir := repo.SharedOrSkip(t, "p4c-conformance")
	res, err := p4c.Compile(filepath.Join(dir, "programs", "issue1062-1-bmv2.p4"), p4c.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := res.P4Info.Tables[0].MatchFields[0].Bitwidth; w != 0 {
		t.Fatalf("the P4Info gives the error field %d bits; this test wants the 0 of p4c", w)
	}
	f := newFixture(t)
	f.prog = res
	f.setup()
	te := &p4v1.TableEntry{TableId: res.P4Info.Tables[0].Preamble.Id,
		Match:  []*p4v1.FieldMatch{{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: []byte{0, 0, 0, 1}}}}},
		Action: action(res.P4Info.Tables[0].ActionRefs[0].Id, []byte{7})}
	f.mustWrite(update(p4v1.Update_INSERT, tableEntity(te)))
	te.Match[0].GetExact().Value = []byte{1, 0, 0, 0, 0}
	err = f.write(1, update(p4v1.Update_INSERT, tableEntity(te)))
	oneUpdateError(t, err, codes.InvalidArgument, "updates[0].entity.table_entry.match[0].exact.value: m.my_err: 5 bytes")
}
