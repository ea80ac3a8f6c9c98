package p4rt

import (
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"

	"github.com/grid-ina/grid/harness/p4c"
)

// newFeaturesFixture serves testdata/p4rt_features.p4 (value set, digest,
// idle timeouts) to a primary controller.
func newFeaturesFixture(t *testing.T) (*fixture, *controller) {
	t.Helper()
	res, err := p4c.Compile("testdata/p4rt_features.p4", p4c.Options{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	f := newFixture(t)
	f.prog = res
	return f, f.setup()
}

// ethFrame is an Ethernet frame dst <- src of ethertype typ with two
// payload bytes.
func ethFrame(dst, src byte, typ uint16) []byte {
	return []byte{0, 0, 0, 0, 0, dst, 0, 0, 0, 0, 0, src, byte(typ >> 8), byte(typ), 0xaa, 0xbb}
}

func valueSetEntity(id uint32, values ...[]byte) *p4v1.Entity {
	e := &p4v1.ValueSetEntry{ValueSetId: id}
	for _, v := range values {
		e.Members = append(e.Members, &p4v1.ValueSetMember{Match: []*p4v1.FieldMatch{
			{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: v}}},
		}})
	}
	return &p4v1.Entity{Entity: &p4v1.Entity_ValueSetEntry{ValueSetEntry: e}}
}

// A ValueSetEntry MODIFY fills the parser value set: the parser takes the
// select case for its values from then on; Read returns the members; the
// set holds at most its size and is never inserted or deleted.
func TestValueSetEntriesSteerTheParser(t *testing.T) {
	f, _ := newFeaturesFixture(t)
	id := preambleID(t, f.prog.P4Info.ValueSets, "P.tagged")
	portOf := func(typ uint16) uint32 {
		out := f.process(0, ethFrame(2, 3, typ))
		if len(out) != 1 {
			t.Fatalf("%d packets out, want 1", len(out))
		}
		return out[0].Port
	}
	if p := portOf(0x1234); p != 1 {
		t.Fatalf("before the value set is written: port %d, want 1 (not tagged)", p)
	}
	f.mustWrite(update(p4v1.Update_MODIFY, valueSetEntity(id, []byte{0x12, 0x34}, []byte{0x88, 0x47})))
	if p := portOf(0x1234); p != 7 {
		t.Errorf("0x1234 in the value set: port %d, want 7 (tagged)", p)
	}
	if p := portOf(0x0800); p != 1 {
		t.Errorf("0x0800 not in the value set: port %d, want 1", p)
	}
	got := f.read(valueSetEntity(0))
	if len(got) != 1 || len(got[0].GetValueSetEntry().GetMembers()) != 2 {
		t.Fatalf("read %v, want the set with 2 members", got)
	}
	f.mustWrite(update(p4v1.Update_MODIFY, valueSetEntity(id, []byte{0x88, 0x47})))
	if p := portOf(0x1234); p != 1 {
		t.Errorf("0x1234 after the set was replaced: port %d, want 1", p)
	}
	for _, c := range []struct {
		name string
		u    *p4v1.Update
		code codes.Code
	}{
		{"insert", update(p4v1.Update_INSERT, valueSetEntity(id, []byte{1})), codes.InvalidArgument},
		{"more members than its size", update(p4v1.Update_MODIFY, valueSetEntity(id, []byte{1}, []byte{2}, []byte{3}, []byte{4}, []byte{5})), codes.ResourceExhausted},
		{"a value wider than the field", update(p4v1.Update_MODIFY, valueSetEntity(id, []byte{1, 2, 3})), codes.InvalidArgument},
		{"an unknown value set", update(p4v1.Update_MODIFY, valueSetEntity(id+1, []byte{1})), codes.NotFound},
	} {
		details := writeDetails(t, f.write(1, c.u))
		if len(details) != 1 || codes.Code(details[0].CanonicalCode) != c.code {
			t.Errorf("%s: %v, want %v", c.name, details, c.code)
		}
	}
}
