package p4info

import (
	"os"
	"path/filepath"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/grid-ina/grid/harness/internal/repo"
)

func TestHashedIDsEqualP4cForKnownNames(t *testing.T) {
	st := NewSymbolTable()
	for _, s := range []Symbol{
		{Kind: p4configv1.P4Ids_TABLE, Name: "ingress.ipv4_da_lpm"},
		{Kind: p4configv1.P4Ids_ACTION, Name: "my_drop"},
	} {
		if err := st.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.AssignIDs(); err != nil {
		t.Fatal(err)
	}
	// Values from p4c's v1model-special-ops-bmv2.p4info.txtpb.
	if got := st.ID(p4configv1.P4Ids_TABLE, "ingress.ipv4_da_lpm"); got != 35996228 {
		t.Errorf("table id = %d, want 35996228", got)
	}
	if got := st.ID(p4configv1.P4Ids_ACTION, "my_drop"); got != 32609675 {
		t.Errorf("action id = %d, want 32609675", got)
	}
}

func TestIDAnnotationGetsTypePrefixAndCollisionsAreRejected(t *testing.T) {
	st := NewSymbolTable()
	if err := st.Add(Symbol{Kind: p4configv1.P4Ids_TABLE, Name: "c.t", ID: 5}); err != nil {
		t.Fatal(err)
	}
	if got := st.ID(p4configv1.P4Ids_TABLE, "c.t"); got != 0x02000005 {
		t.Errorf("id = %#x, want 0x02000005", got)
	}
	if err := st.Add(Symbol{Kind: p4configv1.P4Ids_TABLE, Name: "c.u", ID: 0x02000005}); err == nil {
		t.Error("duplicate @id accepted")
	}
	if err := st.Add(Symbol{Kind: p4configv1.P4Ids_TABLE, Name: "c.v", ID: 0x01000007}); err == nil {
		t.Error("@id with an action prefix accepted for a table")
	}
}

func TestAliasIsShortestUniqueSuffix(t *testing.T) {
	st := NewSymbolTable()
	for _, n := range []string{"ingress.a.t", "ingress.b.t", "ingress.x"} {
		if err := st.Add(Symbol{Kind: p4configv1.P4Ids_TABLE, Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"ingress.a.t": "a.t", "ingress.b.t": "b.t", "ingress.x": "x"} {
		if got := st.Alias(name); got != want {
			t.Errorf("Alias(%q) = %q, want %q", name, got, want)
		}
	}
}

// sharedDir is ../shared/p4c-conformance/reference, or a skip.
func sharedDir(t *testing.T) string {
	t.Helper()
	return repo.SharedOrSkip(t, "p4c-conformance", "reference")
}

// Every ID and alias in p4c's reference P4Info files is reproduced from
// the names alone.
func TestSymbolTableReproducesEveryReferenceP4InfoID(t *testing.T) {
	ref := sharedDir(t)
	files, err := filepath.Glob(filepath.Join(ref, "*.p4info.txtpb"))
	if err != nil || len(files) == 0 {
		t.Skipf("no reference P4Info files in %s", ref)
	}
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var info p4configv1.P4Info
		if err := prototext.Unmarshal(data, &info); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		type ent struct {
			kind p4configv1.P4Ids_Prefix
			pre  *p4configv1.Preamble
		}
		var ents []ent
		for _, x := range info.Tables {
			ents = append(ents, ent{p4configv1.P4Ids_TABLE, x.Preamble})
		}
		for _, x := range info.Actions {
			ents = append(ents, ent{p4configv1.P4Ids_ACTION, x.Preamble})
		}
		for _, x := range info.Counters {
			ents = append(ents, ent{p4configv1.P4Ids_COUNTER, x.Preamble})
		}
		for _, x := range info.Registers {
			ents = append(ents, ent{p4configv1.P4Ids_REGISTER, x.Preamble})
		}
		st := NewSymbolTable()
		for _, e := range ents {
			if err := st.Add(Symbol{Kind: e.kind, Name: e.pre.Name}); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.AssignIDs(); err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if got := st.ID(e.kind, e.pre.Name); got != e.pre.Id {
				t.Errorf("%s: %s id = %d, p4c has %d", filepath.Base(f), e.pre.Name, got, e.pre.Id)
			}
			if got := st.Alias(e.pre.Name); got != e.pre.Alias {
				t.Errorf("%s: %s alias = %q, p4c has %q", filepath.Base(f), e.pre.Name, got, e.pre.Alias)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no entities checked")
	}
	t.Logf("%d IDs and aliases match p4c", checked)
}
