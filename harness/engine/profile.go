package engine

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// Action profiles and selectors (v1model's action_profile and
// action_selector, bmv2 "indirect" and "indirect_ws" tables): entries of
// such a table point at a member (an action with its data) or at a group
// of members, of which the selector's hash picks one per packet.

// MemberHandle identifies an action profile member.
type MemberHandle uint64

// GroupHandle identifies an action selector group.
type GroupHandle uint64

// profileDecl is the static part of an action profile.
type profileDecl struct {
	name     string
	idx      int
	maxSize  int
	selector *calculation // nil for a plain action profile
	actions  []*action    // the actions of the tables using it
}

// profile is an action profile's members and groups in one Switch.
type profile struct {
	decl    *profileDecl
	mu      sync.RWMutex
	members map[MemberHandle]*actionCall
	groups  map[GroupHandle][]MemberHandle
	nextID  uint64
}

func (p *Program) compileProfiles(j *bmv2json.Program) error {
	p.profileByName = map[string]int{}
	for pi := range j.Pipelines {
		for _, ap := range j.Pipelines[pi].ActionProfiles {
			if _, dup := p.profileByName[ap.Name]; dup {
				return fmt.Errorf("action profile %q declared twice", ap.Name)
			}
			pd := &profileDecl{name: ap.Name, idx: len(p.profiles), maxSize: ap.MaxSize}
			if ap.Selector != nil {
				calc := bmv2json.Calculation{Name: ap.Name + " selector", Algo: ap.Selector.Algo}
				for _, in := range ap.Selector.Input {
					calc.Input = append(calc.Input, bmv2json.CalcInput{Type: in.Type, Value: in})
				}
				c, err := p.compileCalculation(&calc)
				if err != nil {
					return fmt.Errorf("action profile %q: %w", ap.Name, err)
				}
				pd.selector = c
			}
			p.profileByName[ap.Name] = pd.idx
			p.profiles = append(p.profiles, pd)
		}
	}
	return nil
}

// bindProfile attaches an indirect table to its action profile.
func (p *Program) bindProfile(td *tableDecl, jt *bmv2json.Table) error {
	pi, ok := p.profileByName[jt.ActionProfile]
	if !ok {
		return fmt.Errorf("table %q: unknown action profile %q", jt.Name, jt.ActionProfile)
	}
	pd := p.profiles[pi]
	if (jt.Type == "indirect_ws") != (pd.selector != nil) {
		return fmt.Errorf("table %q of type %q: action profile %q has selector %t", jt.Name, jt.Type, pd.name, pd.selector != nil)
	}
	td.profile = pi
	for _, a := range td.actions {
		if !slices.Contains(pd.actions, a) {
			pd.actions = append(pd.actions, a)
		}
	}
	return nil
}

func newProfile(pd *profileDecl) *profile {
	return &profile{decl: pd, members: map[MemberHandle]*actionCall{}, groups: map[GroupHandle][]MemberHandle{}}
}

// resolve returns the action to run for an entry of an indirect table
// pointing at member or group.
func (pr *profile) resolve(k *pkt, member MemberHandle, group GroupHandle) *actionCall {
	pr.mu.RLock()
	defer pr.mu.RUnlock()
	if group == 0 {
		return pr.members[member]
	}
	ms := pr.groups[group]
	if len(ms) == 0 {
		return nil
	}
	h := pr.decl.selector.compute(k)
	return pr.members[ms[h%uint64(len(ms))]]
}

func (s *Switch) profile(name string) (*profile, error) {
	i, err := resolveName("action profile", name, s.prog.profileByName)
	if err != nil {
		return nil, err
	}
	return s.profiles[i], nil
}

func (pr *profile) makeCall(actionName string, args [][]byte) (*actionCall, error) {
	if a := findAction(pr.decl.actions, actionName); a != nil {
		return makeCall(a, args)
	}
	return nil, fmt.Errorf("action profile %q: action %q is not one action of its tables", pr.decl.name, actionName)
}

