package p4rt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/grid-ina/grid/harness/engine"
)

// parsedMatch is a validated match of a table entry.
type parsedMatch struct {
	engine []engine.Match     // in the engine's key order
	key    string             // identity of the entry: match and priority
	canon  []*p4v1.FieldMatch // canonical, by field id
}

func (pl *pipeline) table(id uint32) (*tableDef, *fieldError) {
	td, ok := pl.tables[id]
	if !ok {
		return nil, errAt(codes.InvalidArgument, "table_entry.table_id", "%d is not a table of the P4Info", id)
	}
	return td, nil
}

// enginePriority converts a P4Runtime priority (larger wins) into the
// engine's (smaller wins, as bmv2), and back: it is its own inverse.
func enginePriority(p int32) int32 { return math.MaxInt32 - p }

// parseMatch validates te's match fields and priority.
func (td *tableDef) parseMatch(te *p4v1.TableEntry) (*parsedMatch, *fieldError) {
	if td.needsPrio && te.Priority <= 0 {
		return nil, errAt(codes.InvalidArgument, "table_entry.priority", "%d: table %s has ternary, range or optional fields, so entries need a priority > 0", te.Priority, td.name)
	}
	if !td.needsPrio && te.Priority != 0 {
		return nil, errAt(codes.InvalidArgument, "table_entry.priority", "%d: table %s has only exact and lpm fields, so the priority must be 0", te.Priority, td.name)
	}
	// given[j] is 1 + the index in te.Match of key field j, 0 if omitted.
	given := make([]int, len(td.order))
	for i, fm := range te.Match {
		fd, ok := td.fields[fm.FieldId]
		if !ok {
			return nil, errAt(codes.InvalidArgument, fmt.Sprintf("table_entry.match[%d].field_id", i), "%d is not a match field of table %s", fm.FieldId, td.name)
		}
		if given[fd.index] != 0 {
			return nil, errAt(codes.InvalidArgument, fmt.Sprintf("table_entry.match[%d].field_id", i), "field %d (%s) is matched twice", fm.FieldId, fd.info.Name)
		}
		given[fd.index] = i + 1
	}
	pm := &parsedMatch{engine: make([]engine.Match, len(td.order))}
	var key bytes.Buffer
	for j, fd := range td.order {
		if given[j] == 0 {
			if fd.kind == p4configv1.MatchField_EXACT {
				return nil, errAt(codes.InvalidArgument, "table_entry.match", "exact field %d (%s) of table %s is missing", fd.info.Id, fd.info.Name, td.name)
			}
			pm.engine[j] = wildcard(fd)
			key.WriteByte(0)
			continue
		}
		m, canon, err := fd.parse(te.Match[given[j]-1])
		if err != nil {
			return nil, under(fmt.Sprintf("table_entry.match[%d]", given[j]-1), err)
		}
		pm.engine[j] = m
		pm.canon = append(pm.canon, canon)
		key.WriteByte(1)
		for _, b := range [][]byte{m.Value, m.Mask, m.High} {
			key.Write(b)
		}
		key.WriteByte(byte(m.PrefixLen >> 8))
		key.WriteByte(byte(m.PrefixLen))
	}
	_ = binary.Write(&key, binary.BigEndian, te.Priority)
	pm.key = key.String()
	sort.Slice(pm.canon, func(a, b int) bool { return pm.canon[a].FieldId < pm.canon[b].FieldId })
	return pm, nil
}

// wildcard is the engine form of an omitted ("don't care") field.
func wildcard(fd *matchFieldDef) engine.Match {
	zero := make([]byte, (fd.width+7)/8)
	switch fd.kind {
	case p4configv1.MatchField_LPM:
		return engine.LPM(zero, 0)
	case p4configv1.MatchField_TERNARY, p4configv1.MatchField_OPTIONAL:
		return engine.Ternary(zero, zero)
	case p4configv1.MatchField_RANGE:
		return engine.Range(zero, allOnes(fd.width))
	}
	return engine.Match{Value: zero, Wildcard: true}
}

