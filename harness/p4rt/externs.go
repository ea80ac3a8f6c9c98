package p4rt

import (
	"fmt"
	"sort"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"

	"github.com/grid-ina/grid/harness/engine"
)

// cells resolves the index of a counter, meter or register entry: one
// cell, or every cell when the index is unset.
func (x *externDef) cells(path string, idx *p4v1.Index) ([]int, *fieldError) {
	if idx == nil {
		out := make([]int, x.size)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	if idx.Index < 0 || idx.Index >= int64(x.size) {
		return nil, errAt(codes.InvalidArgument, path+".index.index", "%d outside %s's cells 0..%d", idx.Index, x.name, x.size-1)
	}
	return []int{int(idx.Index)}, nil
}

// extern looks an extern up by id in m; id 0 means all of them when
// wildcard is allowed (reads).
func lookupExterns(m map[uint32]*externDef, id uint32, path, kind string, wildcard bool) ([]*externDef, *fieldError) {
	if id == 0 && wildcard {
		out := make([]*externDef, 0, len(m))
		for _, x := range m {
			out = append(out, x)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
		return out, nil
	}
	x, ok := m[id]
	if !ok {
		return nil, errAt(codes.InvalidArgument, path, "%d is not %s of the P4Info", id, kind)
	}
	return []*externDef{x}, nil
}

func counterData(v engine.CounterValue) *p4v1.CounterData {
	return &p4v1.CounterData{ByteCount: int64(v.Bytes), PacketCount: int64(v.Packets)}
}

func counterValue(path string, cd *p4v1.CounterData) (engine.CounterValue, *fieldError) {
	if cd.GetByteCount() < 0 || cd.GetPacketCount() < 0 {
		return engine.CounterValue{}, errAt(codes.InvalidArgument, path, "counts cannot be negative")
	}
	return engine.CounterValue{Bytes: uint64(cd.GetByteCount()), Packets: uint64(cd.GetPacketCount())}, nil
}

func (pl *pipeline) writeCounter(ce *p4v1.CounterEntry) *fieldError {
	xs, fe := lookupExterns(pl.counters, ce.CounterId, "counter_entry.counter_id", "a counter", false)
	if fe != nil {
		return fe
	}
	cells, fe := xs[0].cells("counter_entry", ce.Index)
	if fe != nil {
		return fe
	}
	v, fe := counterValue("counter_entry.data", ce.Data)
	if fe != nil {
		return fe
	}
	for _, i := range cells {
		if err := pl.sw.WriteCounter(xs[0].name, i, v); err != nil {
			return errAt(codes.Internal, "counter_entry", "%v", err)
		}
	}
	return nil
}

func (pl *pipeline) readCounters(ce *p4v1.CounterEntry, emit func(*p4v1.Entity)) *fieldError {
	xs, fe := lookupExterns(pl.counters, ce.CounterId, "counter_entry.counter_id", "a counter", true)
	if fe != nil {
		return fe
	}
	for _, x := range xs {
		cells, fe := x.cells("counter_entry", ce.Index)
		if fe != nil {
			return fe
		}
		for _, i := range cells {
			v, err := pl.sw.ReadCounter(x.name, i)
			if err != nil {
				return errAt(codes.Internal, "counter_entry", "%v", err)
			}
			emit(&p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{
				CounterId: x.id, Index: &p4v1.Index{Index: int64(i)}, Data: counterData(v)}}})
		}
	}
	return nil
}

// directTarget resolves the table entry a direct counter or meter entry
// names: one entry by match, all entries of a table, or (table_id 0) all
// entries of all tables that have such a resource.
func (pl *pipeline) directTargets(path string, te *p4v1.TableEntry, has func(*tableDef) bool, kind string) ([]*tableDef, []*storedEntry, *fieldError) {
	if te == nil {
		return nil, nil, errAt(codes.InvalidArgument, path+".table_entry", "missing")
	}
	var tables []*tableDef
	if te.TableId == 0 {
		for _, td := range pl.sortedTables() {
			if has(td) {
				tables = append(tables, td)
			}
		}
	} else {
		td, fe := pl.table(te.TableId)
		if fe != nil {
			return nil, nil, under(path, fe)
		}
		if !has(td) {
			return nil, nil, errAt(codes.InvalidArgument, path+".table_entry.table_id", "table %s has no direct %s", td.name, kind)
		}
		tables = []*tableDef{td}
	}
	var tds []*tableDef
	var entries []*storedEntry
	for _, td := range tables {
		if len(te.Match) > 0 {
			pm, fe := td.parseMatch(te)
			if fe != nil {
				return nil, nil, under(path, fe)
			}
			se := td.entries[pm.key]
			if se == nil {
				return nil, nil, errAt(codes.NotFound, path+".table_entry", "table %s has no entry with this match and priority", td.name)
			}
			tds, entries = append(tds, td), append(entries, se)
			continue
		}
		for _, se := range td.sortedEntries() {
			tds, entries = append(tds, td), append(entries, se)
		}
	}
	return tds, entries, nil
}