// AddMember adds a member (an action with its data) to an action profile.
func (s *Switch) AddMember(profileName, actionName string, args [][]byte) (MemberHandle, error) {
	pr, err := s.profile(profileName)
	if err != nil {
		return 0, err
	}
	call, err := pr.makeCall(actionName, args)
	if err != nil {
		return 0, err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.decl.maxSize > 0 && len(pr.members) >= pr.decl.maxSize {
		return 0, fmt.Errorf("action profile %q is full (%d members)", pr.decl.name, pr.decl.maxSize)
	}
	pr.nextID++
	h := MemberHandle(pr.nextID)
	pr.members[h] = call
	return h, nil
}

// ModifyMember changes a member's action.
func (s *Switch) ModifyMember(profileName string, m MemberHandle, actionName string, args [][]byte) error {
	pr, err := s.profile(profileName)
	if err != nil {
		return err
	}
	call, err := pr.makeCall(actionName, args)
	if err != nil {
		return err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if _, ok := pr.members[m]; !ok {
		return fmt.Errorf("action profile %q has no member %d", pr.decl.name, m)
	}
	pr.members[m] = call
	return nil
}

// DeleteMember removes a member that no group and no entry uses.
func (s *Switch) DeleteMember(profileName string, m MemberHandle) error {
	pr, err := s.profile(profileName)
	if err != nil {
		return err
	}
	if s.profileInUse(pr, m, 0) {
		return fmt.Errorf("action profile %q: member %d is used by a table entry", pr.decl.name, m)
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if _, ok := pr.members[m]; !ok {
		return fmt.Errorf("action profile %q has no member %d", pr.decl.name, m)
	}
	for g, ms := range pr.groups {
		if slices.Contains(ms, m) {
			return fmt.Errorf("action profile %q: member %d belongs to group %d", pr.decl.name, m, g)
		}
	}
	delete(pr.members, m)
	return nil
}

// AddGroup creates an empty group in an action selector.
func (s *Switch) AddGroup(profileName string) (GroupHandle, error) {
	pr, err := s.profile(profileName)
	if err != nil {
		return 0, err
	}
	if pr.decl.selector == nil {
		return 0, fmt.Errorf("action profile %q has no selector: it has no groups", pr.decl.name)
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.nextID++
	g := GroupHandle(pr.nextID)
	pr.groups[g] = nil
	return g, nil
}

// SetGroupMembers sets the members of a group (the selector picks among
// them in handle order).
func (s *Switch) SetGroupMembers(profileName string, g GroupHandle, members []MemberHandle) error {
	pr, err := s.profile(profileName)
	if err != nil {
		return err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if _, ok := pr.groups[g]; !ok {
		return fmt.Errorf("action profile %q has no group %d", pr.decl.name, g)
	}
	ms := slices.Clone(members)
	sort.Slice(ms, func(i, j int) bool { return ms[i] < ms[j] })
	ms = slices.Compact(ms)
	for _, m := range ms {
		if _, ok := pr.members[m]; !ok {
			return fmt.Errorf("action profile %q has no member %d", pr.decl.name, m)
		}
	}
	pr.groups[g] = ms
	return nil
}

// DeleteGroup removes a group that no entry uses.
func (s *Switch) DeleteGroup(profileName string, g GroupHandle) error {
	pr, err := s.profile(profileName)
	if err != nil {
		return err
	}
	if s.profileInUse(pr, 0, g) {
		return fmt.Errorf("action profile %q: group %d is used by a table entry", pr.decl.name, g)
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if _, ok := pr.groups[g]; !ok {
		return fmt.Errorf("action profile %q has no group %d", pr.decl.name, g)
	}
	delete(pr.groups, g)
	return nil
}

// profileInUse reports whether an entry of a table of pr points at m or g.
func (s *Switch) profileInUse(pr *profile, m MemberHandle, g GroupHandle) bool {
	for i := range s.tables {
		t := &s.tables[i]
		if t.decl.profile != pr.decl.idx {
			continue
		}
		t.mu.RLock()
		for _, e := range t.entries {
			if (m != 0 && e.group == 0 && e.member == m) || (g != 0 && e.group == g) {
				t.mu.RUnlock()
				return true
			}
		}
		t.mu.RUnlock()
	}
	return false
}

// checkRef validates the member or group an entry of an indirect table
// points at.
func (s *Switch) checkRef(td *tableDecl, en *Entry) error {
	if td.profile < 0 {
		if en.Member != 0 || en.Group != 0 {
			return fmt.Errorf("table %q is not an indirect table: entries take an action, not a member or group", td.name)
		}
		return nil
	}
	pr := s.profiles[td.profile]
	if (en.Member == 0) == (en.Group == 0) {
		return fmt.Errorf("table %q uses action profile %q: an entry needs exactly one of Member and Group", td.name, pr.decl.name)
	}
	pr.mu.RLock()
	defer pr.mu.RUnlock()
	if en.Member != 0 {
		if _, ok := pr.members[en.Member]; !ok {
			return fmt.Errorf("table %q: action profile %q has no member %d", td.name, pr.decl.name, en.Member)
		}
		return nil
	}
	if _, ok := pr.groups[en.Group]; !ok {
		return fmt.Errorf("table %q: action profile %q has no group %d", td.name, pr.decl.name, en.Group)
	}
	return nil
}
