package p4rt

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/p4c"
)

func preEntity(e *p4v1.PacketReplicationEngineEntry) *p4v1.Entity {
	return &p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: e}}
}

func multicastGroup(id uint32, ports ...uint32) *p4v1.Entity {
	g := &p4v1.MulticastGroupEntry{MulticastGroupId: id}
	for i, p := range ports {
		g.Replicas = append(g.Replicas, &p4v1.Replica{PortKind: &p4v1.Replica_Port{Port: []byte{byte(p)}}, Instance: uint32(i + 1)})
	}
	return preEntity(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: g}})
}

// broadcastEntry sends frames to ff:ff:ff:ff:ff:ff to multicast group 1.
func (f *fixture) broadcastEntry() *p4v1.TableEntry {
	return &p4v1.TableEntry{TableId: f.tableID("TestIngress.acl"), Priority: 1,
		Match:  []*p4v1.FieldMatch{ternary(1, bytes.Repeat([]byte{0xff}, 6), bytes.Repeat([]byte{0xff}, 6))},
		Action: action(f.actionID("TestIngress.flood"), []byte{1})}
}

func TestMulticastGroupReplicatesToItsPorts(t *testing.T) {
	f := newFixture(t)
	f.setup()
	f.mustWrite(update(p4v1.Update_INSERT, multicastGroup(1, 1, 2, 3)), update(p4v1.Update_INSERT, tableEntity(f.broadcastEntry())))
	frame := ipv4Frame([4]byte{1, 2, 3, 4})
	copy(frame[0:6], bytes.Repeat([]byte{0xff}, 6))
	out := f.process(0, frame)
	if len(out) != 3 {
		t.Fatalf("%s, want copies on ports 1, 2, 3", describeOutputs(out))
	}
	for i, o := range out {
		if o.Port != uint32(i+1) || o.Instance != engine.InstanceReplication {
			t.Fatalf("copy %d: port %d instance %d, want port %d, replication", i, o.Port, o.Instance, i+1)
		}
	}
	err := f.write(1, update(p4v1.Update_INSERT, multicastGroup(1, 4)))
	oneUpdateError(t, err, codes.AlreadyExists, "updates[0].entity.packet_replication_engine_entry.multicast_group_entry.multicast_group_id")
	f.mustWrite(update(p4v1.Update_MODIFY, multicastGroup(1, 5)))
	if out := f.process(0, frame); len(out) != 1 || out[0].Port != 5 {
		t.Fatalf("after modifying the group to port 5: %s", describeOutputs(out))
	}
	got := f.read(multicastGroup(0))
	if len(got) != 1 || !proto.Equal(got[0], multicastGroup(1, 5)) {
		t.Fatalf("read all groups: %v", got)
	}
	f.mustWrite(update(p4v1.Update_DELETE, multicastGroup(1)))
	if out := f.process(0, frame); len(out) != 0 {
		t.Fatalf("after deleting the group: %s", describeOutputs(out))
	}
	err = f.write(1, update(p4v1.Update_INSERT, multicastGroup(0, 1)))
	oneUpdateError(t, err, codes.InvalidArgument, "multicast_group_id: 0 means no multicast")
	err = f.write(1, update(p4v1.Update_INSERT, multicastGroup(40000, 1)))
	oneUpdateError(t, err, codes.OutOfRange, "multicast_group_id: 40000: groups from 32768 up are reserved for clone sessions")
	if _, err := f.tryRead(multicastGroup(1)); status.Code(err) != codes.NotFound {
		t.Fatalf("read of deleted group 1: %v, want NOT_FOUND", err)
	}
}

