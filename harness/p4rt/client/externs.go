package client

import (
	"context"
	"fmt"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// CounterData is the state of a counter cell.
type CounterData struct {
	Packets uint64
	Bytes   uint64
}

// MeterConfig configures a two-rate three-colour meter (RFC 2698) in the
// meter's unit (packets or bytes) per second and units of burst, as
// P4Runtime's MeterConfig does.
type MeterConfig struct {
	CIR    uint64
	CBurst uint64
	PIR    uint64
	PBurst uint64
}

func counterData(d *p4v1.CounterData) CounterData {
	return CounterData{Packets: uint64(d.GetPacketCount()), Bytes: uint64(d.GetByteCount())}
}

func (d CounterData) proto() *p4v1.CounterData {
	return &p4v1.CounterData{PacketCount: int64(d.Packets), ByteCount: int64(d.Bytes)}
}

func meterConfig(m *p4v1.MeterConfig) MeterConfig {
	return MeterConfig{CIR: uint64(m.GetCir()), CBurst: uint64(m.GetCburst()), PIR: uint64(m.GetPir()), PBurst: uint64(m.GetPburst())}
}

func (m MeterConfig) proto() *p4v1.MeterConfig {
	return &p4v1.MeterConfig{Cir: int64(m.CIR), Cburst: int64(m.CBurst), Pir: int64(m.PIR), Pburst: int64(m.PBurst)}
}

// checkIndex checks a cell index against an array's size.
func checkIndex(kind, name string, index int64, size int64) error {
	if index < 0 || index >= size {
		return fmt.Errorf("%s %s: index %d is outside 0..%d", kind, name, index, size-1)
	}
	return nil
}

func modify(e *p4v1.Entity) *p4v1.Update { return &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: e} }

// counterEntity resolves an indexed counter; index < 0 means every cell.
func (c *Client) counterEntity(name string, index int64) (*p4v1.CounterEntry, int64, error) {
	s, err := c.symbols()
	if err != nil {
		return nil, 0, err
	}
	ctr, err := s.counters.find(name)
	if err != nil {
		return nil, 0, err
	}
	ce := &p4v1.CounterEntry{CounterId: ctr.GetPreamble().GetId()}
	if index >= 0 {
		if err := checkIndex("counter", ctr.GetPreamble().GetName(), index, ctr.GetSize()); err != nil {
			return nil, 0, err
		}
		ce.Index = &p4v1.Index{Index: index}
	}
	return ce, ctr.GetSize(), nil
}

// ReadCounter reads one cell of an indexed counter.
func (c *Client) ReadCounter(ctx context.Context, counter string, index int64) (CounterData, error) {
	ce, _, err := c.counterEntity(counter, index)
	if err != nil {
		return CounterData{}, err
	}
	ents, err := c.Read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: ce}})
	if err != nil {
		return CounterData{}, err
	}
	for _, e := range ents {
		if got := e.GetCounterEntry(); got != nil && got.GetIndex().GetIndex() == index {
			return counterData(got.GetData()), nil
		}
	}
	return CounterData{}, fmt.Errorf("read counter %s[%d]: the server returned no such cell", counter, index)
}

// ReadCounters reads every cell of an indexed counter, by index.
func (c *Client) ReadCounters(ctx context.Context, counter string) ([]CounterData, error) {
	ce, size, err := c.counterEntity(counter, -1)
	if err != nil {
		return nil, err
	}
	ents, err := c.Read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: ce}})
	if err != nil {
		return nil, err
	}
	out := make([]CounterData, size)
	for _, e := range ents {
		got := e.GetCounterEntry()
		if i := got.GetIndex().GetIndex(); got != nil && i >= 0 && i < size {
			out[i] = counterData(got.GetData())
		}
	}
	return out, nil
}