func hasDirectCounter(td *tableDef) bool { return td.directCtr != 0 }
func hasDirectMeter(td *tableDef) bool   { return td.directMtr != 0 }

func (pl *pipeline) writeDirectCounter(dc *p4v1.DirectCounterEntry) *fieldError {
	v, fe := counterValue("direct_counter_entry.data", dc.Data)
	if fe != nil {
		return fe
	}
	tds, entries, fe := pl.directTargets("direct_counter_entry", dc.TableEntry, hasDirectCounter, "counter")
	if fe != nil {
		return fe
	}
	for i, se := range entries {
		if err := pl.sw.WriteDirectCounter(tds[i].name, se.handle, v); err != nil {
			return errAt(codes.Internal, "direct_counter_entry", "%v", err)
		}
	}
	return nil
}

func (pl *pipeline) readDirectCounters(dc *p4v1.DirectCounterEntry, emit func(*p4v1.Entity)) *fieldError {
	tds, entries, fe := pl.directTargets("direct_counter_entry", dc.TableEntry, hasDirectCounter, "counter")
	if fe != nil {
		return fe
	}
	for i, se := range entries {
		v, err := pl.sw.ReadDirectCounter(tds[i].name, se.handle)
		if err != nil {
			return errAt(codes.Internal, "direct_counter_entry", "%v", err)
		}
		emit(&p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{
			TableEntry: entryKeyOnly(se.entry), Data: counterData(v)}}})
	}
	return nil
}

// entryKeyOnly is the part of an entry that identifies it.
func entryKeyOnly(e *p4v1.TableEntry) *p4v1.TableEntry {
	return &p4v1.TableEntry{TableId: e.TableId, Match: e.Match, Priority: e.Priority}
}

// meterConfig converts a P4Runtime meter config (rates in units per
// second, bursts in units) into the engine's.
func meterConfig(mc *p4v1.MeterConfig) (engine.MeterConfig, *fieldError) {
	for _, f := range []struct {
		name string
		v    int64
	}{{"cir", mc.Cir}, {"cburst", mc.Cburst}, {"pir", mc.Pir}, {"pburst", mc.Pburst}} {
		if f.v < 0 {
			return engine.MeterConfig{}, errAt(codes.InvalidArgument, f.name, "%d is negative", f.v)
		}
	}
	if mc.Eburst != 0 {
		return engine.MeterConfig{}, errAt(codes.Unimplemented, "eburst", "single-rate (RFC 2697) meters are not supported: v1model meters are two-rate")
	}
	if mc.Pir < mc.Cir {
		return engine.MeterConfig{}, errAt(codes.InvalidArgument, "pir", "peak rate %d is below the committed rate %d", mc.Pir, mc.Cir)
	}
	return engine.MeterConfig{CIR: uint64(mc.Cir), CBurst: uint64(mc.Cburst), PIR: uint64(mc.Pir), PBurst: uint64(mc.Pburst)}, nil
}

func meterConfigProto(c engine.MeterConfig) *p4v1.MeterConfig {
	return &p4v1.MeterConfig{Cir: int64(c.CIR), Cburst: int64(c.CBurst), Pir: int64(c.PIR), Pburst: int64(c.PBurst)}
}

// meterUpdate validates the config of a meter write.
func meterUpdate(path string, mc *p4v1.MeterConfig, mcd *p4v1.MeterCounterData) (engine.MeterConfig, *fieldError) {
	if mcd != nil {
		return engine.MeterConfig{}, errAt(codes.Unimplemented, path+".counter_data", "meter counters are not supported")
	}
	if mc == nil {
		return engine.MeterConfig{}, errAt(codes.Unimplemented, path+".config", "resetting a meter to unconfigured is not supported; give a config")
	}
	cfg, fe := meterConfig(mc)
	if fe != nil {
		return engine.MeterConfig{}, under(path+".config", fe)
	}
	return cfg, nil
}

func (pl *pipeline) writeMeter(me *p4v1.MeterEntry) *fieldError {
	cfg, fe := meterUpdate("meter_entry", me.Config, me.CounterData)
	if fe != nil {
		return fe
	}
	xs, fe := lookupExterns(pl.meters, me.MeterId, "meter_entry.meter_id", "a meter", false)
	if fe != nil {
		return fe
	}
	cells, fe := xs[0].cells("meter_entry", me.Index)
	if fe != nil {
		return fe
	}
	for _, i := range cells {
		if err := pl.sw.SetMeter(xs[0].name, i, cfg); err != nil {
			return errAt(codes.InvalidArgument, "meter_entry.config", "%v", err)
		}
	}
	return nil
}

