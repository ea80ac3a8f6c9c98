package p4rt

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/grid-ina/grid/harness/engine"
)

// pipeline is one forwarding pipeline: the P4Info with its IDs resolved to
// the engine's names, the switch running the bmv2 JSON, and the
// control-plane state P4Runtime reads back that the engine does not keep
// in P4Runtime form. The mutable parts are guarded by Server.mu.
type pipeline struct {
	info   *p4configv1.P4Info
	json   []byte
	cookie *p4v1.ForwardingPipelineConfig_Cookie
	sw     *engine.Switch

	tables    map[uint32]*tableDef
	actions   map[uint32]*actionDef
	counters  map[uint32]*externDef
	meters    map[uint32]*externDef
	registers map[uint32]*externDef
	profiles  map[uint32]*profileDef
	valueSets map[uint32]*valueSetDef
	digests   map[uint32]*digestDef
	// digestByList finds a digest by its bmv2 learn list id.
	digestByList map[int]*digestDef
	packetIn     *controllerHeader
	packetOut    *controllerHeader

	// now is the server's clock; send streams a message to the primary
	// controller (set when the pipeline is committed).
	now  func() time.Time
	send func(*p4v1.StreamMessageResponse)

	// state written by Write (under Server.mu)
	groups map[uint32]*p4v1.MulticastGroupEntry
	clones map[uint32]*p4v1.CloneSessionEntry
}

type tableDef struct {
	info        *p4configv1.Table
	name        string
	fields      map[uint32]*matchFieldDef
	order       []*matchFieldDef // in the engine's key order
	actions     map[uint32]p4configv1.ActionRef_Scope
	needsPrio   bool // has ternary, range or optional fields
	isConst     bool
	initDefault *p4v1.TableEntry // the program's default entry, as Read returns it
	directCtr   uint32           // direct counter id, 0 if none
	directMtr   uint32           // direct meter id, 0 if none
	profile     *profileDef      // of an indirect table, else nil
	idleTimeout bool             // entries take idle_timeout_ns (NOTIFY_CONTROL)

	// state (under Server.mu)
	entries    map[string]*storedEntry // by matchKey
	defaultSet *p4v1.TableEntry        // current default entry when modified, else nil
}

type storedEntry struct {
	handle engine.EntryHandle
	entry  *p4v1.TableEntry // canonical, without counter or meter data
}

type matchFieldDef struct {
	info  *p4configv1.MatchField
	index int // position in the engine's key
	kind  p4configv1.MatchField_MatchType
	width int
}

type actionDef struct {
	info   *p4configv1.Action
	name   string
	params map[uint32]*paramDef
}

type paramDef struct {
	info  *p4configv1.Action_Param
	index int
	width int
}

type externDef struct {
	name  string
	size  int
	width int // registers
	id    uint32
}

// controllerHeader is the layout of the packet_in or packet_out header:
// metadata fields bit-packed in id order.
type controllerHeader struct {
	fields []*p4configv1.ControllerPacketMetadata_Metadata
	bytes  int
	pad    int // bits of padding after the fields
}

var engineMatchKind = map[engine.MatchKind]p4configv1.MatchField_MatchType{
	engine.MatchExact:   p4configv1.MatchField_EXACT,
	engine.MatchLPM:     p4configv1.MatchField_LPM,
	engine.MatchTernary: p4configv1.MatchField_TERNARY,
	engine.MatchRange:   p4configv1.MatchField_RANGE,
}

