package client

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/p4rt"
)

const (
	testDevice  = 1
	testCPUPort = 255
)

// switchUnderTest is package p4rt's P4Runtime server on a loopback TCP
// port, with the data plane driven by the test through Process.
type switchUnderTest struct {
	srv  *p4rt.Server
	addr string

	mu          sync.Mutex
	transmitted []engine.Output // what PacketOut made the pipeline send
}

func startSwitch(t testing.TB) *switchUnderTest {
	t.Helper()
	sw := &switchUnderTest{}
	// A clock that stands still: meter buckets never refill.
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sw.srv = p4rt.NewServer(p4rt.Options{DeviceID: testDevice, CPUPort: testCPUPort, Ports: 8,
		Now: func() time.Time { return now },
		Transmit: func(o engine.Output) {
			sw.mu.Lock()
			defer sw.mu.Unlock()
			sw.transmitted = append(sw.transmitted, engine.Output{Port: o.Port, Data: append([]byte(nil), o.Data...)})
		}})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sw.addr = lis.Addr().String()
	g := grpc.NewServer()
	sw.srv.Register(g)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return sw
}

// send runs a frame through the pipeline and returns what came out.
func (sw *switchUnderTest) send(t *testing.T, port uint32, frame []byte) []engine.Output {
	t.Helper()
	var out []engine.Output
	if err := sw.srv.Process(port, frame, func(o engine.Output) {
		out = append(out, engine.Output{Port: o.Port, Data: append([]byte(nil), o.Data...), Instance: o.Instance})
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dialed is a primary client of a fresh switch running testdata/ctl.p4.
func dialed(t testing.TB) (*switchUnderTest, *Client) {
	t.Helper()
	sw := startSwitch(t)
	ctx := testContext(t)
	c, err := Dial(ctx, sw.addr, testDevice, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	prog := ctl(t)
	if err := c.SetPipeline(ctx, prog.P4Info, prog.JSON); err != nil {
		t.Fatal(err)
	}
	return sw, c
}

// frame is an Ethernet frame to dst from src with an etherType and a payload byte.
func frame(dst, src byte, etherType uint16) []byte {
	return []byte{0, 0, 0, 0, 0, dst, 0, 0, 0, 0, 0, src, byte(etherType >> 8), byte(etherType), 0xab}
}

func mac(b byte) []byte { return []byte{0, 0, 0, 0, 0, b} }

func ports(outs []engine.Output) []uint32 {
	var ps []uint32
	for _, o := range outs {
		ps = append(ps, o.Port)
	}
	return ps
}

func fwdEntry(dst byte, port byte) TableEntry {
	return TableEntry{Table: "fwd", Match: []Match{{Value: mac(dst)}}, Action: "forward", Args: [][]byte{{port}}}
}

func TestDialBecomesPrimaryAndALowerElectionIDIsRefused(t *testing.T) {
	sw := startSwitch(t)
	ctx := testContext(t)
	primary, err := Dial(ctx, sw.addr, testDevice, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	_, err = Dial(ctx, sw.addr, testDevice, 5)
	if err == nil || !strings.Contains(err.Error(), "not primary") || !strings.Contains(err.Error(), "the primary has election id 10 (ours is 5)") {
		t.Fatalf("second client: error %v, want one saying it is not primary behind election id 10", err)
	}
	if _, err := Dial(ctx, sw.addr, testDevice+1, 20); err == nil || !strings.Contains(err.Error(), "device 2") {
		t.Fatalf("wrong device: error %v, want one naming device 2", err)
	}
}

// unusedAddr is a loopback address nothing listens on (for now).
func unusedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return lis.Addr().String()
}

func TestDialWaitsForAServerThatIsStillStarting(t *testing.T) {
	addr := unusedAddr(t)
	srv := p4rt.NewServer(p4rt.Options{DeviceID: testDevice})
	g := grpc.NewServer()
	srv.Register(g)
	t.Cleanup(g.Stop)
	started := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		lis, err := net.Listen("tcp", addr)
		started <- err
		if err == nil {
			_ = g.Serve(lis)
		}
	}()
	c, err := Dial(testContext(t), addr, testDevice, 1)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := <-started; err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
}

func TestDialGivesUpWhenTheContextEnds(t *testing.T) {
	addr := unusedAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Dial(ctx, addr, testDevice, 1)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("error %v, want a deadline error naming %s", err, addr)
	}
}

func TestNamesNeedAP4InfoFirst(t *testing.T) {
	sw := startSwitch(t)
	c, err := Dial(testContext(t), sw.addr, testDevice, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.P4Info() != nil {
		t.Error("P4Info before SetPipeline is not nil")
	}
	err = c.InsertEntry(testContext(t), fwdEntry(2, 2))
	if err == nil || !strings.Contains(err.Error(), "no P4Info") {
		t.Fatalf("error %v, want one asking for a P4Info", err)
	}
}

func TestFetchPipelineAdoptsTheP4InfoTheSwitchRuns(t *testing.T) {
	sw, _ := dialed(t)
	other, err := Dial(testContext(t), sw.addr, testDevice, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	info, err := other.FetchPipeline(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.GetTables()) != 3 || other.P4Info() != info {
		t.Fatalf("fetched a P4Info with %d tables, want the 3 of ctl.p4", len(info.GetTables()))
	}
	if err := other.InsertEntry(testContext(t), fwdEntry(2, 2)); err != nil {
		t.Fatal(err)
	}
}

func TestTableEntriesDriveTheDataPlane(t *testing.T) {
	sw, c := dialed(t)
	ctx := testContext(t)
	if err := c.InsertEntry(ctx, fwdEntry(2, 2)); err != nil {
		t.Fatal(err)
	}
	if got := ports(sw.send(t, 1, frame(2, 1, 0x0800))); len(got) != 1 || got[0] != 2 {
		t.Fatalf("after insert: out on ports %v, want [2]", got)
	}
	if err := c.ModifyEntry(ctx, fwdEntry(2, 5)); err != nil {
		t.Fatal(err)
	}
	if got := ports(sw.send(t, 1, frame(2, 1, 0x0800))); len(got) != 1 || got[0] != 5 {
		t.Fatalf("after modify: out on ports %v, want [5]", got)
	}
	entries, err := c.ReadEntries(ctx, "CtlIngress.fwd")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Action != "CtlIngress.forward" || !bytes.Equal(entries[0].Args[0], []byte{0, 5}) ||
		!bytes.Equal(entries[0].Match[0].Value, mac(2)) {
		t.Fatalf("read back %+v, want the modified entry", entries)
	}
	if err := c.DeleteEntry(ctx, TableEntry{Table: "fwd", Match: []Match{{Value: mac(2)}}}); err != nil {
		t.Fatal(err)
	}
	if got := sw.send(t, 1, frame(2, 1, 0x0800)); len(got) != 0 {
		t.Fatalf("after delete: out on ports %v, want none (the default drops)", ports(got))
	}
	if err := c.SetDefaultAction(ctx, "fwd", "forward", [][]byte{{7}}); err != nil {
		t.Fatal(err)
	}
	if got := ports(sw.send(t, 1, frame(9, 1, 0x0800))); len(got) != 1 || got[0] != 7 {
		t.Fatalf("after setting the default: out on ports %v, want [7]", got)
	}
}

func TestWriteErrorsNameTheUpdateAndTheServersReason(t *testing.T) {
	_, c := dialed(t)
	ctx := testContext(t)
	if err := c.InsertEntry(ctx, fwdEntry(2, 2)); err != nil {
		t.Fatal(err)
	}
	err := c.InsertEntry(ctx, fwdEntry(2, 3))
	var we *WriteError
	if !errors.As(err, &we) || we.Code() != codes.AlreadyExists || len(we.Updates) != 1 {
		t.Fatalf("duplicate insert: error %v, want a WriteError with one ALREADY_EXISTS update", err)
	}
	if !strings.HasPrefix(err.Error(), "write: updates[0] (insert table_entry CtlIngress.fwd): AlreadyExists: ") {
		t.Errorf("error %q does not name the update", err)
	}
	// Several updates at once: only the failed one is reported.
	u1, err := c.EntryUpdate(p4v1.Update_INSERT, fwdEntry(3, 3))
	must(t, err)
	u2, err := c.EntryUpdate(p4v1.Update_DELETE, TableEntry{Table: "fwd", Match: []Match{{Value: mac(4)}}})
	must(t, err)
	err = c.Write(ctx, u1, u2)
	if !errors.As(err, &we) || len(we.Updates) != 1 || we.Updates[0].Index != 1 || we.Code() != codes.NotFound ||
		we.Updates[0].What != "delete table_entry CtlIngress.fwd" {
		t.Fatalf("batch: error %v, want only updates[1] (a delete of a missing entry) NOT_FOUND", err)
	}
	entries, err := c.ReadEntries(ctx, "fwd")
	if err != nil || len(entries) != 2 {
		t.Fatalf("after the batch: %d entries (%v), want 2: the insert of the batch went through", len(entries), err)
	}
	if err := c.DeleteAllEntries(ctx, "fwd"); err != nil {
		t.Fatal(err)
	}
	if entries, err := c.ReadEntries(ctx, "fwd"); err != nil || len(entries) != 0 {
		t.Fatalf("after DeleteAllEntries: %d entries (%v)", len(entries), err)
	}
	if err := c.DeleteAllEntries(ctx, "fwd"); err != nil {
		t.Fatalf("DeleteAllEntries on an empty table: %v", err)
	}
}

func TestTernaryRangeLPMAndOptionalEntriesMatchLikeTheProgramSays(t *testing.T) {
	sw, c := dialed(t)
	ctx := testContext(t)
	must(t, c.InsertEntry(ctx, fwdEntry(2, 2)))
	// Deny IPv4-ish types from sources ending in 0x1?; priorities decide overlaps.
	must(t, c.InsertEntry(ctx, TableEntry{Table: "acl", Priority: 10, Action: "deny",
		Match: []Match{{Value: []byte{0x10}, Mask: []byte{0xf0}}, {Value: []byte{0x08, 0x00}, High: []byte{0x08, 0xff}}}}))
	must(t, c.InsertEntry(ctx, TableEntry{Table: "acl", Priority: 20, Action: "allow",
		Match: []Match{{Value: []byte{0x11}}, {Wildcard: true}}}))
	for _, tc := range []struct {
		src       byte
		etherType uint16
		out       int
	}{
		{0x12, 0x0800, 0}, // denied
		{0x12, 0x0806, 0}, // in range 0800..08ff: denied
		{0x12, 0x86dd, 1}, // outside the range
		{0x22, 0x0800, 1}, // other source
		{0x11, 0x0800, 1}, // the higher priority allow wins
	} {
		if got := sw.send(t, 1, frame(2, tc.src, tc.etherType)); len(got) != tc.out {
			t.Errorf("src %#x type %#x: %d packets out, want %d", tc.src, tc.etherType, len(got), tc.out)
		}
	}
	// Mirror packets to 00:00:00:00:00:0? from port 1 only, to session 3.
	must(t, c.InsertCloneSession(ctx, CloneSession{ID: 3, Replicas: []Replica{{Port: 6}}}))
	must(t, c.InsertEntry(ctx, TableEntry{Table: "mirror_by_prefix", Priority: 1, Action: "mirror", Args: [][]byte{{3}},
		Match: []Match{{Value: mac(0), PrefixLen: 44}, {Value: []byte{1}}}}))
	if got := ports(sw.send(t, 1, frame(2, 0x22, 0x0800))); !slices.Equal(sorted(got), []uint32{2, 6}) {
		t.Errorf("mirrored packet from port 1: out on %v, want 2 and the clone on 6", got)
	}
	if got := ports(sw.send(t, 3, frame(2, 0x22, 0x0800))); len(got) != 1 {
		t.Errorf("packet from port 3: out on %v, want only 2 (the optional port field does not match)", got)
	}
}

func TestMulticastGroupsAndCloneSessions(t *testing.T) {
	sw, c := dialed(t)
	ctx := testContext(t)
	must(t, c.InsertEntry(ctx, TableEntry{Table: "fwd", Match: []Match{{Value: mac(0xff)}}, Action: "flood", Args: [][]byte{{0, 4}}}))
	must(t, c.InsertMulticastGroup(ctx, 4, []Replica{{Port: 1, Instance: 1}, {Port: 2, Instance: 1}, {Port: 3, Instance: 2}}))
	if got := ports(sw.send(t, 0, frame(0xff, 1, 0x0800))); len(got) != 3 {
		t.Fatalf("flood: out on %v, want 3 ports", got)
	}
	must(t, c.ModifyMulticastGroup(ctx, 4, []Replica{{Port: 7, Instance: 1}}))
	reps, err := c.ReadMulticastGroup(ctx, 4)
	if err != nil || len(reps) != 1 || reps[0] != (Replica{Port: 7, Instance: 1}) {
		t.Fatalf("read group 4: %v, %v; want one replica to port 7", reps, err)
	}
	if got := ports(sw.send(t, 0, frame(0xff, 1, 0x0800))); len(got) != 1 || got[0] != 7 {
		t.Fatalf("flood after modify: out on %v, want [7]", got)
	}
	must(t, c.DeleteMulticastGroup(ctx, 4))
	if _, err := c.ReadMulticastGroup(ctx, 4); err == nil || err.Error() != "read multicast group 4: the switch has no such multicast group" {
		t.Errorf("reading a deleted group: error %v", err)
	}
	if err := c.DeleteMulticastGroup(ctx, 4); err == nil || !strings.Contains(err.Error(), "delete multicast_group_entry 4") {
		t.Errorf("deleting a missing group: error %v, want one naming the group", err)
	}
	must(t, c.InsertCloneSession(ctx, CloneSession{ID: 9, Replicas: []Replica{{Port: 4}}}))
	must(t, c.ModifyCloneSession(ctx, CloneSession{ID: 9, Replicas: []Replica{{Port: 5, Instance: 1}, {Port: 6, Instance: 1}}, TruncateLength: 64}))
	cs, err := c.ReadCloneSession(ctx, 9)
	if err != nil || len(cs.Replicas) != 2 || cs.Replicas[1] != (Replica{Port: 6, Instance: 1}) || cs.TruncateLength != 64 {
		t.Fatalf("read clone session 9: %+v, %v; want the modified session", cs, err)
	}
	must(t, c.DeleteCloneSession(ctx, 9))
	if _, err := c.ReadCloneSession(ctx, 9); err == nil || err.Error() != "read clone session 9: the switch has no such clone session" {
		t.Errorf("reading a deleted clone session: error %v", err)
	}
	if err := c.DeleteCloneSession(ctx, 9); err == nil || !strings.Contains(err.Error(), "clone_session_entry 9") {
		t.Errorf("deleting a missing clone session: error %v, want one naming it", err)
	}
}

func TestCountersMetersAndRegisters(t *testing.T) {
	sw, c := dialed(t)
	ctx := testContext(t)
	must(t, c.InsertEntry(ctx, fwdEntry(2, 2)))
	for range 3 {
		sw.send(t, 1, frame(2, 1, 0x0800))
	}
	sw.send(t, 4, frame(9, 1, 0x86dd))

	v, err := c.ReadCounter(ctx, "port_in", 1)
	if err != nil || v != (CounterData{Packets: 3, Bytes: 45}) {
		t.Fatalf("port_in[1] = %+v, %v; want 3 packets, 45 bytes", v, err)
	}
	all, err := c.ReadCounters(ctx, "CtlIngress.port_in")
	if err != nil || len(all) != 8 || all[4].Packets != 1 || all[0].Packets != 0 {
		t.Fatalf("all of port_in = %+v, %v", all, err)
	}
	must(t, c.WriteCounter(ctx, "port_in", 1, CounterData{Packets: 100, Bytes: 1000}))
	if v, _ := c.ReadCounter(ctx, "port_in", 1); v.Packets != 100 {
		t.Errorf("port_in[1] after the write = %+v", v)
	}
	_, err = c.Read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: 12345}}})
	// The server's code shows through the client's wrapping.
	if code := status.Code(err); (code != codes.InvalidArgument && code != codes.NotFound) ||
		!strings.HasPrefix(err.Error(), "read counter_entry counter id 12345 (all cells): ") {
		t.Errorf("reading an unknown counter id: error %v (code %v), want the server's INVALID_ARGUMENT or NOT_FOUND", err, code)
	}
	if _, err := c.ReadCounter(ctx, "port_in", 8); err == nil || err.Error() != "counter CtlIngress.port_in: index 8 is outside 0..7" {
		t.Errorf("index 8: error %v", err)
	}
	hits, err := c.ReadDirectCounter(ctx, fwdEntry(2, 0))
	if err != nil || hits.Packets != 3 {
		t.Fatalf("direct counter of the fwd entry = %+v, %v; want 3 packets", hits, err)
	}
	must(t, c.WriteDirectCounter(ctx, fwdEntry(2, 0), CounterData{}))
	if hits, _ := c.ReadDirectCounter(ctx, fwdEntry(2, 0)); hits.Packets != 0 {
		t.Errorf("direct counter after reset = %+v", hits)
	}
	if _, err := c.ReadDirectCounter(ctx, TableEntry{Table: "mirror_by_prefix"}); err == nil || err.Error() != "table CtlIngress.mirror_by_prefix has no direct counter" {
		t.Errorf("direct counter of a table without one: error %v", err)
	}

	if _, configured, err := c.ReadMeter(ctx, "port_rate", 2); err != nil || configured {
		t.Errorf("port_rate[2] before any write: configured %v, %v", configured, err)
	}
	cfg := MeterConfig{CIR: 10, CBurst: 2, PIR: 20, PBurst: 4}
	must(t, c.WriteMeter(ctx, "port_rate", 2, cfg))
	got, configured, err := c.ReadMeter(ctx, "port_rate", 2)
	if err != nil || !configured || got != cfg {
		t.Errorf("port_rate[2] = %+v (configured %v), %v; want %+v", got, configured, err, cfg)
	}
	acl := TableEntry{Table: "acl", Priority: 1, Action: "allow", Match: []Match{{Value: []byte{1}}}}
	must(t, c.InsertEntry(ctx, acl))
	must(t, c.WriteDirectMeter(ctx, acl, cfg))
	if got, configured, err := c.ReadDirectMeter(ctx, acl); err != nil || !configured || got != cfg {
		t.Errorf("direct meter = %+v (configured %v), %v; want %+v", got, configured, err, cfg)
	}

	r, err := c.ReadRegister(ctx, "last_type", 4)
	if err != nil || !bytes.Equal(r, []byte{0x86, 0xdd}) {
		t.Fatalf("last_type[4] = %x, %v; want 86dd", r, err)
	}
	must(t, c.WriteRegister(ctx, "last_type", 0, []byte{0x12}))
	cells, err := c.ReadRegisters(ctx, "last_type")
	if err != nil || len(cells) != 8 || !bytes.Equal(cells[0], []byte{0, 0x12}) || !bytes.Equal(cells[1], []byte{0x08, 0}) {
		t.Fatalf("last_type = %x, %v", cells, err)
	}
	if err := c.WriteRegister(ctx, "last_type", 0, []byte{1, 0, 0}); err == nil || err.Error() != "register last_type[0]: value 0x010000 does not fit in 16 bits" {
		t.Errorf("too wide a register value: error %v", err)
	}
	must(t, c.ResetRegister(ctx, "last_type"))
	cells, err = c.ReadRegisters(ctx, "last_type")
	if err != nil {
		t.Fatal(err)
	}
	for i, cell := range cells {
		if !isZero(cell) {
			t.Errorf("last_type[%d] = %x after ResetRegister", i, cell)
		}
	}
}