func (pl *pipeline) readMeters(me *p4v1.MeterEntry, emit func(*p4v1.Entity)) *fieldError {
	xs, fe := lookupExterns(pl.meters, me.MeterId, "meter_entry.meter_id", "a meter", true)
	if fe != nil {
		return fe
	}
	for _, x := range xs {
		cells, fe := x.cells("meter_entry", me.Index)
		if fe != nil {
			return fe
		}
		for _, i := range cells {
			cfg, ok, err := pl.sw.ReadMeter(x.name, i)
			if err != nil {
				return errAt(codes.Internal, "meter_entry", "%v", err)
			}
			out := &p4v1.MeterEntry{MeterId: x.id, Index: &p4v1.Index{Index: int64(i)}}
			if ok {
				out.Config = meterConfigProto(cfg)
			}
			emit(&p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: out}})
		}
	}
	return nil
}

func (pl *pipeline) writeDirectMeter(dm *p4v1.DirectMeterEntry) *fieldError {
	cfg, fe := meterUpdate("direct_meter_entry", dm.Config, dm.CounterData)
	if fe != nil {
		return fe
	}
	tds, entries, fe := pl.directTargets("direct_meter_entry", dm.TableEntry, hasDirectMeter, "meter")
	if fe != nil {
		return fe
	}
	for i, se := range entries {
		if err := pl.sw.SetDirectMeter(tds[i].name, se.handle, cfg); err != nil {
			return errAt(codes.InvalidArgument, "direct_meter_entry.config", "%v", err)
		}
	}
	return nil
}

func (pl *pipeline) readDirectMeters(dm *p4v1.DirectMeterEntry, emit func(*p4v1.Entity)) *fieldError {
	tds, entries, fe := pl.directTargets("direct_meter_entry", dm.TableEntry, hasDirectMeter, "meter")
	if fe != nil {
		return fe
	}
	for i, se := range entries {
		cfg, ok, err := pl.sw.ReadDirectMeter(tds[i].name, se.handle)
		if err != nil {
			return errAt(codes.Internal, "direct_meter_entry", "%v", err)
		}
		out := &p4v1.DirectMeterEntry{TableEntry: entryKeyOnly(se.entry)}
		if ok {
			out.Config = meterConfigProto(cfg)
		}
		emit(&p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: out}})
	}
	return nil
}

func (pl *pipeline) writeRegister(re *p4v1.RegisterEntry) *fieldError {
	xs, fe := lookupExterns(pl.registers, re.RegisterId, "register_entry.register_id", "a register", false)
	if fe != nil {
		return fe
	}
	x := xs[0]
	cells, fe := x.cells("register_entry", re.Index)
	if fe != nil {
		return fe
	}
	bits, ok := re.GetData().GetData().(*p4v1.P4Data_Bitstring)
	if !ok {
		return errAt(codes.InvalidArgument, "register_entry.data", "register %s holds bit<%d>: give a bitstring, not %T", x.name, x.width, re.GetData().GetData())
	}
	v, err := fitValue(bits.Bitstring, x.width)
	if err != nil {
		return errAt(codes.InvalidArgument, "register_entry.data.bitstring", "register %s: %v", x.name, err)
	}
	for _, i := range cells {
		if err := pl.sw.WriteRegister(x.name, i, v); err != nil {
			return errAt(codes.Internal, "register_entry", "%v", err)
		}
	}
	return nil
}

func (pl *pipeline) readRegisters(re *p4v1.RegisterEntry, emit func(*p4v1.Entity)) *fieldError {
	xs, fe := lookupExterns(pl.registers, re.RegisterId, "register_entry.register_id", "a register", true)
	if fe != nil {
		return fe
	}
	for _, x := range xs {
		cells, fe := x.cells("register_entry", re.Index)
		if fe != nil {
			return fe
		}
		var all [][]byte
		if re.Index == nil {
			var err error
			if all, err = pl.sw.ReadRegisterArray(x.name); err != nil {
				return errAt(codes.Internal, "register_entry", "%v", err)
			}
		}
		for k, i := range cells {
			var v []byte
			if all != nil {
				v = all[k]
			} else {
				var err error
				if v, err = pl.sw.ReadRegister(x.name, i); err != nil {
					return errAt(codes.Internal, "register_entry", "%v", err)
				}
			}
			emit(&p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{
				RegisterId: x.id, Index: &p4v1.Index{Index: int64(i)},
				Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: canonical(v)}}}}})
		}
	}
	return nil
}

// describe names an entity kind for errors.
func describe(e *p4v1.Entity) string { return fmt.Sprintf("%T", e.GetEntity()) }