// WriteCounter sets one cell of an indexed counter.
func (c *Client) WriteCounter(ctx context.Context, counter string, index int64, v CounterData) error {
	ce, _, err := c.counterEntity(counter, index)
	if err != nil {
		return err
	}
	ce.Data = v.proto()
	return c.Write(ctx, modify(&p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: ce}}))
}

// directKey resolves the entry a direct resource belongs to; has checks
// that the table has that resource.
func (c *Client) directKey(e TableEntry, resource string) (*p4v1.TableEntry, error) {
	s, err := c.symbols()
	if err != nil {
		return nil, err
	}
	t, err := s.tables.find(e.Table)
	if err != nil {
		return nil, err
	}
	switch resource {
	case "counter":
		_, err = s.directCounterOf(t)
	case "meter":
		_, err = s.directMeterOf(t)
	}
	if err != nil {
		return nil, err
	}
	return s.tableEntry(e, false)
}

// ReadDirectCounter reads the direct counter of the entry with e's match
// and priority (its action is ignored).
func (c *Client) ReadDirectCounter(ctx context.Context, e TableEntry) (CounterData, error) {
	key, err := c.directKey(e, "counter")
	if err != nil {
		return CounterData{}, err
	}
	ents, err := c.Read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{TableEntry: key}}})
	if err != nil {
		return CounterData{}, err
	}
	if len(ents) != 1 {
		return CounterData{}, fmt.Errorf("read direct counter of table %s: the server returned %d entries, want 1", e.Table, len(ents))
	}
	return counterData(ents[0].GetDirectCounterEntry().GetData()), nil
}

// WriteDirectCounter sets the direct counter of the entry with e's match
// and priority.
func (c *Client) WriteDirectCounter(ctx context.Context, e TableEntry, v CounterData) error {
	key, err := c.directKey(e, "counter")
	if err != nil {
		return err
	}
	return c.Write(ctx, modify(&p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{TableEntry: key, Data: v.proto()}}}))
}

func (c *Client) meterEntity(name string, index int64) (*p4v1.MeterEntry, error) {
	s, err := c.symbols()
	if err != nil {
		return nil, err
	}
	m, err := s.meters.find(name)
	if err != nil {
		return nil, err
	}
	if err := checkIndex("meter", m.GetPreamble().GetName(), index, m.GetSize()); err != nil {
		return nil, err
	}
	return &p4v1.MeterEntry{MeterId: m.GetPreamble().GetId(), Index: &p4v1.Index{Index: index}}, nil
}

// WriteMeter configures one cell of an indexed meter.
func (c *Client) WriteMeter(ctx context.Context, meter string, index int64, cfg MeterConfig) error {
	me, err := c.meterEntity(meter, index)
	if err != nil {
		return err
	}
	me.Config = cfg.proto()
	return c.Write(ctx, modify(&p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: me}}))
}

// ReadMeter returns the configuration of one cell of an indexed meter and
// whether it is configured at all.
func (c *Client) ReadMeter(ctx context.Context, meter string, index int64) (MeterConfig, bool, error) {
	me, err := c.meterEntity(meter, index)
	if err != nil {
		return MeterConfig{}, false, err
	}
	ents, err := c.Read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: me}})
	if err != nil {
		return MeterConfig{}, false, err
	}
	for _, e := range ents {
		if got := e.GetMeterEntry(); got != nil && got.GetIndex().GetIndex() == index {
			return meterConfig(got.GetConfig()), got.GetConfig() != nil, nil
		}
	}
	return MeterConfig{}, false, fmt.Errorf("read meter %s[%d]: the server returned no such cell", meter, index)
}

// WriteDirectMeter configures the direct meter of the entry with e's match
// and priority.
func (c *Client) WriteDirectMeter(ctx context.Context, e TableEntry, cfg MeterConfig) error {
	key, err := c.directKey(e, "meter")
	if err != nil {
		return err
	}
	return c.Write(ctx, modify(&p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: &p4v1.DirectMeterEntry{TableEntry: key, Config: cfg.proto()}}}))
}

