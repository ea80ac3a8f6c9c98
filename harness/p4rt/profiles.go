package p4rt

import (
	"fmt"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/grid-ina/grid/harness/engine"
)

// profileDef is an action profile (with a selector: groups) and the
// members and groups the controller made, by their P4Runtime ids.
type profileDef struct {
	info     *p4configv1.ActionProfile
	name     string
	selector bool
	actions  map[uint32]p4configv1.ActionRef_Scope // of its tables

	// state (under Server.mu)
	members map[uint32]*memberState
	groups  map[uint32]*groupState
}

type memberState struct {
	handle engine.MemberHandle
	canon  *p4v1.ActionProfileMember
}

type groupState struct {
	handle engine.GroupHandle
	canon  *p4v1.ActionProfileGroup
}

func (pl *pipeline) resolveProfiles() error {
	for i, ap := range pl.info.ActionProfiles {
		path := fmt.Sprintf("config.p4info.action_profiles[%d]", i)
		if err := checkID(path, ap.GetPreamble(), pl.profiles); err != nil {
			return err
		}
		pl.profiles[ap.Preamble.Id] = &profileDef{info: ap, name: ap.Preamble.Name, selector: ap.WithSelector,
			actions: map[uint32]p4configv1.ActionRef_Scope{}, members: map[uint32]*memberState{}, groups: map[uint32]*groupState{}}
	}
	return nil
}

// bindProfile checks that a table of the P4Info uses the action profile
// its JSON table uses.
func (pl *pipeline) bindProfile(path string, td *tableDef, et engine.TableInfo) error {
	id := td.info.ImplementationId
	if id == 0 && et.ActionProfile == "" {
		return nil
	}
	pd, ok := pl.profiles[id]
	if !ok {
		return fmt.Errorf("%s.implementation_id: %d is not an action profile of the P4Info (the bmv2 JSON table uses %q)", path, id, et.ActionProfile)
	}
	if pd.name != et.ActionProfile {
		return fmt.Errorf("%s.implementation_id: table %q uses action profile %q in the P4Info, %q in the bmv2 JSON", path, td.name, pd.name, et.ActionProfile)
	}
	if pd.selector != et.HasSelector {
		return fmt.Errorf("%s: action profile %q has a selector in one of the P4Info and the bmv2 JSON only", path, pd.name)
	}
	for aid, scope := range td.actions {
		if scope != p4configv1.ActionRef_DEFAULT_ONLY {
			pd.actions[aid] = scope
		}
	}
	td.profile = pd
	return nil
}

// profileOf finds a profile by id for a write (no wildcard).
func (pl *pipeline) profileOf(path string, id uint32) (*profileDef, *fieldError) {
	pd, ok := pl.profiles[id]
	if !ok {
		return nil, errAt(codes.InvalidArgument, path, "%d is not an action profile of the P4Info", id)
	}
	return pd, nil
}

func (pl *pipeline) writeMember(typ p4v1.Update_Type, m *p4v1.ActionProfileMember) *fieldError {
	const path = "action_profile_member"
	pd, fe := pl.profileOf(path+".action_profile_id", m.ActionProfileId)
	if fe != nil {
		return fe
	}
	cur := pd.members[m.MemberId]
	set := func() *fieldError {
		pa, fe := pl.parseDirect(pd.actions, "action profile "+pd.name, m.Action, false)
		if fe != nil {
			return under(path+".action", fe)
		}
		canon := &p4v1.ActionProfileMember{ActionProfileId: m.ActionProfileId, MemberId: m.MemberId, Action: pa.canon.GetAction()}
		if cur != nil {
			if err := pl.sw.ModifyMember(pd.name, cur.handle, pa.name, pa.args); err != nil {
				return errAt(codes.InvalidArgument, path+".action", "%v", err)
			}
			cur.canon = canon
			return nil
		}
		h, err := pl.sw.AddMember(pd.name, pa.name, pa.args)
		if err != nil {
			return errAt(codes.ResourceExhausted, path, "%v", err)
		}
		pd.members[m.MemberId] = &memberState{handle: h, canon: canon}
		return nil
	}
	del := func() *fieldError {
		// the engine refuses to delete a member a group or entry uses
		if err := pl.sw.DeleteMember(pd.name, cur.handle); err != nil {
			return errAt(codes.FailedPrecondition, path+".member_id", "%v", err)
		}
		delete(pd.members, m.MemberId)
		return nil
	}
	return writeByID(typ, path+".member_id", "member", m.MemberId, cur != nil, set, del)
}