// parse validates one field match (paths relative to the FieldMatch) and
// returns its engine form and its canonical P4Runtime form.
func (fd *matchFieldDef) parse(fm *p4v1.FieldMatch) (engine.Match, *p4v1.FieldMatch, *fieldError) {
	name, w := fd.info.Name, fd.width
	value := func(path string, b []byte) ([]byte, *fieldError) {
		v, err := fitValue(b, w)
		if err != nil {
			return nil, errAt(codes.InvalidArgument, path, "%s: %v", name, err)
		}
		return v, nil
	}
	wrongKind := func(got string) *fieldError {
		return errAt(codes.InvalidArgument, "field_match_type", "field %s matches %s, not %s", name, kindName(fd.kind), got)
	}
	out := &p4v1.FieldMatch{FieldId: fm.FieldId}
	switch x := fm.FieldMatchType.(type) {
	case *p4v1.FieldMatch_Exact_:
		if fd.kind != p4configv1.MatchField_EXACT {
			return engine.Match{}, nil, wrongKind("exact")
		}
		v, err := value("exact.value", x.Exact.Value)
		if err != nil {
			return engine.Match{}, nil, err
		}
		out.FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: canonical(v)}}
		return engine.Exact(v), out, nil
	case *p4v1.FieldMatch_Lpm:
		if fd.kind != p4configv1.MatchField_LPM {
			return engine.Match{}, nil, wrongKind("lpm")
		}
		v, err := value("lpm.value", x.Lpm.Value)
		if err != nil {
			return engine.Match{}, nil, err
		}
		plen := int(x.Lpm.PrefixLen)
		if plen <= 0 || plen > w {
			return engine.Match{}, nil, errAt(codes.InvalidArgument, "lpm.prefix_len", "%s: %d outside 1..%d (omit the field for a wildcard)", name, plen, w)
		}
		if !maskedBy(v, prefixMask(w, plen)) {
			return engine.Match{}, nil, errAt(codes.InvalidArgument, "lpm.value", "%s: 0x%x has bits set beyond the /%d prefix", name, x.Lpm.Value, plen)
		}
		out.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: canonical(v), PrefixLen: int32(plen)}}
		return engine.LPM(v, plen), out, nil
	case *p4v1.FieldMatch_Ternary_:
		if fd.kind != p4configv1.MatchField_TERNARY {
			return engine.Match{}, nil, wrongKind("ternary")
		}
		v, err := value("ternary.value", x.Ternary.Value)
		if err != nil {
			return engine.Match{}, nil, err
		}
		m, err := value("ternary.mask", x.Ternary.Mask)
		if err != nil {
			return engine.Match{}, nil, err
		}
		if isZero(m) {
			return engine.Match{}, nil, errAt(codes.InvalidArgument, "ternary.mask", "%s: mask 0 matches everything: omit the field instead", name)
		}
		if !maskedBy(v, m) {
			return engine.Match{}, nil, errAt(codes.InvalidArgument, "ternary.value", "%s: 0x%x has bits set outside the mask 0x%x", name, x.Ternary.Value, x.Ternary.Mask)
		}
		out.FieldMatchType = &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: canonical(v), Mask: canonical(m)}}
		return engine.Ternary(v, m), out, nil
	case *p4v1.FieldMatch_Range_:
		if fd.kind != p4configv1.MatchField_RANGE {
			return engine.Match{}, nil, wrongKind("range")
		}
		lo, err := value("range.low", x.Range.Low)
		if err != nil {
			return engine.Match{}, nil, err
		}
		hi, err := value("range.high", x.Range.High)
		if err != nil {
			return engine.Match{}, nil, err
		}
		if bytes.Compare(lo, hi) > 0 {
			return engine.Match{}, nil, errAt(codes.InvalidArgument, "range", "%s: low 0x%x is above high 0x%x", name, x.Range.Low, x.Range.High)
		}
		if isZero(lo) && bytes.Equal(hi, allOnes(w)) {
			return engine.Match{}, nil, errAt(codes.InvalidArgument, "range", "%s: the range covers every value: omit the field instead", name)
		}
		out.FieldMatchType = &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: canonical(lo), High: canonical(hi)}}
		return engine.Range(lo, hi), out, nil
	case *p4v1.FieldMatch_Optional_:
		if fd.kind != p4configv1.MatchField_OPTIONAL {
			return engine.Match{}, nil, wrongKind("optional")
		}
		v, err := value("optional.value", x.Optional.Value)
		if err != nil {
			return engine.Match{}, nil, err
		}
		out.FieldMatchType = &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: canonical(v)}}
		return engine.Ternary(v, allOnes(w)), out, nil
	case nil:
		return engine.Match{}, nil, errAt(codes.InvalidArgument, "field_match_type", "field %s: no match value", name)
	}
	return engine.Match{}, nil, errAt(codes.Unimplemented, "field_match_type", "field %s: %T matches are not supported", name, fm.FieldMatchType)
}

