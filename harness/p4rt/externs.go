package p4rt

import (
	"fmt"
	"sort"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"

	"github.com/grid-ina/grid/harness/engine"
)

// eachCell calls f for every cell an entry of an indexed counter, meter or
// register names: of the extern with the id, or of all of them when the id
// is 0 and wildcard (reads) is set; the one cell of the index, or all of
// them when it is unset. path is the entry's ("counter_entry"), idField its
// id field's name.
func eachCell(m map[uint32]*externDef, id uint32, idx *p4v1.Index, wildcard bool, path, idField, kind string, f func(x *externDef, cell int) *fieldError) *fieldError {
	var xs []*externDef
	if id == 0 && wildcard {
		for _, x := range m {
			xs = append(xs, x)
		}
		sort.Slice(xs, func(i, j int) bool { return xs[i].id < xs[j].id })
	} else {
		x, ok := m[id]
		if !ok {
			return errAt(codes.InvalidArgument, path+"."+idField, "%d is not a %s of the P4Info", id, kind)
		}
		xs = []*externDef{x}
	}
	for _, x := range xs {
		if idx != nil {
			if idx.Index < 0 || idx.Index >= int64(x.size) {
				return errAt(codes.OutOfRange, path+".index.index", "%d outside %s's cells 0..%d", idx.Index, x.name, x.size-1)
			}
			if fe := f(x, int(idx.Index)); fe != nil {
				return fe
			}
			continue
		}
		for i := range x.size {
			if fe := f(x, i); fe != nil {
				return fe
			}
		}
	}
	return nil
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
	v, fe := counterValue("counter_entry.data", ce.Data)
	if fe != nil {
		return fe
	}
	return eachCell(pl.counters, ce.CounterId, ce.Index, false, "counter_entry", "counter_id", "counter", func(x *externDef, i int) *fieldError {
		if err := pl.sw.WriteCounter(x.name, i, v); err != nil {
			return errAt(codes.Internal, "counter_entry", "%v", err)
		}
		return nil
	})
}

func (pl *pipeline) readCounters(ce *p4v1.CounterEntry, emit func(*p4v1.Entity)) *fieldError {
	return eachCell(pl.counters, ce.CounterId, ce.Index, true, "counter_entry", "counter_id", "counter", func(x *externDef, i int) *fieldError {
		v, err := pl.sw.ReadCounter(x.name, i)
		if err != nil {
			return errAt(codes.Internal, "counter_entry", "%v", err)
		}
		emit(&p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{
			CounterId: x.id, Index: &p4v1.Index{Index: int64(i)}, Data: counterData(v)}}})
		return nil
	})
}

// eachDirect calls f for every table entry a direct counter or meter entry
// names: one entry by match, all entries of a table, or (table_id 0) all
// entries of all tables that have such a resource.
func (pl *pipeline) eachDirect(path string, te *p4v1.TableEntry, has func(*tableDef) bool, kind string, f func(td *tableDef, se *storedEntry) *fieldError) *fieldError {
	if te == nil {
		return errAt(codes.InvalidArgument, path+".table_entry", "missing")
	}
	if te.IsDefaultAction {
		return errAt(codes.Unimplemented, path+".table_entry.is_default_action", "the engine keeps no direct %s for the default entry", kind)
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
			return under(path, fe)
		}
		if !has(td) {
			return errAt(codes.InvalidArgument, path+".table_entry.table_id", "table %s has no direct %s", td.name, kind)
		}
		tables = []*tableDef{td}
	}
	for _, td := range tables {
		if len(te.Match) > 0 {
			pm, fe := td.parseMatch(te)
			if fe != nil {
				return under(path, fe)
			}
			se := td.entries[pm.key]
			if se == nil {
				return errAt(codes.NotFound, path+".table_entry", "table %s has no entry with this match and priority", td.name)
			}
			if fe := f(td, se); fe != nil {
				return fe
			}
			continue
		}
		for _, se := range td.sortedEntries() {
			if fe := f(td, se); fe != nil {
				return fe
			}
		}
	}
	return nil
}

func hasDirectCounter(td *tableDef) bool { return td.directCtr != 0 }
func hasDirectMeter(td *tableDef) bool   { return td.directMtr != 0 }

func (pl *pipeline) writeDirectCounter(dc *p4v1.DirectCounterEntry) *fieldError {
	v, fe := counterValue("direct_counter_entry.data", dc.Data)
	if fe != nil {
		return fe
	}
	return pl.eachDirect("direct_counter_entry", dc.TableEntry, hasDirectCounter, "counter", func(td *tableDef, se *storedEntry) *fieldError {
		if err := pl.sw.WriteDirectCounter(td.name, se.handle, v); err != nil {
			return errAt(codes.Internal, "direct_counter_entry", "%v", err)
		}
		return nil
	})
}