// clone_i2e mirrors packets from port 1 to session 5 and marks clones in
// egress: a session with two replicas makes two marked clones.
func TestCloneSessionReplicasReceiveClones(t *testing.T) {
	res, err := p4c.Compile(filepath.Join(repo.RootOrFail(t), "p4", "examples", "clone_i2e.p4"), p4c.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	f.prog = res
	f.setup()
	session := func(id uint32, ports ...byte) *p4v1.Entity {
		c := &p4v1.CloneSessionEntry{SessionId: id}
		for _, p := range ports {
			c.Replicas = append(c.Replicas, &p4v1.Replica{PortKind: &p4v1.Replica_Port{Port: []byte{p}}, Instance: 1})
		}
		return preEntity(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{CloneSessionEntry: c}})
	}
	mirror := &p4v1.TableEntry{TableId: f.tableID("CloneIngress.mirror_ports"),
		Match:  []*p4v1.FieldMatch{{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: []byte{1}}}}},
		Action: action(f.actionID("CloneIngress.mirror"), []byte{5})}
	f.mustWrite(update(p4v1.Update_INSERT, session(5, 4, 6)), update(p4v1.Update_INSERT, tableEntity(mirror)))
	frame := ipv4Frame([4]byte{1, 2, 3, 4})
	out := f.process(1, frame)
	var clones []uint32
	for _, o := range out {
		if o.Instance == engine.InstanceIngressClone {
			clones = append(clones, o.Port)
		}
	}
	if len(out) != 3 || len(clones) != 2 || clones[0] != 4 || clones[1] != 6 {
		t.Fatalf("%s: want the original on port 2 and clones on ports 4 and 6", describeOutputs(out))
	}
	got := f.read(session(0))
	if len(got) != 1 || !proto.Equal(got[0], session(5, 4, 6)) {
		t.Fatalf("read clone sessions: %v", got)
	}
	f.mustWrite(update(p4v1.Update_DELETE, session(5)))
	if out := f.process(1, frame); len(out) != 1 {
		t.Fatalf("after deleting the session: %s, want only the original", describeOutputs(out))
	}
	if _, err := f.tryRead(session(5)); status.Code(err) != codes.NotFound {
		t.Fatalf("read of deleted session 5: %v, want NOT_FOUND", err)
	}
	err = f.write(1, update(p4v1.Update_MODIFY, session(6, 4)))
	oneUpdateError(t, err, codes.NotFound, "clone_session_entry.session_id: no clone session 6")
}

func TestCountersCountPacketsAndCanBeReset(t *testing.T) {
	f := newFixture(t)
	f.setup()
	f.mustWrite(update(p4v1.Update_INSERT, tableEntity(f.route(ip(10, 0, 0, 0), 8, 3))))
	frame := ipv4Frame([4]byte{10, 0, 0, 1})
	for range 3 {
		f.process(2, frame)
	}
	portPackets := preambleID(t, f.prog.P4Info.Counters, "TestIngress.port_packets")
	counter := func(index *p4v1.Index) *p4v1.Entity {
		return &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: portPackets, Index: index}}}
	}
	got := f.read(counter(&p4v1.Index{Index: 2}))
	if d := got[0].GetCounterEntry().GetData(); len(got) != 1 || d.PacketCount != 3 || d.ByteCount != 3*int64(len(frame)) {
		t.Fatalf("port 2 counter: %v, want 3 packets, %d bytes", got, 3*len(frame))
	}
	if got := f.read(counter(nil)); len(got) != 8 {
		t.Fatalf("all cells: %d, want 8", len(got))
	}
	// the route's direct counter saw the same packets
	direct := &p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{
		TableEntry: &p4v1.TableEntry{TableId: f.tableID("TestIngress.ipv4_lpm"), Match: f.route(ip(10, 0, 0, 0), 8, 0).Match}}}}
	got = f.read(direct)
	if len(got) != 1 || got[0].GetDirectCounterEntry().GetData().GetPacketCount() != 3 {
		t.Fatalf("route's direct counter: %v, want 3 packets", got)
	}
	direct.GetDirectCounterEntry().Data = &p4v1.CounterData{}
	f.mustWrite(update(p4v1.Update_MODIFY, direct), update(p4v1.Update_MODIFY,
		&p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: portPackets, Index: &p4v1.Index{Index: 2}, Data: &p4v1.CounterData{}}}}))
	if d := f.read(counter(&p4v1.Index{Index: 2}))[0].GetCounterEntry().GetData(); d.PacketCount != 0 {
		t.Fatalf("port 2 counter after reset: %v", d)
	}
	if d := f.read(direct)[0].GetDirectCounterEntry().GetData(); d.PacketCount != 0 {
		t.Fatalf("direct counter after reset: %v", d)
	}
	err := f.write(1, update(p4v1.Update_INSERT, counter(&p4v1.Index{Index: 9})))
	oneUpdateError(t, err, codes.InvalidArgument, "updates[0].type: counter cells always exist: they can only be modified, not INSERT")
	err = f.write(1, update(p4v1.Update_MODIFY, counter(&p4v1.Index{Index: 9})))
	oneUpdateError(t, err, codes.OutOfRange, "updates[0].entity.counter_entry.index.index: 9 outside")
}

