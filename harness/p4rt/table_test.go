package p4rt

import (
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

func TestInsertedRouteForwardsThenModifyAndDeleteChangeIt(t *testing.T) {
	f := newFixture(t)
	f.setup()
	frame := ipv4Frame([4]byte{10, 1, 2, 3})
	if out := f.process(1, frame); len(out) != 0 {
		t.Fatalf("before any route (default action drop): %s", describeOutputs(out))
	}
	f.mustWrite(update(p4v1.Update_INSERT, tableEntity(f.route(ip(10, 0, 0, 0), 8, 3))))
	out := f.process(1, frame)
	if len(out) != 1 || out[0].Port != 3 || out[0].Data[22] != 63 {
		t.Fatalf("after the route to port 3: %s, want one packet on port 3 with TTL 63", describeOutputs(out))
	}
	f.mustWrite(update(p4v1.Update_MODIFY, tableEntity(f.route(ip(10, 0, 0, 0), 8, 5))))
	if out := f.process(1, frame); len(out) != 1 || out[0].Port != 5 {
		t.Fatalf("after modifying the route to port 5: %s", describeOutputs(out))
	}
	f.mustWrite(update(p4v1.Update_DELETE, tableEntity(f.route(ip(10, 0, 0, 0), 8, 0))))
	if out := f.process(1, frame); len(out) != 0 {
		t.Fatalf("after deleting the route: %s", describeOutputs(out))
	}
}

func TestDuplicateInsertIsAlreadyExistsAndMissingEntryNotFound(t *testing.T) {
	f := newFixture(t)
	f.setup()
	f.mustWrite(update(p4v1.Update_INSERT, tableEntity(f.route(ip(10, 0, 0, 0), 8, 3))))
	// the padded and the canonical form of the same prefix are one entry
	err := f.write(1, update(p4v1.Update_INSERT, tableEntity(f.route([]byte{10, 0, 0, 0}, 8, 4))))
	oneUpdateError(t, err, codes.AlreadyExists, "updates[0].entity.table_entry", "TestIngress.ipv4_lpm")
	err = f.write(1, update(p4v1.Update_MODIFY, tableEntity(f.route(ip(11, 0, 0, 0), 8, 3))))
	oneUpdateError(t, err, codes.NotFound, "updates[0].entity.table_entry")
	err = f.write(1, update(p4v1.Update_DELETE, tableEntity(f.route(ip(10, 0, 0, 0), 16, 3))))
	oneUpdateError(t, err, codes.NotFound, "updates[0].entity.table_entry")
}

func TestBatchContinuesOnErrorWithOneErrorPerUpdate(t *testing.T) {
	f := newFixture(t)
	f.setup()
	bad := f.route(ip(10, 0, 0, 0), 8, 3)
	bad.Match[0].FieldId = 7
	err := f.write(1,
		update(p4v1.Update_INSERT, tableEntity(f.route(ip(10, 0, 0, 0), 8, 3))),
		update(p4v1.Update_INSERT, tableEntity(bad)),
		update(p4v1.Update_INSERT, tableEntity(f.route(ip(11, 0, 0, 0), 8, 4))),
	)
	details := writeDetails(t, err)
	if len(details) != 3 {
		t.Fatalf("%d details for 3 updates", len(details))
	}
	if details[0].CanonicalCode != int32(codes.OK) || details[2].CanonicalCode != int32(codes.OK) {
		t.Fatalf("the good updates report %v and %v, want OK", details[0], details[2])
	}
	want := "updates[1].entity.table_entry.match[0].field_id: 7 is not a match field of table TestIngress.ipv4_lpm"
	if details[1].CanonicalCode != int32(codes.InvalidArgument) || details[1].Message != want {
		t.Fatalf("bad update: %v %q, want INVALID_ARGUMENT %q", codes.Code(details[1].CanonicalCode), details[1].Message, want)
	}
	// the updates around the bad one were applied
	if got := f.read(tableEntity(&p4v1.TableEntry{TableId: f.tableID("TestIngress.ipv4_lpm")})); len(got) != 2 {
		t.Fatalf("%d entries after the batch, want 2", len(got))
	}
}

func TestMalformedTableEntriesAreInvalidArgumentNamingTheField(t *testing.T) {
	f := newFixture(t)
	f.setup()
	acl := f.tableID("TestIngress.acl")
	setPort := f.actionID("TestIngress.set_port")
	for _, tc := range []struct {
		name string
		te   *p4v1.TableEntry
		want string
	}{
		{"unknown table", &p4v1.TableEntry{TableId: 99}, "table_entry.table_id: 99 is not a table"},
		{"value wider than the field", f.route([]byte{1, 10, 0, 0, 0}, 8, 1), "table_entry.match[0].lpm.value: hdr.ipv4.dstAddr: 5 bytes"},
		{"bits beyond the prefix", f.route(ip(10, 0, 0, 1), 8, 1), "table_entry.match[0].lpm.value: hdr.ipv4.dstAddr: 0x0a000001 has bits set beyond the /8 prefix"},
		{"prefix length 0", f.route(ip(0, 0, 0, 0), 0, 1), "table_entry.match[0].lpm.prefix_len"},
		{"empty value", f.route(nil, 8, 1), "table_entry.match[0].lpm.value: hdr.ipv4.dstAddr: empty byte string"},
		{"parameter too wide", f.route(ip(10, 0, 0, 0), 8, 0), ""},
		{"wrong match kind", &p4v1.TableEntry{TableId: f.tableID("TestIngress.ipv4_lpm"),
			Match:  []*p4v1.FieldMatch{ternary(1, ip(10, 0, 0, 0), ip(255, 0, 0, 0))},
			Action: action(f.actionID("TestIngress.forward"), []byte{1})}, "table_entry.match[0].field_match_type: field hdr.ipv4.dstAddr matches lpm, not ternary"},
		{"action of another table", &p4v1.TableEntry{TableId: f.tableID("TestIngress.ipv4_lpm"),
			Match: []*p4v1.FieldMatch{lpm(1, ip(10, 0, 0, 0), 8)}, Action: action(setPort, []byte{1})},
			"table_entry.action.action.action_id"},
		{"missing parameter", &p4v1.TableEntry{TableId: f.tableID("TestIngress.ipv4_lpm"),
			Match: []*p4v1.FieldMatch{lpm(1, ip(10, 0, 0, 0), 8)}, Action: action(f.actionID("TestIngress.forward"))},
			"table_entry.action.action.params: parameter 1 (port) of action TestIngress.forward is missing"},
		{"ternary without priority", &p4v1.TableEntry{TableId: acl,
			Match: []*p4v1.FieldMatch{ternary(2, []byte{8, 0}, []byte{0xff, 0xff})}, Action: action(setPort, []byte{1})},
			"table_entry.priority: 0"},
		{"ternary value outside its mask", &p4v1.TableEntry{TableId: acl, Priority: 1,
			Match: []*p4v1.FieldMatch{ternary(2, []byte{8, 1}, []byte{0xff, 0})}, Action: action(setPort, []byte{1})},
			"table_entry.match[0].ternary.value: hdr.ethernet.etherType: 0x0801 has bits set outside the mask 0xff00"},
		{"ternary mask zero", &p4v1.TableEntry{TableId: acl, Priority: 1,
			Match: []*p4v1.FieldMatch{ternary(2, []byte{0}, []byte{0})}, Action: action(setPort, []byte{1})},
			"table_entry.match[0].ternary.mask"},
		{"priority on an lpm table", func() *p4v1.TableEntry { e := f.route(ip(10, 0, 0, 0), 8, 1); e.Priority = 3; return e }(),
			"table_entry.priority: 3"},
		{"field twice", &p4v1.TableEntry{TableId: acl, Priority: 1,
			Match:  []*p4v1.FieldMatch{ternary(2, []byte{8, 0}, []byte{0xff, 0xff}), ternary(2, []byte{8, 0}, []byte{0xff, 0xff})},
			Action: action(setPort, []byte{1})}, "table_entry.match[1].field_id: field 2 (hdr.ethernet.etherType) is matched twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := tc.te
			if tc.name == "parameter too wide" {
				te.Action = action(f.actionID("TestIngress.forward"), []byte{2, 0})
				tc.want = "table_entry.action.action.params[0].value: port: value 0x0200 does not fit in 9 bits"
			}
			err := f.write(1, update(p4v1.Update_INSERT, tableEntity(te)))
			oneUpdateError(t, err, codes.InvalidArgument, "updates[0].entity."+tc.want)
		})
	}
}