// newPipeline compiles the bmv2 JSON (bare, or wrapped in a
// p4.tmp.P4DeviceConfig as PI accepts it) and checks the P4Info against it:
// every entity the P4Info names must exist in the JSON under the same name
// with the same shape. Errors name the P4Info field.
func newPipeline(info *p4configv1.P4Info, bmv2JSON []byte, opts *Options) (*pipeline, error) {
	if info == nil {
		return nil, fmt.Errorf("config.p4info: missing")
	}
	if len(bmv2JSON) == 0 {
		return nil, fmt.Errorf("config.p4_device_config: missing (the bmv2 JSON)")
	}
	program, wrapped := bmv2Program(bmv2JSON)
	prog, err := programs.load(program)
	if err != nil {
		if wrapped {
			return nil, fmt.Errorf("config.p4_device_config: p4.tmp.P4DeviceConfig.device_data: bmv2 JSON: %w", err)
		}
		return nil, fmt.Errorf("config.p4_device_config: bmv2 JSON: %w", err)
	}
	pl := &pipeline{
		info: info, json: bmv2JSON,
		tables: map[uint32]*tableDef{}, actions: map[uint32]*actionDef{},
		counters: map[uint32]*externDef{}, meters: map[uint32]*externDef{}, profiles: map[uint32]*profileDef{},
		registers: map[uint32]*externDef{},
		groups:    map[uint32]*p4v1.MulticastGroupEntry{}, clones: map[uint32]*p4v1.CloneSessionEntry{},
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	// Serial: packets (from ports and PacketOut alike) run one at a time,
	// as in simple_switch's single ingress thread, so a read-modify-write
	// of registers split over several actions (GRID's aggregation units)
	// stays atomic.
	pl.now = now
	// opts.Now, not now: the engine's own default clock reads timestamps
	// for less than time.Now costs.
	pl.sw = engine.NewSwitch(prog, engine.Config{Now: opts.Now, Trace: opts.Trace, Serial: true, Queues: opts.Queues,
		Digest: func(d engine.Digest) { pl.digest(d) }})
	if err := pl.resolveActions(prog); err != nil {
		return nil, err
	}
	if err := pl.resolveProfiles(); err != nil {
		return nil, err
	}
	if err := pl.resolveTables(prog); err != nil {
		return nil, err
	}
	if err := pl.resolveExterns(prog); err != nil {
		return nil, err
	}
	if err := pl.resolveValueSets(prog); err != nil {
		return nil, err
	}
	if err := pl.resolveDigests(prog); err != nil {
		return nil, err
	}
	if err := pl.resolveControllerHeaders(); err != nil {
		return nil, err
	}
	return pl, nil
}

// checkID refuses a missing preamble id or one already in seen.
func checkID[V any](path string, pre *p4configv1.Preamble, seen map[uint32]V) error {
	if pre.GetId() == 0 {
		return fmt.Errorf("%s.preamble.id: missing", path)
	}
	if _, dup := seen[pre.Id]; dup {
		return fmt.Errorf("%s.preamble.id: %d used twice", path, pre.Id)
	}
	return nil
}

func (pl *pipeline) resolveActions(prog *engine.Program) error {
	byName := map[string]engine.ActionInfo{}
	for _, a := range prog.Actions() {
		byName[a.Name] = a
	}
	for i, a := range pl.info.Actions {
		path := fmt.Sprintf("config.p4info.actions[%d]", i)
		pre := a.GetPreamble()
		if err := checkID(path, pre, pl.actions); err != nil {
			return err
		}
		ea, ok := byName[pre.Name]
		if !ok {
			// An action only called from control code may be inlined in
			// the JSON; no table can use it, which resolveTables checks.
			ea.Params = make([]engine.ParamInfo, len(a.Params))
			for j, p := range a.Params {
				ea.Params[j].Bitwidth = int(p.Bitwidth)
			}
		}
		if len(a.Params) != len(ea.Params) {
			return fmt.Errorf("%s: action %q has %d params in the P4Info, %d in the bmv2 JSON", path, pre.Name, len(a.Params), len(ea.Params))
		}
		ad := &actionDef{info: a, name: pre.Name, params: map[uint32]*paramDef{}}
		for j, p := range a.Params {
			// as for match fields, a parameter of an opaque type has no
			// width in the P4Info and takes the JSON's
			if p.Bitwidth != 0 && int(p.Bitwidth) != ea.Params[j].Bitwidth {
				return fmt.Errorf("%s.params[%d]: %s is %d bits in the P4Info, %d in the bmv2 JSON", path, j, p.Name, p.Bitwidth, ea.Params[j].Bitwidth)
			}
			if _, dup := ad.params[p.Id]; dup {
				return fmt.Errorf("%s.params[%d].id: %d used twice", path, j, p.Id)
			}
			ad.params[p.Id] = &paramDef{info: p, index: j, width: ea.Params[j].Bitwidth}
		}
		pl.actions[pre.Id] = ad
	}
	return nil
}

func (pl *pipeline) resolveTables(prog *engine.Program) error {
	byName := map[string]engine.TableInfo{}
	for _, t := range prog.Tables() {
		byName[t.Name] = t
	}
	for i, t := range pl.info.Tables {
		path := fmt.Sprintf("config.p4info.tables[%d]", i)
		pre := t.GetPreamble()
		if err := checkID(path, pre, pl.tables); err != nil {
			return err
		}
		et, ok := byName[pre.Name]
		if !ok {
			return fmt.Errorf("%s: table %q is not in the bmv2 JSON", path, pre.Name)
		}
		if len(t.MatchFields) != len(et.Keys) {
			return fmt.Errorf("%s: table %q has %d match fields in the P4Info, %d key fields in the bmv2 JSON", path, pre.Name, len(t.MatchFields), len(et.Keys))
		}
		td := &tableDef{info: t, name: pre.Name, fields: map[uint32]*matchFieldDef{}, actions: map[uint32]p4configv1.ActionRef_Scope{},
			isConst: t.IsConstTable, entries: map[string]*storedEntry{}}
		if t.IdleTimeoutBehavior == p4configv1.Table_NOTIFY_CONTROL {
			if ok, err := prog.SupportsTimeout(pre.Name); err != nil || !ok {
				return fmt.Errorf("%s.idle_timeout_behavior: table %q notifies idle entries in the P4Info, but its bmv2 JSON table has no support_timeout", path, pre.Name)
			}
			td.idleTimeout = true
		}
		for j, mf := range t.MatchFields {
			k := et.Keys[j]
			fpath := fmt.Sprintf("%s.match_fields[%d]", path, j)
			if mf.Name != k.Name {
				return fmt.Errorf("%s: field %q is key field %q in the bmv2 JSON (match fields must be in key order)", fpath, mf.Name, k.Name)
			}
			// P4Info gives no width (0) to fields of opaque types such as
			// error; their values are then as wide as the JSON's key.
			if mf.Bitwidth != 0 && int(mf.Bitwidth) != k.Bitwidth {
				return fmt.Errorf("%s: field %q is %d bits in the P4Info, %d in the bmv2 JSON", fpath, mf.Name, mf.Bitwidth, k.Bitwidth)
			}
			// An optional field is a ternary key in bmv2 JSON (all or
			// nothing of its mask), as p4c writes it.
			ternaryOptional := mf.GetMatchType() == p4configv1.MatchField_OPTIONAL && k.Kind == engine.MatchTernary
			if mf.GetMatchType() != engineMatchKind[k.Kind] && !ternaryOptional {
				return fmt.Errorf("%s: field %q matches %s in the P4Info, %s in the bmv2 JSON", fpath, mf.Name, mf.GetMatchType(), k.Kind)
			}
			if _, dup := td.fields[mf.Id]; dup {
				return fmt.Errorf("%s.id: %d used twice", fpath, mf.Id)
			}
			fd := &matchFieldDef{info: mf, index: j, kind: mf.GetMatchType(), width: k.Bitwidth}
			td.fields[mf.Id] = fd
			td.order = append(td.order, fd)
			switch fd.kind {
			case p4configv1.MatchField_TERNARY, p4configv1.MatchField_RANGE, p4configv1.MatchField_OPTIONAL:
				td.needsPrio = true
			}
		}
		for j, ref := range t.ActionRefs {
			ad, ok := pl.actions[ref.Id]
			if !ok {
				return fmt.Errorf("%s.action_refs[%d].id: %d is not an action of the P4Info", path, j, ref.Id)
			}
			if !tableHasAction(et, ad.name) {
				return fmt.Errorf("%s.action_refs[%d]: action %q is not an action of table %q in the bmv2 JSON", path, j, ad.name, pre.Name)
			}
			td.actions[ref.Id] = ref.Scope
		}
		if err := pl.bindProfile(path, td, et); err != nil {
			return err
		}
		def, err := pl.defaultEntry(td)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		td.initDefault = def
		if err := pl.initialEntries(td); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		pl.tables[pre.Id] = td
	}
	return nil
}

func tableHasAction(t engine.TableInfo, name string) bool {
	for _, a := range t.Actions {
		if a.Name == name {
			return true
		}
	}
	return false
}

// defaultEntry describes the program's default action of a table as a
// TableEntry with is_default_action set.
func (pl *pipeline) defaultEntry(td *tableDef) (*p4v1.TableEntry, error) {
	name, args, err := pl.sw.DefaultAction(td.name)
	if err != nil {
		return nil, err
	}
	e := &p4v1.TableEntry{TableId: td.info.Preamble.Id, IsDefaultAction: true}
	for id, ad := range pl.actions {
		if ad.name != name {
			continue
		}
		act := &p4v1.Action{ActionId: id}
		for _, pid := range sortedParamIDs(ad) {
			act.Params = append(act.Params, &p4v1.Action_Param{ParamId: pid, Value: canonical(args[ad.params[pid].index])})
		}
		e.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: act}}
	}
	return e, nil
}