func TestMeterOverItsRateMarksRedAndDrops(t *testing.T) {
	f := newFixture(t)
	f.setup()
	f.mustWrite(update(p4v1.Update_INSERT, tableEntity(f.route(ip(10, 0, 0, 0), 8, 3))))
	meterID := preambleID(t, f.prog.P4Info.Meters, "TestIngress.port_meter")
	cfg := &p4v1.MeterConfig{Cir: 1, Cburst: 2, Pir: 1, Pburst: 2}
	meter := &p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: &p4v1.MeterEntry{MeterId: meterID, Index: &p4v1.Index{Index: 1}, Config: cfg}}}
	f.mustWrite(update(p4v1.Update_MODIFY, meter))
	frame := ipv4Frame([4]byte{10, 0, 0, 1})
	// The clock stands still: the two-packet peak bucket passes two packets.
	for i := range 2 {
		if out := f.process(1, frame); len(out) != 1 {
			t.Fatalf("packet %d within the burst: %s", i, describeOutputs(out))
		}
	}
	if out := f.process(1, frame); len(out) != 0 {
		t.Fatalf("third packet over the peak burst was not dropped (red): %s", describeOutputs(out))
	}
	if out := f.process(2, frame); len(out) != 1 {
		t.Fatalf("port 2's unconfigured meter dropped a packet: %s", describeOutputs(out))
	}
	got := f.read(&p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: &p4v1.MeterEntry{MeterId: meterID}}})
	if len(got) != 8 || !proto.Equal(got[1].GetMeterEntry().GetConfig(), cfg) || got[2].GetMeterEntry().GetConfig() != nil {
		t.Fatalf("read meters: %v", got)
	}
	meter.GetMeterEntry().Config = &p4v1.MeterConfig{Cir: 5, Pir: 2}
	err := f.write(1, update(p4v1.Update_MODIFY, meter))
	oneUpdateError(t, err, codes.InvalidArgument, "updates[0].entity.meter_entry.config.pir: peak rate 2 is below the committed rate 5")
	// without a config, MODIFY resets the cell: unconfigured, every packet green
	meter.GetMeterEntry().Config = nil
	f.mustWrite(update(p4v1.Update_MODIFY, meter))
	for i := range 3 {
		if out := f.process(1, frame); len(out) != 1 {
			t.Fatalf("packet %d after the reset was dropped: %s", i, describeOutputs(out))
		}
	}
	if got := f.read(meter); len(got) != 1 || got[0].GetMeterEntry().GetConfig() != nil {
		t.Fatalf("meter after reset: %v, want no config", got)
	}
}