func kindName(k p4configv1.MatchField_MatchType) string {
	switch k {
	case p4configv1.MatchField_EXACT:
		return "exact"
	case p4configv1.MatchField_LPM:
		return "lpm"
	case p4configv1.MatchField_TERNARY:
		return "ternary"
	case p4configv1.MatchField_RANGE:
		return "range"
	case p4configv1.MatchField_OPTIONAL:
		return "optional"
	}
	return k.String()
}

// maskedBy reports whether v has no bits outside mask (same lengths).
func maskedBy(v, mask []byte) bool {
	for i := range v {
		if v[i]&^mask[i] != 0 {
			return false
		}
	}
	return true
}

func prefixMask(width, plen int) []byte {
	n := (width + 7) / 8
	m := make([]byte, n)
	pad := n*8 - width
	for b := 0; b < plen; b++ {
		m[(pad+b)/8] |= 0x80 >> uint((pad+b)%8)
	}
	return m
}

// parsedAction is a validated action: a direct action with its
// arguments, or an action profile member or group.
type parsedAction struct {
	name   string
	args   [][]byte
	member engine.MemberHandle
	group  engine.GroupHandle
	canon  *p4v1.TableAction
}

// parseAction validates the action of an entry (or of the default entry
// when isDefault).
func (pl *pipeline) parseAction(td *tableDef, ta *p4v1.TableAction, isDefault bool) (*parsedAction, *fieldError) {
	if ta == nil {
		return nil, errAt(codes.InvalidArgument, "table_entry.action", "missing")
	}
	if td.profile != nil {
		if isDefault {
			return nil, errAt(codes.Unimplemented, "table_entry.action", "table %s uses action profile %s: setting its default action is not supported", td.name, td.profile.name)
		}
		return td.indirectAction(ta)
	}
	x, ok := ta.Type.(*p4v1.TableAction_Action)
	if !ok {
		return nil, errAt(codes.InvalidArgument, "table_entry.action", "table %s has no action profile: give an action, not %T", td.name, ta.Type)
	}
	pa, fe := pl.parseDirect(td.actions, "table "+td.name, x.Action, isDefault)
	if fe != nil {
		return nil, under("table_entry.action.action", fe)
	}
	return pa, nil
}

// parseDirect validates an action with its parameters against the actions
// (and their scopes) of a table or action profile named owner. Paths are
// relative to the Action.
func (pl *pipeline) parseDirect(actions map[uint32]p4configv1.ActionRef_Scope, owner string, a *p4v1.Action, isDefault bool) (*parsedAction, *fieldError) {
	if a == nil {
		return nil, errAt(codes.InvalidArgument, "", "missing")
	}
	scope, ok := actions[a.ActionId]
	if !ok {
		return nil, errAt(codes.InvalidArgument, "action_id", "%d is not an action of %s", a.ActionId, owner)
	}
	ad := pl.actions[a.ActionId]
	if isDefault && scope == p4configv1.ActionRef_TABLE_ONLY {
		return nil, errAt(codes.InvalidArgument, "action_id", "action %s is @tableonly in %s: it cannot be the default action", ad.name, owner)
	}
	if !isDefault && scope == p4configv1.ActionRef_DEFAULT_ONLY {
		return nil, errAt(codes.InvalidArgument, "action_id", "action %s is @defaultonly in %s: entries cannot use it", ad.name, owner)
	}
	pa := &parsedAction{name: ad.name, args: make([][]byte, len(ad.params))}
	canon := &p4v1.Action{ActionId: a.ActionId}
	for i, p := range a.Params {
		path := fmt.Sprintf("params[%d]", i)
		pd, ok := ad.params[p.ParamId]
		if !ok {
			return nil, errAt(codes.InvalidArgument, path+".param_id", "%d is not a parameter of action %s", p.ParamId, ad.name)
		}
		if pa.args[pd.index] != nil {
			return nil, errAt(codes.InvalidArgument, path+".param_id", "parameter %d (%s) is given twice", p.ParamId, pd.info.Name)
		}
		v, err := fitValue(p.Value, pd.width)
		if err != nil {
			return nil, errAt(codes.InvalidArgument, path+".value", "%s: %v", pd.info.Name, err)
		}
		pa.args[pd.index] = v
	}
	for _, pid := range sortedParamIDs(ad) {
		pd := ad.params[pid]
		if pa.args[pd.index] == nil {
			return nil, errAt(codes.InvalidArgument, "params", "parameter %d (%s) of action %s is missing", pid, pd.info.Name, ad.name)
		}
		canon.Params = append(canon.Params, &p4v1.Action_Param{ParamId: pid, Value: canonical(pa.args[pd.index])})
	}
	pa.canon = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: canon}}
	return pa, nil
}