func (pl *pipeline) writeGroup(typ p4v1.Update_Type, g *p4v1.ActionProfileGroup) *fieldError {
	const path = "action_profile_group"
	pd, fe := pl.profileOf(path+".action_profile_id", g.ActionProfileId)
	if fe != nil {
		return fe
	}
	if !pd.selector {
		return errAt(codes.InvalidArgument, path+".action_profile_id", "action profile %s has no selector: it has no groups", pd.name)
	}
	cur := pd.groups[g.GroupId]
	set := func() *fieldError {
		handles := make([]engine.MemberHandle, 0, len(g.Members))
		seen := map[uint32]bool{}
		for i, gm := range g.Members {
			mpath := fmt.Sprintf("%s.members[%d]", path, i)
			ms, ok := pd.members[gm.MemberId]
			if !ok {
				return errAt(codes.NotFound, mpath+".member_id", "action profile %s has no member %d", pd.name, gm.MemberId)
			}
			if seen[gm.MemberId] {
				return errAt(codes.InvalidArgument, mpath+".member_id", "member %d is listed twice", gm.MemberId)
			}
			seen[gm.MemberId] = true
			if gm.Weight > 1 {
				return errAt(codes.Unimplemented, mpath+".weight", "%d: weighted members are not supported (the selector picks members uniformly)", gm.Weight)
			}
			if gm.WatchKind != nil {
				return errAt(codes.Unimplemented, mpath+".watch_kind", "watch ports are not supported")
			}
			handles = append(handles, ms.handle)
		}
		if limit := pd.info.MaxGroupSize; limit > 0 && int32(len(g.Members)) > limit {
			return errAt(codes.ResourceExhausted, path+".members", "%d members: groups of action profile %s hold at most %d", len(g.Members), pd.name, limit)
		}
		st := cur
		if st == nil {
			h, err := pl.sw.AddGroup(pd.name)
			if err != nil {
				return errAt(codes.ResourceExhausted, path, "%v", err)
			}
			st = &groupState{handle: h}
			pd.groups[g.GroupId] = st
		}
		if err := pl.sw.SetGroupMembers(pd.name, st.handle, handles); err != nil {
			return errAt(codes.Internal, path+".members", "%v", err)
		}
		st.canon = proto.Clone(g).(*p4v1.ActionProfileGroup)
		return nil
	}
	del := func() *fieldError {
		// the engine refuses to delete a group an entry uses
		if err := pl.sw.DeleteGroup(pd.name, cur.handle); err != nil {
			return errAt(codes.FailedPrecondition, path+".group_id", "%v", err)
		}
		delete(pd.groups, g.GroupId)
		return nil
	}
	return writeByID(typ, path+".group_id", "group", g.GroupId, cur != nil, set, del)
}

// profilesOf returns the profile with the id, or all of them for id 0.
func (pl *pipeline) profilesOf(path string, id uint32) ([]*profileDef, *fieldError) {
	if id != 0 {
		pd, fe := pl.profileOf(path, id)
		if fe != nil {
			return nil, fe
		}
		return []*profileDef{pd}, nil
	}
	ids := sortedIDs(pl.profiles)
	out := make([]*profileDef, len(ids))
	for i, id := range ids {
		out[i] = pl.profiles[id]
	}
	return out, nil
}

func (pl *pipeline) readMembers(m *p4v1.ActionProfileMember, emit func(*p4v1.Entity)) *fieldError {
	pds, fe := pl.profilesOf("action_profile_member.action_profile_id", m.ActionProfileId)
	if fe != nil {
		return fe
	}
	for _, pd := range pds {
		for _, id := range sortedIDs(pd.members) {
			if m.MemberId == 0 || m.MemberId == id {
				emit(&p4v1.Entity{Entity: &p4v1.Entity_ActionProfileMember{ActionProfileMember: proto.Clone(pd.members[id].canon).(*p4v1.ActionProfileMember)}})
			}
		}
	}
	return nil
}

func (pl *pipeline) readGroups(g *p4v1.ActionProfileGroup, emit func(*p4v1.Entity)) *fieldError {
	pds, fe := pl.profilesOf("action_profile_group.action_profile_id", g.ActionProfileId)
	if fe != nil {
		return fe
	}
	for _, pd := range pds {
		for _, id := range sortedIDs(pd.groups) {
			if g.GroupId == 0 || g.GroupId == id {
				emit(&p4v1.Entity{Entity: &p4v1.Entity_ActionProfileGroup{ActionProfileGroup: proto.Clone(pd.groups[id].canon).(*p4v1.ActionProfileGroup)}})
			}
		}
	}
	return nil
}

// indirectAction resolves the member or group an entry of an indirect
// table points at.
func (td *tableDef) indirectAction(ta *p4v1.TableAction) (*parsedAction, *fieldError) {
	pd := td.profile
	switch x := ta.Type.(type) {
	case *p4v1.TableAction_ActionProfileMemberId:
		ms, ok := pd.members[x.ActionProfileMemberId]
		if !ok {
			return nil, errAt(codes.NotFound, "table_entry.action.action_profile_member_id", "action profile %s has no member %d", pd.name, x.ActionProfileMemberId)
		}
		return &parsedAction{member: ms.handle, canon: &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileMemberId{ActionProfileMemberId: x.ActionProfileMemberId}}}, nil
	case *p4v1.TableAction_ActionProfileGroupId:
		gs, ok := pd.groups[x.ActionProfileGroupId]
		if !ok {
			return nil, errAt(codes.NotFound, "table_entry.action.action_profile_group_id", "action profile %s has no group %d", pd.name, x.ActionProfileGroupId)
		}
		return &parsedAction{group: gs.handle, canon: &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileGroupId{ActionProfileGroupId: x.ActionProfileGroupId}}}, nil
	case *p4v1.TableAction_Action:
		return nil, errAt(codes.InvalidArgument, "table_entry.action.action", "table %s uses action profile %s: its entries name a member or a group", td.name, pd.name)
	}
	return nil, errAt(codes.Unimplemented, "table_entry.action", "%T: one-shot action sets are not supported; make members and a group", ta.Type)
}