func TestRegistersReadWhatPacketsWroteAndWhatTheControllerWrote(t *testing.T) {
	f := newFixture(t)
	f.setup()
	regID := preambleID(t, f.prog.P4Info.Registers, "TestIngress.last_length")
	reg := func(index *p4v1.Index, value []byte) *p4v1.Entity {
		re := &p4v1.RegisterEntry{RegisterId: regID, Index: index}
		if value != nil {
			re.Data = &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: value}}
		}
		return &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: re}}
	}
	frame := ipv4Frame([4]byte{10, 0, 0, 1})
	f.process(1, frame)
	got := f.read(reg(&p4v1.Index{Index: 1}, nil))
	if len(got) != 1 || !bytes.Equal(got[0].GetRegisterEntry().GetData().GetBitstring(), []byte{byte(len(frame))}) {
		t.Fatalf("register cell 1 after a %d-byte packet: %v", len(frame), got)
	}
	f.mustWrite(update(p4v1.Update_MODIFY, reg(&p4v1.Index{Index: 5}, []byte{0, 0, 0x12, 0x34})))
	got = f.read(reg(nil, nil))
	if len(got) != 8 || !bytes.Equal(got[5].GetRegisterEntry().GetData().GetBitstring(), []byte{0x12, 0x34}) {
		t.Fatalf("all cells after writing 0x1234 to cell 5: %v", got)
	}
	err := f.write(1, update(p4v1.Update_MODIFY, reg(&p4v1.Index{Index: 5}, []byte{1, 0, 0, 0, 0})))
	oneUpdateError(t, err, codes.InvalidArgument, "updates[0].entity.register_entry.data.bitstring: register TestIngress.last_length: 5 bytes")
}

func TestPacketOutIsInjectedAndPuntedPacketsArrivePacketIn(t *testing.T) {
	f := newFixture(t)
	c := f.setup()
	backup := f.connect(0)
	if code := backup.arbitration(t); code != codes.AlreadyExists {
		t.Fatalf("controller without election id: %v, want ALREADY_EXISTS", code)
	}
	// PacketOut: metadata egress_port 2 in the 9-bit field of packet_out
	payload := ipv4Frame([4]byte{9, 9, 9, 9})
	po := &p4v1.PacketOut{Payload: payload, Metadata: []*p4v1.PacketMetadata{{MetadataId: 1, Value: []byte{2}}, {MetadataId: 2, Value: []byte{0}}}}
	if err := c.stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Packet{Packet: po}}); err != nil {
		t.Fatal(err)
	}
	// a backup's PacketOut is refused with a stream error
	if err := backup.stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Packet{Packet: po}}); err != nil {
		t.Fatal(err)
	}
	if m := backup.next(t); m.GetError().GetCanonicalCode() != int32(codes.PermissionDenied) || m.GetError().GetPacketOut() == nil {
		t.Fatalf("backup PacketOut: %v, want a PERMISSION_DENIED stream error", m)
	}
	// PacketIn: punt frames of EtherType 0x1234 with reason 5
	punt := &p4v1.TableEntry{TableId: f.tableID("TestIngress.acl"), Priority: 1,
		Match: []*p4v1.FieldMatch{ternary(2, []byte{0x12, 0x34}, []byte{0xff, 0xff})}, Action: action(f.actionID("TestIngress.punt"), []byte{5})}
	f.mustWrite(update(p4v1.Update_INSERT, tableEntity(punt)))
	frame := ipv4Frame([4]byte{1, 1, 1, 1})
	frame[12], frame[13] = 0x12, 0x34
	if out := f.process(3, frame); len(out) != 0 {
		t.Fatalf("a punted packet left on a data-plane port: %s", describeOutputs(out))
	}
	m := c.next(t)
	pin := m.GetPacket()
	if pin == nil {
		t.Fatalf("primary got %v, want a PacketIn", m)
	}
	want := []*p4v1.PacketMetadata{{MetadataId: 1, Value: []byte{3}}, {MetadataId: 2, Value: []byte{5}}}
	if !bytes.Equal(pin.Payload, frame) || len(pin.Metadata) != 2 || !proto.Equal(pin.Metadata[0], want[0]) || !proto.Equal(pin.Metadata[1], want[1]) {
		t.Fatalf("PacketIn %v, want the frame with ingress_port 3, reason 5", pin)
	}
	// the PacketOut travelled on the stream, the Write and Process did not:
	// give the stream a moment
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.mu.Lock()
		sent := append([]engine.Output(nil), f.transmitted...)
		f.mu.Unlock()
		if len(sent) == 1 && sent[0].Port == 2 && bytes.Equal(sent[0].Data, payload) {
			return
		}
		if len(sent) > 1 || time.Now().After(deadline) {
			t.Fatalf("PacketOut transmitted %s, want the payload on port 2", describeOutputs(sent))
		}
		time.Sleep(time.Millisecond)
	}
}