// writeTableEntry applies one table entry update; the caller holds s.mu.
func (pl *pipeline) writeTableEntry(typ p4v1.Update_Type, te *p4v1.TableEntry) *fieldError {
	td, fe := pl.table(te.TableId)
	if fe != nil {
		return fe
	}
	if te.IsDefaultAction {
		return pl.writeDefault(td, typ, te)
	}
	if td.isConst {
		return errAt(codes.PermissionDenied, "table_entry.table_id", "table %s has const entries: it cannot be written", td.name)
	}
	if te.IdleTimeoutNs < 0 || te.IdleTimeoutNs != 0 && !td.idleTimeout {
		return errAt(codes.InvalidArgument, "table_entry.idle_timeout_ns", "table %s has no idle timeouts (its idle_timeout_behavior is NO_TIMEOUT), or the timeout is negative", td.name)
	}
	pm, fe := td.parseMatch(te)
	if fe != nil {
		return fe
	}
	prio := int32(0)
	if td.needsPrio {
		prio = enginePriority(te.Priority)
	}
	stored := td.entries[pm.key]
	sw := pl.sw
	switch typ {
	case p4v1.Update_INSERT:
		if stored != nil {
			return errAt(codes.AlreadyExists, "table_entry", "table %s already has an entry with this match and priority", td.name)
		}
		if td.info.Size > 0 && int64(len(td.entries)) >= td.info.Size {
			return errAt(codes.ResourceExhausted, "table_entry", "table %s is full (%d entries)", td.name, td.info.Size)
		}
		pa, fe := pl.parseAction(td, te.Action, false)
		if fe != nil {
			return fe
		}
		if fe := pl.checkDirectData(td, te); fe != nil {
			return fe
		}
		h, err := sw.AddEntry(td.name, engine.Entry{Match: pm.engine, Priority: prio, Action: pa.name, Args: pa.args, Member: pa.member, Group: pa.group})
		if err != nil {
			return errAt(codes.InvalidArgument, "table_entry", "%v", err)
		}
		stored = &storedEntry{handle: h}
		td.entries[pm.key] = stored
		stored.entry = canonicalEntry(te, pm, pa)
		if fe := pl.setIdleTimeout(td, h, te); fe != nil {
			return fe
		}
		return pl.writeDirectData(td, h, te)
	case p4v1.Update_MODIFY:
		if stored == nil {
			return errAt(codes.NotFound, "table_entry", "table %s has no entry with this match and priority", td.name)
		}
		pa, fe := pl.parseAction(td, te.Action, false)
		if fe != nil {
			return fe
		}
		if fe := pl.checkDirectData(td, te); fe != nil {
			return fe
		}
		var err error
		if td.profile != nil {
			err = sw.RepointEntry(td.name, stored.handle, pa.member, pa.group)
		} else {
			err = sw.ModifyEntry(td.name, stored.handle, pa.name, pa.args)
		}
		if err != nil {
			return errAt(codes.InvalidArgument, "table_entry", "%v", err)
		}
		stored.entry = canonicalEntry(te, pm, pa)
		if fe := pl.setIdleTimeout(td, stored.handle, te); fe != nil {
			return fe
		}
		return pl.writeDirectData(td, stored.handle, te)
	default: // DELETE: update accepts no other type
		if stored == nil {
			return errAt(codes.NotFound, "table_entry", "table %s has no entry with this match and priority", td.name)
		}
		if err := sw.DeleteEntry(td.name, stored.handle); err != nil {
			return errAt(codes.Internal, "table_entry", "%v", err)
		}
		delete(td.entries, pm.key)
		return nil
	}
}