func sortedParamIDs(ad *actionDef) []uint32 {
	ids := make([]uint32, 0, len(ad.params))
	for id := range ad.params {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func (pl *pipeline) resolveExterns(prog *engine.Program) error {
	index := func(infos []engine.ExternInfo) map[string]engine.ExternInfo {
		m := map[string]engine.ExternInfo{}
		for _, x := range infos {
			m[x.Name] = x
		}
		return m
	}
	counters, meters, registers := index(prog.Counters()), index(prog.Meters()), index(prog.Registers())
	for i, c := range pl.info.Counters {
		x, err := indexedExtern(fmt.Sprintf("config.p4info.counters[%d]", i), "counter", c.GetPreamble(), c.Size, counters)
		if err != nil {
			return err
		}
		pl.counters[x.id] = x
	}
	for i, m := range pl.info.Meters {
		x, err := indexedExtern(fmt.Sprintf("config.p4info.meters[%d]", i), "meter", m.GetPreamble(), m.Size, meters)
		if err != nil {
			return err
		}
		pl.meters[x.id] = x
	}
	for i, c := range pl.info.DirectCounters {
		td, err := pl.directExtern(fmt.Sprintf("config.p4info.direct_counters[%d]", i), "counter", c.GetPreamble(), c.DirectTableId, counters)
		if err != nil {
			return err
		}
		td.directCtr = c.Preamble.Id
	}
	for i, m := range pl.info.DirectMeters {
		td, err := pl.directExtern(fmt.Sprintf("config.p4info.direct_meters[%d]", i), "meter", m.GetPreamble(), m.DirectTableId, meters)
		if err != nil {
			return err
		}
		td.directMtr = m.Preamble.Id
	}
	for i, r := range pl.info.Registers {
		path := fmt.Sprintf("config.p4info.registers[%d]", i)
		x, ok := registers[r.GetPreamble().GetName()]
		if !ok {
			return fmt.Errorf("%s: register %q is not in the bmv2 JSON", path, r.GetPreamble().GetName())
		}
		if int(r.Size) != x.Size {
			return fmt.Errorf("%s: register %q has %d cells in the P4Info, %d in the bmv2 JSON", path, x.Name, r.Size, x.Size)
		}
		w := int(r.GetTypeSpec().GetBitstring().GetBit().GetBitwidth())
		if se := r.GetTypeSpec().GetSerializableEnum(); se != nil {
			// A register of a serializable enum holds its underlying bits.
			w = int(pl.info.GetTypeInfo().GetSerializableEnums()[se.GetName()].GetUnderlyingType().GetBitwidth())
		}
		if w != x.Bitwidth {
			return fmt.Errorf("%s.type_spec: register %q is bit<%d> in the P4Info, %d bits in the bmv2 JSON", path, x.Name, w, x.Bitwidth)
		}
		pl.registers[r.Preamble.Id] = &externDef{name: x.Name, size: x.Size, width: x.Bitwidth, id: r.Preamble.Id}
	}
	return nil
}

// indexedExtern checks an indexed counter or meter of the P4Info against
// the JSON's.
func indexedExtern(path, kind string, pre *p4configv1.Preamble, size int64, byName map[string]engine.ExternInfo) (*externDef, error) {
	x, ok := byName[pre.GetName()]
	if !ok || x.Direct {
		return nil, fmt.Errorf("%s: %s %q is not an indexed %s of the bmv2 JSON", path, kind, pre.GetName(), kind)
	}
	if int64(x.Size) != size {
		return nil, fmt.Errorf("%s: %s %q has %d cells in the P4Info, %d in the bmv2 JSON", path, kind, x.Name, size, x.Size)
	}
	return &externDef{name: x.Name, size: x.Size, id: pre.GetId()}, nil
}

// directExtern checks a direct counter or meter of the P4Info against the
// JSON's and returns its table.
func (pl *pipeline) directExtern(path, kind string, pre *p4configv1.Preamble, tableID uint32, byName map[string]engine.ExternInfo) (*tableDef, error) {
	x, ok := byName[pre.GetName()]
	if !ok || !x.Direct {
		return nil, fmt.Errorf("%s: direct %s %q is not a direct %s of the bmv2 JSON", path, kind, pre.GetName(), kind)
	}
	td, ok := pl.tables[tableID]
	if !ok {
		return nil, fmt.Errorf("%s.direct_table_id: %d is not a table of the P4Info", path, tableID)
	}
	if td.name != x.Table {
		return nil, fmt.Errorf("%s: direct %s %q belongs to table %q in the bmv2 JSON, not %q", path, kind, x.Name, x.Table, td.name)
	}
	return td, nil
}

func (pl *pipeline) resolveControllerHeaders() error {
	for i, cm := range pl.info.ControllerPacketMetadata {
		path := fmt.Sprintf("config.p4info.controller_packet_metadata[%d]", i)
		h := &controllerHeader{fields: append([]*p4configv1.ControllerPacketMetadata_Metadata(nil), cm.Metadata...)}
		sort.Slice(h.fields, func(a, b int) bool { return h.fields[a].Id < h.fields[b].Id })
		bits := 0
		for _, f := range h.fields {
			if f.Bitwidth <= 0 {
				return fmt.Errorf("%s: metadata %q has bitwidth %d", path, f.Name, f.Bitwidth)
			}
			bits += int(f.Bitwidth)
		}
		// A header that is not whole bytes ends in padding, as the bmv2
		// back end pads header types (p4c's P4Info leaves it out).
		h.bytes = (bits + 7) / 8
		h.pad = h.bytes*8 - bits
		switch cm.GetPreamble().GetName() {
		case "packet_in":
			pl.packetIn = h
		case "packet_out":
			pl.packetOut = h
		}
	}
	return nil
}

// actionByName finds the P4Info action of an engine action name.
func (pl *pipeline) actionByName(name string) (uint32, *actionDef) {
	for id, ad := range pl.actions {
		if ad.name == name {
			return id, ad
		}
	}
	return 0, nil
}

// initialEntries records the entries the program installs (const entries
// and initial entries of the bmv2 JSON) in P4Runtime form, so that Read
// returns them and, for non-const tables, MODIFY and DELETE find them.
func (pl *pipeline) initialEntries(td *tableDef) error {
	stored, err := pl.sw.Entries(td.name)
	if err != nil {
		return err
	}
	for i, se := range stored {
		aid, ad := pl.actionByName(se.Action)
		if ad == nil {
			return fmt.Errorf("initial entry %d: action %q is not in the P4Info", i, se.Action)
		}
		act := &p4v1.Action{ActionId: aid}
		for _, pid := range sortedParamIDs(ad) {
			act.Params = append(act.Params, &p4v1.Action_Param{ParamId: pid, Value: canonical(se.Args[ad.params[pid].index])})
		}
		te := &p4v1.TableEntry{TableId: td.info.Preamble.Id, Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: act}}}
		if td.needsPrio {
			te.Priority = enginePriority(se.Priority)
		}
		for j, fd := range td.order {
			if fm := fieldMatchOf(fd, se.Match[j]); fm != nil {
				te.Match = append(te.Match, fm)
			}
		}
		pm, fe := td.parseMatch(te)
		if fe != nil {
			return fmt.Errorf("initial entry %d: %v", i, fe)
		}
		if _, dup := td.entries[pm.key]; dup {
			return fmt.Errorf("initial entry %d duplicates an earlier one", i)
		}
		te.Match = pm.canon
		td.entries[pm.key] = &storedEntry{handle: se.Handle, entry: te}
	}
	return nil
}

