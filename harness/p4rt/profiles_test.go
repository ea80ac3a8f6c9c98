package p4rt

import (
	"encoding/json"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/grid-ina/grid/harness/p4c"
)

const selectorID = 0x11000001

// selectorProgram is the test program with the acl table made indirect
// over an action selector hashing ethernet.srcAddr (identity), as p4c
// would emit for `implementation = action_selector(...)`, which the
// embedded compiler does not support.
func selectorProgram(t *testing.T) *p4c.Result {
	t.Helper()
	base := testProgram(t)
	var doc map[string]any
	if err := json.Unmarshal(base.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range doc["pipelines"].([]any) {
		pl := p.(map[string]any)
		if pl["name"] != "ingress" {
			continue
		}
		for _, tb := range pl["tables"].([]any) {
			if tm := tb.(map[string]any); tm["name"] == "TestIngress.acl" {
				tm["type"], tm["action_profile"] = "indirect_ws", "TestIngress.acl_selector"
			}
		}
		pl["action_profiles"] = []any{map[string]any{"name": "TestIngress.acl_selector", "id": 0, "max_size": 16,
			"selector": map[string]any{"algo": "identity", "input": []any{map[string]any{"type": "field", "value": []any{"ethernet", "srcAddr"}}}}}}
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	info := proto.Clone(base.P4Info).(*p4configv1.P4Info)
	var aclID uint32
	for _, tb := range info.Tables {
		if tb.Preamble.Name == "TestIngress.acl" {
			tb.ImplementationId, aclID = selectorID, tb.Preamble.Id
		}
	}
	info.ActionProfiles = append(info.ActionProfiles, &p4configv1.ActionProfile{
		Preamble: &p4configv1.Preamble{Id: selectorID, Name: "TestIngress.acl_selector"},
		TableIds: []uint32{aclID}, WithSelector: true, Size: 16, MaxGroupSize: 4})
	return &p4c.Result{Name: "selector", JSON: js, P4Info: info}
}

func memberEntity(id uint32, act *p4v1.Action) *p4v1.Entity {
	return &p4v1.Entity{Entity: &p4v1.Entity_ActionProfileMember{ActionProfileMember: &p4v1.ActionProfileMember{
		ActionProfileId: selectorID, MemberId: id, Action: act}}}
}

func groupEntity(id uint32, members ...uint32) *p4v1.Entity {
	g := &p4v1.ActionProfileGroup{ActionProfileId: selectorID, GroupId: id}
	for _, m := range members {
		g.Members = append(g.Members, &p4v1.ActionProfileGroup_Member{MemberId: m, Weight: 1})
	}
	return &p4v1.Entity{Entity: &p4v1.Entity_ActionProfileGroup{ActionProfileGroup: g}}
}

func TestActionSelectorGroupSpreadsBySourceAddressAndMembersAreRead(t *testing.T) {
	f := newFixture(t)
	f.prog = selectorProgram(t)
	f.setup()
	setPort := f.actionID("TestIngress.set_port")
	toPort := func(p byte) *p4v1.Action { return action(setPort, []byte{p}).GetAction() }
	f.mustWrite(update(p4v1.Update_INSERT, memberEntity(1, toPort(5))), update(p4v1.Update_INSERT, memberEntity(2, toPort(6))),
		update(p4v1.Update_INSERT, groupEntity(10, 1, 2)))
	ipv4Any := []*p4v1.FieldMatch{ternary(2, []byte{8, 0}, []byte{0xff, 0xff})}
	entry := &p4v1.TableEntry{TableId: f.tableID("TestIngress.acl"), Priority: 1, Match: ipv4Any,
		Action: &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileGroupId{ActionProfileGroupId: 10}}}
	f.mustWrite(update(p4v1.Update_INSERT, tableEntity(entry)))
	frame := ipv4Frame([4]byte{1, 2, 3, 4})
	for src, want := range map[byte]uint32{0: 5, 1: 6, 2: 5} {
		frame[11] = src
		if out := f.process(1, frame); len(out) != 1 || out[0].Port != want {
			t.Fatalf("source address ending %d: %s, want port %d", src, describeOutputs(out), want)
		}
	}
	// repoint the entry at one member
	entry.Action = &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileMemberId{ActionProfileMemberId: 2}}
	f.mustWrite(update(p4v1.Update_MODIFY, tableEntity(entry)))
	frame[11] = 0
	if out := f.process(1, frame); len(out) != 1 || out[0].Port != 6 {
		t.Fatalf("entry on member 2: %s, want port 6", describeOutputs(out))
	}
	got := f.read(memberEntity(0, nil))
	if len(got) != 2 || !proto.Equal(got[1], memberEntity(2, toPort(6))) {
		t.Fatalf("read members: %v", got)
	}
	if got := f.read(groupEntity(0)); len(got) != 1 || !proto.Equal(got[0], groupEntity(10, 1, 2)) {
		t.Fatalf("read groups: %v", got)
	}
	// member 2 is in use by the entry and group 10: it cannot go
	err := f.write(1, update(p4v1.Update_DELETE, memberEntity(2, nil)))
	oneUpdateError(t, err, codes.FailedPrecondition, "updates[0].entity.action_profile_member.member_id")
	err = f.write(1, update(p4v1.Update_INSERT, groupEntity(11, 1, 9)))
	oneUpdateError(t, err, codes.NotFound, "updates[0].entity.action_profile_group.members[1].member_id: action profile TestIngress.acl_selector has no member 9")
	entry.Action = action(setPort, []byte{1})
	err = f.write(1, update(p4v1.Update_MODIFY, tableEntity(entry)))
	oneUpdateError(t, err, codes.InvalidArgument, "uses action profile TestIngress.acl_selector")
}