func canonicalEntry(te *p4v1.TableEntry, pm *parsedMatch, pa *parsedAction) *p4v1.TableEntry {
	return &p4v1.TableEntry{TableId: te.TableId, Match: pm.canon, Action: pa.canon, Priority: te.Priority,
		Metadata: bytes.Clone(te.Metadata), IdleTimeoutNs: te.IdleTimeoutNs}
}

// setIdleTimeout gives an entry of a table with idle timeouts its time to
// live (restarting its idle time, as a MODIFY does in simple_switch_grpc).
func (pl *pipeline) setIdleTimeout(td *tableDef, h engine.EntryHandle, te *p4v1.TableEntry) *fieldError {
	if !td.idleTimeout {
		return nil
	}
	if err := pl.sw.SetEntryIdleTimeout(td.name, h, time.Duration(te.IdleTimeoutNs)); err != nil {
		return errAt(codes.Internal, "table_entry.idle_timeout_ns", "%v", err)
	}
	return nil
}

// idleNotification lists the entries of the pipeline's tables that have
// been idle for their timeout since they were last reported (nil if none);
// the caller holds Server.mu for reading.
func (pl *pipeline) idleNotification() *p4v1.IdleTimeoutNotification {
	var out *p4v1.IdleTimeoutNotification
	for _, td := range pl.sortedTables() {
		if !td.idleTimeout {
			continue
		}
		expired, err := pl.sw.ExpiredEntries(td.name)
		if err != nil || len(expired) == 0 {
			continue
		}
		byHandle := map[engine.EntryHandle]bool{}
		for _, h := range expired {
			byHandle[h] = true
		}
		for _, se := range td.sortedEntries() {
			if !byHandle[se.handle] {
				continue
			}
			if out == nil {
				out = &p4v1.IdleTimeoutNotification{Timestamp: pl.now().UnixNano()}
			}
			out.TableEntry = append(out.TableEntry, proto.Clone(se.entry).(*p4v1.TableEntry))
		}
	}
	return out
}

// checkDirectData refuses counter data or a meter config for a table
// without a direct counter or meter.
func (pl *pipeline) checkDirectData(td *tableDef, te *p4v1.TableEntry) *fieldError {
	if te.CounterData != nil && td.directCtr == 0 {
		return errAt(codes.InvalidArgument, "table_entry.counter_data", "table %s has no direct counter", td.name)
	}
	if te.MeterConfig != nil {
		if td.directMtr == 0 {
			return errAt(codes.InvalidArgument, "table_entry.meter_config", "table %s has no direct meter", td.name)
		}
		if _, fe := meterConfig(te.MeterConfig); fe != nil {
			return under("table_entry.meter_config", fe)
		}
	}
	if te.MeterCounterData != nil {
		return errAt(codes.Unimplemented, "table_entry.meter_counter_data", "meter counters are not supported")
	}
	return nil
}

// writeDirectData sets the direct counter and meter an entry update carries.
func (pl *pipeline) writeDirectData(td *tableDef, h engine.EntryHandle, te *p4v1.TableEntry) *fieldError {
	if cd := te.CounterData; cd != nil {
		if err := pl.sw.WriteDirectCounter(td.name, h, engine.CounterValue{Bytes: uint64(cd.ByteCount), Packets: uint64(cd.PacketCount)}); err != nil {
			return errAt(codes.Internal, "table_entry.counter_data", "%v", err)
		}
	}
	if mc := te.MeterConfig; mc != nil {
		cfg, _ := meterConfig(mc)
		if err := pl.sw.SetDirectMeter(td.name, h, cfg); err != nil {
			return errAt(codes.InvalidArgument, "table_entry.meter_config", "%v", err)
		}
	}
	return nil
}