func TestPacketOutAndPacketIn(t *testing.T) {
	sw, c := dialed(t)
	ctx := testContext(t)
	payload := frame(2, 1, 0x0800)
	if err := c.SendPacket(payload, Metadata{Name: "egress_port", Value: []byte{3}}, Metadata{Name: "pad", Value: []byte{0}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		sw.mu.Lock()
		n := len(sw.transmitted)
		sw.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	sw.mu.Lock()
	out := sw.transmitted
	sw.mu.Unlock()
	if len(out) != 1 || out[0].Port != 3 || !bytes.Equal(out[0].Data, payload) {
		t.Fatalf("PacketOut came out as %+v, want the payload on port 3", out)
	}
	if err := c.SendPacket(payload, Metadata{Name: "egress_port", Value: []byte{3}}); err == nil || err.Error() != "packet_out metadata pad (7 bits) is missing" {
		t.Errorf("missing metadata: error %v", err)
	}
	if err := c.SendPacket(payload, Metadata{Name: "egress_port", Value: []byte{2, 0}}, Metadata{Name: "pad", Value: []byte{0}}); err == nil ||
		err.Error() != "packet_out metadata egress_port: value 0x0200 does not fit in 9 bits" {
		t.Errorf("too wide metadata: error %v", err)
	}

	must(t, c.InsertEntry(ctx, TableEntry{Table: "fwd", Match: []Match{{Value: mac(0xcc)}}, Action: "to_cpu"}))
	if got := sw.send(t, 6, frame(0xcc, 1, 0x0800)); len(got) != 0 {
		t.Errorf("a packet to the CPU port also came out on data ports %v", ports(got))
	}
	select {
	case in := <-c.PacketIns():
		if !bytes.Equal(in.Metadata["ingress_port"], []byte{0, 6}) || !bytes.Equal(in.Payload, frame(0xcc, 1, 0x0800)) {
			t.Errorf("PacketIn %+v, want the frame with ingress_port 6", in)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no PacketIn within 5 s")
	}
}

func TestCloseEndsTheStreamAndLetsAnotherClientBecomePrimary(t *testing.T) {
	sw, c := dialed(t)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, open := <-c.PacketIns(); open {
		t.Error("PacketIns is still open after Close")
	}
	if c.Err() != nil {
		t.Errorf("Err after Close = %v, want nil", c.Err())
	}
	lower, err := Dial(testContext(t), sw.addr, testDevice, 1)
	if err != nil {
		t.Fatalf("a client with the same election id after Close: %v", err)
	}
	lower.Close()
}

func sorted(ps []uint32) []uint32 {
	slices.Sort(ps)
	return ps
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