func (pl *pipeline) readDirectCounters(dc *p4v1.DirectCounterEntry, emit func(*p4v1.Entity)) *fieldError {
	return pl.eachDirect("direct_counter_entry", dc.TableEntry, hasDirectCounter, "counter", func(td *tableDef, se *storedEntry) *fieldError {
		v, err := pl.sw.ReadDirectCounter(td.name, se.handle)
		if err != nil {
			return errAt(codes.Internal, "direct_counter_entry", "%v", err)
		}
		emit(&p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{
			TableEntry: entryKeyOnly(se.entry), Data: counterData(v)}}})
		return nil
	})
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
// meterUpdate validates the config of a meter write; a nil config (reset
// is true) puts the meter back to unconfigured, marking every packet green,
// as the specification and simple_switch_grpc do.
func meterUpdate(path string, mc *p4v1.MeterConfig, mcd *p4v1.MeterCounterData) (cfg engine.MeterConfig, reset bool, fe *fieldError) {
	if mcd != nil {
		return engine.MeterConfig{}, false, errAt(codes.Unimplemented, path+".counter_data", "meter counters are not supported")
	}
	if mc == nil {
		return engine.MeterConfig{}, true, nil
	}
	cfg, fe = meterConfig(mc)
	if fe != nil {
		return engine.MeterConfig{}, false, under(path+".config", fe)
	}
	return cfg, false, nil
}

func (pl *pipeline) writeMeter(me *p4v1.MeterEntry) *fieldError {
	cfg, reset, fe := meterUpdate("meter_entry", me.Config, me.CounterData)
	if fe != nil {
		return fe
	}
	return eachCell(pl.meters, me.MeterId, me.Index, false, "meter_entry", "meter_id", "meter", func(x *externDef, i int) *fieldError {
		var err error
		if reset {
			err = pl.sw.ResetMeter(x.name, i)
		} else {
			err = pl.sw.SetMeter(x.name, i, cfg)
		}
		if err != nil {
			return errAt(codes.InvalidArgument, "meter_entry.config", "%v", err)
		}
		return nil
	})
}

func (pl *pipeline) readMeters(me *p4v1.MeterEntry, emit func(*p4v1.Entity)) *fieldError {
	return eachCell(pl.meters, me.MeterId, me.Index, true, "meter_entry", "meter_id", "meter", func(x *externDef, i int) *fieldError {
		cfg, ok, err := pl.sw.ReadMeter(x.name, i)
		if err != nil {
			return errAt(codes.Internal, "meter_entry", "%v", err)
		}
		out := &p4v1.MeterEntry{MeterId: x.id, Index: &p4v1.Index{Index: int64(i)}}
		if ok {
			out.Config = meterConfigProto(cfg)
		}
		emit(&p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: out}})
		return nil
	})
}

func (pl *pipeline) writeDirectMeter(dm *p4v1.DirectMeterEntry) *fieldError {
	cfg, reset, fe := meterUpdate("direct_meter_entry", dm.Config, dm.CounterData)
	if fe != nil {
		return fe
	}
	return pl.eachDirect("direct_meter_entry", dm.TableEntry, hasDirectMeter, "meter", func(td *tableDef, se *storedEntry) *fieldError {
		var err error
		if reset {
			err = pl.sw.ResetDirectMeter(td.name, se.handle)
		} else {
			err = pl.sw.SetDirectMeter(td.name, se.handle, cfg)
		}
		if err != nil {
			return errAt(codes.InvalidArgument, "direct_meter_entry.config", "%v", err)
		}
		return nil
	})
}

func (pl *pipeline) readDirectMeters(dm *p4v1.DirectMeterEntry, emit func(*p4v1.Entity)) *fieldError {
	return pl.eachDirect("direct_meter_entry", dm.TableEntry, hasDirectMeter, "meter", func(td *tableDef, se *storedEntry) *fieldError {
		cfg, ok, err := pl.sw.ReadDirectMeter(td.name, se.handle)
		if err != nil {
			return errAt(codes.Internal, "direct_meter_entry", "%v", err)
		}
		out := &p4v1.DirectMeterEntry{TableEntry: entryKeyOnly(se.entry)}
		if ok {
			out.Config = meterConfigProto(cfg)
		}
		emit(&p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: out}})
		return nil
	})
}

func (pl *pipeline) writeRegister(re *p4v1.RegisterEntry) *fieldError {
	bits, ok := re.GetData().GetData().(*p4v1.P4Data_Bitstring)
	return eachCell(pl.registers, re.RegisterId, re.Index, false, "register_entry", "register_id", "register", func(x *externDef, i int) *fieldError {
		if !ok {
			return errAt(codes.InvalidArgument, "register_entry.data", "register %s holds bit<%d>: give a bitstring, not %T", x.name, x.width, re.GetData().GetData())
		}
		v, err := fitValue(bits.Bitstring, x.width)
		if err != nil {
			return errAt(codes.InvalidArgument, "register_entry.data.bitstring", "register %s: %v", x.name, err)
		}
		if err := pl.sw.WriteRegister(x.name, i, v); err != nil {
			return errAt(codes.Internal, "register_entry", "%v", err)
		}
		return nil
	})
}

func (pl *pipeline) readRegisters(re *p4v1.RegisterEntry, emit func(*p4v1.Entity)) *fieldError {
	return eachCell(pl.registers, re.RegisterId, re.Index, true, "register_entry", "register_id", "register", func(x *externDef, i int) *fieldError {
		v, err := pl.sw.ReadRegister(x.name, i)
		if err != nil {
			return errAt(codes.Internal, "register_entry", "%v", err)
		}
		emit(&p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{
			RegisterId: x.id, Index: &p4v1.Index{Index: int64(i)},
			Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: canonical(v)}}}}})
		return nil
	})
}

// describe names an entity kind for errors.
func describe(e *p4v1.Entity) string { return fmt.Sprintf("%T", e.GetEntity()) }