// writeDefault modifies (or, without an action, resets) a table's default
// action.
func (pl *pipeline) writeDefault(td *tableDef, typ p4v1.Update_Type, te *p4v1.TableEntry) *fieldError {
	if typ != p4v1.Update_MODIFY {
		return errAt(codes.InvalidArgument, "table_entry.is_default_action", "the default entry of table %s can only be modified, not %s", td.name, typ)
	}
	if len(te.Match) != 0 {
		return errAt(codes.InvalidArgument, "table_entry.match", "the default entry of table %s has no match", td.name)
	}
	if te.Priority != 0 {
		return errAt(codes.InvalidArgument, "table_entry.priority", "the default entry of table %s has no priority", td.name)
	}
	if te.Action == nil {
		if err := pl.sw.ResetDefaultAction(td.name); err != nil {
			return errAt(codes.Internal, "table_entry", "%v", err)
		}
		td.defaultSet = nil
		return nil
	}
	pa, fe := pl.parseAction(td, te.Action, true)
	if fe != nil {
		return fe
	}
	if c := td.info.ConstDefaultActionId; c != 0 && c != te.Action.GetAction().GetActionId() {
		return errAt(codes.PermissionDenied, "table_entry.action.action.action_id", "table %s has the const default action %s", td.name, pl.actions[c].name)
	}
	if err := pl.sw.SetDefaultAction(td.name, pa.name, pa.args); err != nil {
		return errAt(codes.InvalidArgument, "table_entry.action", "%v", err)
	}
	td.defaultSet = &p4v1.TableEntry{TableId: te.TableId, Action: pa.canon, IsDefaultAction: true}
	return nil
}

// readTableEntries answers a TableEntry read: every table (table_id 0),
// one table, one entry (match given) or the default entry.
func (pl *pipeline) readTableEntries(te *p4v1.TableEntry, emit func(*p4v1.Entity)) *fieldError {
	var tables []*tableDef
	if te.TableId == 0 {
		tables = pl.sortedTables()
	} else {
		td, fe := pl.table(te.TableId)
		if fe != nil {
			return fe
		}
		tables = []*tableDef{td}
	}
	for _, td := range tables {
		if te.IsDefaultAction {
			def := td.defaultSet
			if def == nil {
				def = td.initDefault
			}
			emit(&p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: proto.Clone(def).(*p4v1.TableEntry)}})
			continue
		}
		var only string
		if len(te.Match) > 0 {
			pm, fe := td.parseMatch(te)
			if fe != nil {
				return fe
			}
			only = pm.key
		}
		for _, se := range td.sortedEntries() {
			if only != "" && td.entries[only] != se {
				continue
			}
			out := proto.Clone(se.entry).(*p4v1.TableEntry)
			out.IsConst = td.isConst
			if te.CounterData != nil && td.directCtr != 0 {
				v, err := pl.sw.ReadDirectCounter(td.name, se.handle)
				if err != nil {
					return errAt(codes.Internal, "table_entry.counter_data", "%v", err)
				}
				out.CounterData = counterData(v)
			}
			if te.TimeSinceLastHit != nil && td.idleTimeout {
				_, idle, err := pl.sw.EntryIdleTime(td.name, se.handle)
				if err != nil {
					return errAt(codes.Internal, "table_entry.time_since_last_hit", "%v", err)
				}
				out.TimeSinceLastHit = &p4v1.TableEntry_IdleTimeout{ElapsedNs: idle.Nanoseconds()}
			}
			if te.MeterConfig != nil && td.directMtr != 0 {
				cfg, ok, err := pl.sw.ReadDirectMeter(td.name, se.handle)
				if err != nil {
					return errAt(codes.Internal, "table_entry.meter_config", "%v", err)
				}
				if ok {
					out.MeterConfig = meterConfigProto(cfg)
				}
			}
			emit(&p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: out}})
		}
	}
	return nil
}

func (pl *pipeline) sortedTables() []*tableDef {
	out := make([]*tableDef, 0, len(pl.tables))
	for _, td := range pl.tables {
		out = append(out, td)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].info.Preamble.Id < out[j].info.Preamble.Id })
	return out
}

// sortedEntries lists a table's entries in insertion (handle) order.
func (td *tableDef) sortedEntries() []*storedEntry {
	out := make([]*storedEntry, 0, len(td.entries))
	for _, se := range td.entries {
		out = append(out, se)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].handle < out[j].handle })
	return out
}