// fieldMatchOf is the P4Runtime form of an engine match, nil for a
// wildcard ("don't care" fields are omitted).
func fieldMatchOf(fd *matchFieldDef, m engine.Match) *p4v1.FieldMatch {
	fm := &p4v1.FieldMatch{FieldId: fd.info.Id}
	switch fd.kind {
	case p4configv1.MatchField_EXACT:
		fm.FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: canonical(m.Value)}}
	case p4configv1.MatchField_LPM:
		if m.PrefixLen == 0 {
			return nil
		}
		fm.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: canonical(m.Value), PrefixLen: int32(m.PrefixLen)}}
	case p4configv1.MatchField_TERNARY:
		if isZero(m.Mask) {
			return nil
		}
		v := bytes.Clone(m.Value)
		mask := bytes.Clone(m.Mask)
		for len(v) < len(mask) {
			v = append([]byte{0}, v...)
		}
		for len(mask) < len(v) {
			mask = append([]byte{0}, mask...)
		}
		for k := range v {
			v[k] &= mask[k]
		}
		fm.FieldMatchType = &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: canonical(v), Mask: canonical(mask)}}
	case p4configv1.MatchField_RANGE:
		if isZero(m.Value) && bytes.Equal(canonical(m.High), canonical(allOnes(fd.width))) {
			return nil
		}
		fm.FieldMatchType = &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: canonical(m.Value), High: canonical(m.High)}}
	case p4configv1.MatchField_OPTIONAL:
		if m.Wildcard || isZero(m.Mask) {
			return nil
		}
		fm.FieldMatchType = &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: canonical(m.Value)}}
	}
	return fm
}