func TestTernaryEntryWithLargerPriorityWins(t *testing.T) {
	f := newFixture(t)
	f.setup()
	acl := f.tableID("TestIngress.acl")
	setPort := f.actionID("TestIngress.set_port")
	anyIPv4 := &p4v1.TableEntry{TableId: acl, Priority: 10,
		Match: []*p4v1.FieldMatch{ternary(2, []byte{8, 0}, []byte{0xff, 0xff})}, Action: action(setPort, []byte{6})}
	host2 := &p4v1.TableEntry{TableId: acl, Priority: 20,
		Match:  []*p4v1.FieldMatch{ternary(1, []byte{2}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})},
		Action: action(setPort, []byte{7})}
	f.mustWrite(update(p4v1.Update_INSERT, tableEntity(anyIPv4)), update(p4v1.Update_INSERT, tableEntity(host2)))
	frame := ipv4Frame([4]byte{1, 2, 3, 4}) // to MAC 00:00:00:00:00:02, IPv4
	if out := f.process(1, frame); len(out) != 1 || out[0].Port != 7 {
		t.Fatalf("both entries match: %s, want port 7 (priority 20)", describeOutputs(out))
	}
	host2.Priority = 5
	f.mustWrite(update(p4v1.Update_DELETE, tableEntity(&p4v1.TableEntry{TableId: acl, Priority: 20, Match: host2.Match})),
		update(p4v1.Update_INSERT, tableEntity(host2)))
	if out := f.process(1, frame); len(out) != 1 || out[0].Port != 6 {
		t.Fatalf("after lowering the host entry to priority 5: %s, want port 6 (priority 10)", describeOutputs(out))
	}
}