// ReadDirectMeter returns the configuration of the direct meter of the
// entry with e's match and priority, and whether it is configured.
func (c *Client) ReadDirectMeter(ctx context.Context, e TableEntry) (MeterConfig, bool, error) {
	key, err := c.directKey(e, "meter")
	if err != nil {
		return MeterConfig{}, false, err
	}
	ents, err := c.Read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: &p4v1.DirectMeterEntry{TableEntry: key}}})
	if err != nil {
		return MeterConfig{}, false, err
	}
	if len(ents) != 1 {
		return MeterConfig{}, false, fmt.Errorf("read direct meter of table %s: the server returned %d entries, want 1", e.Table, len(ents))
	}
	cfg := ents[0].GetDirectMeterEntry().GetConfig()
	return meterConfig(cfg), cfg != nil, nil
}

// registerEntity resolves a register; index < 0 means every cell.
func (c *Client) registerEntity(name string, index int64) (*p4v1.RegisterEntry, int32, int64, error) {
	s, err := c.symbols()
	if err != nil {
		return nil, 0, 0, err
	}
	r, err := s.registers.find(name)
	if err != nil {
		return nil, 0, 0, err
	}
	size := int64(r.GetSize())
	re := &p4v1.RegisterEntry{RegisterId: r.GetPreamble().GetId()}
	if index >= 0 {
		if err := checkIndex("register", r.GetPreamble().GetName(), index, size); err != nil {
			return nil, 0, 0, err
		}
		re.Index = &p4v1.Index{Index: index}
	}
	return re, registerWidth(r), size, nil
}

// ReadRegister reads one register cell as a big-endian value of the
// register's width (rounded up to bytes).
func (c *Client) ReadRegister(ctx context.Context, register string, index int64) ([]byte, error) {
	re, width, _, err := c.registerEntity(register, index)
	if err != nil {
		return nil, err
	}
	ents, err := c.Read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: re}})
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if got := e.GetRegisterEntry(); got != nil && got.GetIndex().GetIndex() == index {
			return pad(got.GetData().GetBitstring(), width), nil
		}
	}
	return nil, fmt.Errorf("read register %s[%d]: the server returned no such cell", register, index)
}

// ReadRegisters reads every cell of a register, by index.
func (c *Client) ReadRegisters(ctx context.Context, register string) ([][]byte, error) {
	re, width, size, err := c.registerEntity(register, -1)
	if err != nil {
		return nil, err
	}
	ents, err := c.Read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: re}})
	if err != nil {
		return nil, err
	}
	out := make([][]byte, size)
	for _, e := range ents {
		got := e.GetRegisterEntry()
		if i := got.GetIndex().GetIndex(); got != nil && i >= 0 && i < size {
			out[i] = pad(got.GetData().GetBitstring(), width)
		}
	}
	for i := range out {
		if out[i] == nil {
			return nil, fmt.Errorf("read register %s: the server returned no cell %d", register, i)
		}
	}
	return out, nil
}

// WriteRegister sets one register cell.
func (c *Client) WriteRegister(ctx context.Context, register string, index int64, value []byte) error {
	re, width, _, err := c.registerEntity(register, index)
	if err != nil {
		return err
	}
	v, err := encode(fmt.Sprintf("register %s[%d]", register, index), value, width)
	if err != nil {
		return err
	}
	re.Data = &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: v}}
	return c.Write(ctx, modify(&p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: re}}))
}

// ResetRegister sets every cell of a register to 0, in one write.
func (c *Client) ResetRegister(ctx context.Context, register string) error {
	re, _, size, err := c.registerEntity(register, -1)
	if err != nil {
		return err
	}
	updates := make([]*p4v1.Update, size)
	for i := range updates {
		cell := &p4v1.RegisterEntry{RegisterId: re.GetRegisterId(), Index: &p4v1.Index{Index: int64(i)},
			Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{0}}}}
		updates[i] = modify(&p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: cell}})
	}
	return c.Write(ctx, updates...)
}