func TestDirectMeterOfAnEntryMarksRedAndIsReadBack(t *testing.T) {
	f := newFixture(t)
	f.setup()
	cfg := &p4v1.MeterConfig{Cir: 1, Cburst: 1, Pir: 1, Pburst: 1}
	entry := &p4v1.TableEntry{TableId: f.tableID("TestIngress.acl"), Priority: 1,
		Match:  []*p4v1.FieldMatch{ternary(2, []byte{8, 0}, []byte{0xff, 0xff})},
		Action: action(f.actionID("TestIngress.set_port"), []byte{6}), MeterConfig: cfg}
	f.mustWrite(update(p4v1.Update_INSERT, tableEntity(entry)))
	frame := ipv4Frame([4]byte{1, 2, 3, 4})
	if out := f.process(1, frame); len(out) != 1 || out[0].Port != 6 {
		t.Fatalf("first packet within the one-packet burst: %s", describeOutputs(out))
	}
	if out := f.process(1, frame); len(out) != 0 {
		t.Fatalf("second packet over the burst (the clock stands still) was not dropped: %s", describeOutputs(out))
	}
	key := &p4v1.TableEntry{TableId: entry.TableId, Priority: 1, Match: entry.Match}
	direct := &p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: &p4v1.DirectMeterEntry{TableEntry: key}}}
	got := f.read(direct)
	if len(got) != 1 || !proto.Equal(got[0].GetDirectMeterEntry().GetConfig(), cfg) {
		t.Fatalf("direct meter read: %v, want %v", got, cfg)
	}
	bigger := &p4v1.MeterConfig{Cir: 1, Cburst: 5, Pir: 1, Pburst: 5}
	f.mustWrite(update(p4v1.Update_MODIFY, &p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: &p4v1.DirectMeterEntry{TableEntry: key, Config: bigger}}}))
	if out := f.process(1, frame); len(out) != 1 {
		t.Fatalf("after raising the burst to 5: %s", describeOutputs(out))
	}
	f.mustWrite(update(p4v1.Update_MODIFY, &p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: &p4v1.DirectMeterEntry{TableEntry: key}}}))
	for i := range 10 {
		if out := f.process(1, frame); len(out) != 1 {
			t.Fatalf("packet %d after resetting the direct meter was dropped: %s", i, describeOutputs(out))
		}
	}
	if got := f.read(direct); len(got) != 1 || got[0].GetDirectMeterEntry().GetConfig() != nil {
		t.Fatalf("direct meter after reset: %v, want no config", got)
	}
	f.mustWrite(update(p4v1.Update_MODIFY, &p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: &p4v1.DirectMeterEntry{TableEntry: key, Config: bigger}}}))
	withMeter := proto.Clone(key).(*p4v1.TableEntry)
	withMeter.MeterConfig = &p4v1.MeterConfig{}
	got = f.read(tableEntity(withMeter))
	if len(got) != 1 || !proto.Equal(got[0].GetTableEntry().GetMeterConfig(), bigger) {
		t.Fatalf("entry read with meter_config: %v, want %v", got, bigger)
	}
	route := f.route(ip(10, 0, 0, 0), 8, 1)
	route.MeterConfig = cfg
	err := f.write(1, update(p4v1.Update_INSERT, tableEntity(route)))
	oneUpdateError(t, err, codes.InvalidArgument, "updates[0].entity.table_entry.meter_config: table TestIngress.ipv4_lpm has no direct meter")
}