func TestDefaultActionModifyResetAndRead(t *testing.T) {
	f := newFixture(t)
	f.setup()
	lpmTable := f.tableID("TestIngress.ipv4_lpm")
	frame := ipv4Frame([4]byte{192, 168, 0, 1})
	def := &p4v1.TableEntry{TableId: lpmTable, IsDefaultAction: true, Action: action(f.actionID("TestIngress.forward"), []byte{4})}
	f.mustWrite(update(p4v1.Update_MODIFY, tableEntity(def)))
	if out := f.process(1, frame); len(out) != 1 || out[0].Port != 4 {
		t.Fatalf("miss with default forward(4): %s", describeOutputs(out))
	}
	got := f.read(tableEntity(&p4v1.TableEntry{TableId: lpmTable, IsDefaultAction: true}))
	if len(got) != 1 || !proto.Equal(got[0].GetTableEntry(), def) {
		t.Fatalf("read default entry: %v, want %v", got, def)
	}
	// no action: back to the program's default (drop)
	f.mustWrite(update(p4v1.Update_MODIFY, tableEntity(&p4v1.TableEntry{TableId: lpmTable, IsDefaultAction: true})))
	if out := f.process(1, frame); len(out) != 0 {
		t.Fatalf("miss after reset to drop: %s", describeOutputs(out))
	}
	got = f.read(tableEntity(&p4v1.TableEntry{TableId: lpmTable, IsDefaultAction: true}))
	if len(got) != 1 || got[0].GetTableEntry().GetAction().GetAction().GetActionId() != f.actionID("TestIngress.drop") {
		t.Fatalf("default entry after reset: %v", got)
	}
	err := f.write(1, update(p4v1.Update_INSERT, tableEntity(def)))
	oneUpdateError(t, err, codes.InvalidArgument, "updates[0].entity.table_entry.is_default_action")
}

func TestReadAllTablesOneTableAndOneEntryCanonically(t *testing.T) {
	f := newFixture(t)
	f.setup()
	acl := f.tableID("TestIngress.acl")
	// padded values are read back canonical (no leading zero bytes)
	padded := &p4v1.TableEntry{TableId: acl, Priority: 3,
		Match:  []*p4v1.FieldMatch{ternary(2, []byte{0, 0x42}, []byte{0, 0xff})},
		Action: action(f.actionID("TestIngress.set_port"), []byte{0, 1})}
	canon := &p4v1.TableEntry{TableId: acl, Priority: 3,
		Match:  []*p4v1.FieldMatch{ternary(2, []byte{0x42}, []byte{0xff})},
		Action: action(f.actionID("TestIngress.set_port"), []byte{1})}
	f.mustWrite(
		update(p4v1.Update_INSERT, tableEntity(f.route(ip(10, 0, 0, 0), 8, 1))),
		update(p4v1.Update_INSERT, tableEntity(f.route(ip(10, 1, 0, 0), 16, 2))),
		update(p4v1.Update_INSERT, tableEntity(padded)))
	if got := f.read(tableEntity(&p4v1.TableEntry{})); len(got) != 3 {
		t.Fatalf("all tables: %d entries, want 3", len(got))
	}
	if got := f.read(tableEntity(&p4v1.TableEntry{TableId: f.tableID("TestIngress.ipv4_lpm")})); len(got) != 2 {
		t.Fatalf("ipv4_lpm: %d entries, want 2", len(got))
	}
	got := f.read(tableEntity(&p4v1.TableEntry{TableId: acl, Priority: 3, Match: canon.Match}))
	if len(got) != 1 || !proto.Equal(got[0].GetTableEntry(), canon) {
		t.Fatalf("one acl entry: %v, want %v", got, canon)
	}
	got = f.read(tableEntity(&p4v1.TableEntry{TableId: f.tableID("TestIngress.ipv4_lpm"), Match: []*p4v1.FieldMatch{lpm(1, ip(10, 1, 0, 0), 16)}, CounterData: &p4v1.CounterData{}}))
	if len(got) != 1 || got[0].GetTableEntry().GetCounterData() == nil {
		t.Fatalf("one route with its counter data: %v", got)
	}
}
