package client

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/grid-ina/grid/harness/p4c"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

var compiled = sync.OnceValues(func() (*p4c.Result, error) {
	return p4c.Compile(filepath.Join("testdata", "ctl.p4"), p4c.Options{})
})

// ctl compiles testdata/ctl.p4 (once per test binary).
func ctl(t testing.TB) *p4c.Result {
	t.Helper()
	res, err := compiled()
	if err != nil {
		t.Fatalf("compile testdata/ctl.p4: %v", err)
	}
	return res
}

func ctlSymbols(t testing.TB) *symbols { return newSymbols(ctl(t).P4Info) }

func TestCanonicalStripsLeadingZerosButKeepsOneByteForZero(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{[]byte{0, 0, 1, 2}, []byte{1, 2}},
		{[]byte{0x80}, []byte{0x80}},
		{[]byte{0, 0}, []byte{0}},
		{nil, []byte{0}},
	} {
		if got := Canonical(tc.in); !bytes.Equal(got, tc.want) {
			t.Errorf("Canonical(%x) = %x, want %x", tc.in, got, tc.want)
		}
	}
}

func TestTableEntrySendsCanonicalValuesAndMasksTernaryAndLPM(t *testing.T) {
	s := ctlSymbols(t)
	te, err := s.tableEntry(TableEntry{Table: "acl", Priority: 10,
		Match: []Match{
			{Value: []byte{0, 0, 0, 0, 0x12, 0x34}, Mask: []byte{0, 0, 0, 0, 0xff, 0x00}},
			{Field: "hdr.ethernet.etherType", Value: []byte{0x08, 0x00}, High: []byte{0x08, 0xff}},
		},
		Action: "CtlIngress.deny"}, true)
	if err != nil {
		t.Fatal(err)
	}
	tern := te.GetMatch()[0].GetTernary()
	if !bytes.Equal(tern.GetValue(), []byte{0x12, 0x00}) || !bytes.Equal(tern.GetMask(), []byte{0xff, 0x00}) {
		t.Errorf("ternary value %x mask %x, want 1200 (masked, canonical) and ff00", tern.GetValue(), tern.GetMask())
	}
	rng := te.GetMatch()[1].GetRange()
	if !bytes.Equal(rng.GetLow(), []byte{0x08, 0x00}) || !bytes.Equal(rng.GetHigh(), []byte{0x08, 0xff}) {
		t.Errorf("range %x..%x, want 0800..08ff", rng.GetLow(), rng.GetHigh())
	}
	if te.GetPriority() != 10 || te.GetAction().GetAction().GetActionId() != s.actions.byName["CtlIngress.deny"].GetPreamble().GetId() {
		t.Errorf("priority %d action %v", te.GetPriority(), te.GetAction())
	}

	te, err = s.tableEntry(TableEntry{Table: "CtlIngress.mirror_by_prefix", Priority: 1,
		Match:  []Match{{Value: []byte{0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}, PrefixLen: 12}, {Value: []byte{0, 3}}},
		Action: "mirror", Args: [][]byte{{0, 0, 0, 5}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	lpm := te.GetMatch()[0].GetLpm()
	if !bytes.Equal(lpm.GetValue(), []byte{0x0a, 0x00, 0, 0, 0, 0}) || lpm.GetPrefixLen() != 12 {
		t.Errorf("lpm %x/%d, want 0a0000000000/12 (bits past the prefix cleared)", lpm.GetValue(), lpm.GetPrefixLen())
	}
	if opt := te.GetMatch()[1].GetOptional(); !bytes.Equal(opt.GetValue(), []byte{3}) {
		t.Errorf("optional %x, want 03", opt.GetValue())
	}
	if p := te.GetAction().GetAction().GetParams()[0]; !bytes.Equal(p.GetValue(), []byte{5}) {
		t.Errorf("parameter %x, want canonical 05", p.GetValue())
	}
}

func TestTableEntryLeavesDontCareFieldsOut(t *testing.T) {
	s := ctlSymbols(t)
	for name, match := range map[string][]Match{
		"nothing given":   nil,
		"wildcards":       {{Wildcard: true}, {Wildcard: true}},
		"zero mask, full": {{Value: []byte{1}, Mask: []byte{0}}, {Value: []byte{0}, High: []byte{0xff, 0xff}}},
	} {
		te, err := s.tableEntry(TableEntry{Table: "acl", Priority: 1, Match: match, Action: "allow"}, true)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(te.GetMatch()) != 0 {
			t.Errorf("%s: match %v, want no fields", name, te.GetMatch())
		}
	}
	te, err := s.tableEntry(TableEntry{Table: "mirror_by_prefix", Priority: 1, Match: []Match{{Value: []byte{1}, PrefixLen: 0}}, Action: "NoAction"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(te.GetMatch()) != 0 {
		t.Errorf("lpm /0: match %v, want no fields", te.GetMatch())
	}
	// An optional field given ternary-style (as STF resolves an omitted
	// key): mask zero is "don't care", left out, where a value would make
	// bmv2 match it exactly (simple_switch_grpc installs Optional{0} as
	// 0 &&& 0xff..); a full mask is the value.
	lpmAny := Match{Value: []byte{0}, PrefixLen: 0}
	te, err = s.tableEntry(TableEntry{Table: "mirror_by_prefix", Priority: 1, Match: []Match{lpmAny, {Value: []byte{0, 0}, Mask: []byte{0, 0}}}, Action: "NoAction"}, true)
	if err != nil || len(te.GetMatch()) != 0 {
		t.Errorf("optional with mask 0: match %v (%v), want no fields", te.GetMatch(), err)
	}
	te, err = s.tableEntry(TableEntry{Table: "mirror_by_prefix", Priority: 1, Match: []Match{lpmAny, {Value: []byte{0, 3}, Mask: []byte{0x01, 0xff}}}, Action: "NoAction"}, true)
	if err != nil || len(te.GetMatch()) != 1 || !bytes.Equal(te.GetMatch()[0].GetOptional().GetValue(), []byte{3}) {
		t.Errorf("optional with a full mask: match %v (%v), want the value 03", te.GetMatch(), err)
	}
	if _, err = s.tableEntry(TableEntry{Table: "mirror_by_prefix", Priority: 1, Match: []Match{lpmAny, {Value: []byte{0, 3}, Mask: []byte{0, 0xff}}}, Action: "NoAction"}, true); err == nil {
		t.Error("optional with a partial mask: no error")
	}
}

func TestTableEntryErrorsNameTheTableFieldAndAction(t *testing.T) {
	s := ctlSymbols(t)
	mac := []byte{0, 0, 0, 0, 0, 2}
	for _, tc := range []struct {
		e    TableEntry
		want string
	}{
		{TableEntry{Table: "nosuch"}, `the P4Info has no table "nosuch" (its tables: CtlIngress.acl, CtlIngress.fwd, CtlIngress.mirror_by_prefix)`},
		{TableEntry{Table: "fwd", Match: []Match{{Field: "dst", Value: mac}}}, `table CtlIngress.fwd has no match field "dst" (its fields: hdr.ethernet.dstAddr)`},
		{TableEntry{Table: "fwd"}, "table CtlIngress.fwd match field hdr.ethernet.dstAddr: an exact field needs a value"},
		{TableEntry{Table: "fwd", Match: []Match{{Value: mac}, {Value: mac}}}, "table CtlIngress.fwd has 1 match fields, entry gives 2"},
		{TableEntry{Table: "fwd", Match: []Match{{Value: []byte{1, 0, 0, 0, 0, 0, 0}}}}, "table CtlIngress.fwd match field hdr.ethernet.dstAddr: value: value 0x01000000000000 does not fit in 48 bits"},
		{TableEntry{Table: "fwd", Match: []Match{{Value: mac}}, Priority: 3, Action: "drop"}, "table CtlIngress.fwd has only exact and lpm fields: its entries take priority 0, not 3"},
		{TableEntry{Table: "acl", Action: "allow"}, "table CtlIngress.acl has ternary, range or optional fields: its entries need a priority of at least 1, not 0"},
		{TableEntry{Table: "fwd", Match: []Match{{Value: mac}}, Action: "deny"}, "action CtlIngress.deny is not an action of table CtlIngress.fwd (it allows CtlIngress.forward, CtlIngress.flood, CtlIngress.to_cpu, CtlIngress.drop)"},
		{TableEntry{Table: "fwd", Match: []Match{{Value: mac}}, Action: "forward"}, "action CtlIngress.forward takes 1 parameters (port (9 bits)), got 0"},
		{TableEntry{Table: "fwd", Match: []Match{{Value: mac}}, Action: "forward", Args: [][]byte{{2, 0}}}, "action CtlIngress.forward parameter port: value 0x0200 does not fit in 9 bits"},
		{TableEntry{Table: "mirror_by_prefix", Priority: 1, Match: []Match{{Value: mac, PrefixLen: 49}}}, "table CtlIngress.mirror_by_prefix match field hdr.ethernet.dstAddr: prefix length 49 is outside 0..48"},
	} {
		_, err := s.tableEntry(tc.e, true)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%+v:\n got error %v\nwant       %s", tc.e, err, tc.want)
		}
	}
}

func TestReadEntriesConvertsBackToNamesWithPaddedValues(t *testing.T) {
	s := ctlSymbols(t)
	in := TableEntry{Table: "acl", Priority: 7,
		Match:  []Match{{Value: []byte{0x12, 0}, Mask: []byte{0xff, 0}}},
		Action: "deny"}
	te, err := s.tableEntry(in, true)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.fromTableEntry(te)
	if err != nil {
		t.Fatal(err)
	}
	if got.Table != "CtlIngress.acl" || got.Action != "CtlIngress.deny" || got.Priority != 7 || len(got.Match) != 2 {
		t.Fatalf("got %+v", got)
	}
	m := got.Match[0]
	if m.Field != "hdr.ethernet.srcAddr" || !bytes.Equal(m.Value, []byte{0, 0, 0, 0, 0x12, 0}) || !bytes.Equal(m.Mask, []byte{0, 0, 0, 0, 0xff, 0}) {
		t.Errorf("ternary field read back as %+v", m)
	}
	if !got.Match[1].Wildcard {
		t.Errorf("the range field left out reads back as %+v, want a wildcard", got.Match[1])
	}
}

func TestWriteErrorNamesEachFailedUpdate(t *testing.T) {
	s := ctlSymbols(t)
	fwd := s.tables.byName["fwd"].GetPreamble().GetId()
	ctr := s.counters.byName["port_in"].GetPreamble().GetId()
	updates := []*p4v1.Update{
		{Type: p4v1.Update_INSERT, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: fwd}}}},
		{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: ctr, Index: &p4v1.Index{Index: 9}}}}},
		MulticastGroupUpdate(p4v1.Update_DELETE, 4, nil),
	}
	st, err := status.New(codes.Unknown, "batch failed").WithDetails(
		&p4v1.Error{CanonicalCode: int32(codes.OK)},
		&p4v1.Error{CanonicalCode: int32(codes.OutOfRange), Message: "index 9 is outside 0..7"},
		&p4v1.Error{CanonicalCode: int32(codes.NotFound), Message: "no group 4"},
	)
	if err != nil {
		t.Fatal(err)
	}
	err = newWriteError(s, updates, st.Err())
	var we *WriteError
	if !errors.As(err, &we) || len(we.Updates) != 2 || we.Code() != codes.OutOfRange {
		t.Fatalf("error %v, want a *WriteError with two failed updates, the first OUT_OF_RANGE", err)
	}
	want := "write: updates[1] (modify counter_entry CtlIngress.port_in[9]): OutOfRange: index 9 is outside 0..7; " +
		"updates[2] (delete multicast_group_entry 4): NotFound: no group 4"
	if err.Error() != want {
		t.Errorf("error\n %s\nwant\n %s", err, want)
	}

	whole := newWriteError(s, updates, status.Error(codes.PermissionDenied, "not primary"))
	if whole.Error() != "write: PermissionDenied: not primary" {
		t.Errorf("error without details: %v", whole)
	}
}

func TestLoadP4InfoReadsTextBinaryAndJSONAsP4cWritesThem(t *testing.T) {
	res := ctl(t)
	dir := t.TempDir()
	if _, err := res.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	js, err := protojson.Marshal(res.P4Info)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ctl.p4info.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ctl.p4info.txtpb", "ctl.p4info.binpb", "ctl.p4info.json"} {
		info, err := LoadP4Info(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(info, res.P4Info) {
			t.Errorf("%s does not load back as the P4Info the compiler made", name)
		}
	}
}

func TestLoadP4InfoRejectsUnknownNamesAndOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"x.yaml":  "tables: []",
		"x.txtpb": "tables { preamble { id: 1 ",
		"x.bin":   "\xff\xff\xff",
		"x.txt":   "# just a comment\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadP4Info(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
	}
	if _, err := LoadP4Info(filepath.Join(dir, "missing.txtpb")); err == nil {
		t.Error("a missing file loads")
	}
}
