package p4rt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/p4c"
)

const (
	testDevice  = 1
	testCPUPort = 255
	testPorts   = 8
)

var (
	compileOnce sync.Once
	compiled    *p4c.Result
	compileErr  error
)

// testProgram compiles testdata/p4rt_test.p4 once per test binary.
func testProgram(t testing.TB) *p4c.Result {
	t.Helper()
	compileOnce.Do(func() { compiled, compileErr = p4c.Compile("testdata/p4rt_test.p4", p4c.Options{}) })
	if compileErr != nil {
		t.Fatalf("compile the test program: %v", compileErr)
	}
	return compiled
}

// fixture is a server on a loopback listener and a connected client.
type fixture struct {
	t      testing.TB
	srv    *Server
	conn   *grpc.ClientConn
	client p4v1.P4RuntimeClient
	prog   *p4c.Result
	// transmitted collects PacketOut results sent to data-plane ports.
	mu          sync.Mutex
	transmitted []engine.Output
	now         time.Time // the server's clock (under mu)
}

// clock is the server's clock.
func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// advance moves the server's clock on.
func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{t: t, prog: testProgram(t)}
	// A clock that stands still makes meters deterministic: buckets never
	// refill. Tests of idle timeouts move it with advance.
	f.now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.srv = NewServer(Options{DeviceID: testDevice, CPUPort: testCPUPort, Ports: testPorts, Now: f.clock, Transmit: func(o engine.Output) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.transmitted = append(f.transmitted, engine.Output{Port: o.Port, Data: append([]byte(nil), o.Data...), Instance: o.Instance})
	}})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	f.srv.Register(g)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	f.conn, err = grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.conn.Close() })
	f.client = p4v1.NewP4RuntimeClient(f.conn)
	return f
}

// controller is one StreamChannel session.
type controller struct {
	stream p4v1.P4Runtime_StreamChannelClient
	cancel context.CancelFunc
	msgs   chan *p4v1.StreamMessageResponse
	ended  chan error
}

// connect opens a stream and sends an arbitration update with election id
// (0 leaves it unset).
func (f *fixture) connect(election uint64) *controller {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := f.client.StreamChannel(ctx)
	if err != nil {
		cancel()
		f.t.Fatal(err)
	}
	c := &controller{stream: stream, cancel: cancel, msgs: make(chan *p4v1.StreamMessageResponse, 100), ended: make(chan error, 1)}
	go func() {
		for {
			m, err := stream.Recv()
			if err != nil {
				c.ended <- err
				return
			}
			c.msgs <- m
		}
	}()
	f.t.Cleanup(cancel)
	u := &p4v1.MasterArbitrationUpdate{DeviceId: testDevice}
	if election != 0 {
		u.ElectionId = &p4v1.Uint128{Low: election}
	}
	if err := stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{Arbitration: u}}); err != nil {
		f.t.Fatal(err)
	}
	return c
}

// next waits for the next stream message.
func (c *controller) next(t testing.TB) *p4v1.StreamMessageResponse {
	t.Helper()
	select {
	case m := <-c.msgs:
		return m
	case err := <-c.ended:
		t.Fatalf("stream ended: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no stream message within 5 s")
	}
	return nil
}

// arbitration waits for the next arbitration update and returns its code.
func (c *controller) arbitration(t testing.TB) codes.Code {
	t.Helper()
	for {
		m := c.next(t)
		if a := m.GetArbitration(); a != nil {
			return codes.Code(a.GetStatus().GetCode())
		}
	}
}

// primary connects a controller with the election id and checks that it
// became the primary.
func (f *fixture) primary(election uint64) *controller {
	f.t.Helper()
	c := f.connect(election)
	if code := c.arbitration(f.t); code != codes.OK {
		f.t.Fatalf("controller with election id %d: arbitration status %v, want OK", election, code)
	}
	return c
}

// setup makes a primary with election id 1 and loads the test program.
func (f *fixture) setup() *controller {
	f.t.Helper()
	c := f.primary(1)
	f.setPipeline(1, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT)
	return c
}

func (f *fixture) setPipeline(election uint64, action p4v1.SetForwardingPipelineConfigRequest_Action) {
	f.t.Helper()
	_, err := f.client.SetForwardingPipelineConfig(context.Background(), &p4v1.SetForwardingPipelineConfigRequest{
		DeviceId: testDevice, ElectionId: &p4v1.Uint128{Low: election}, Action: action,
		Config: &p4v1.ForwardingPipelineConfig{P4Info: f.prog.P4Info, P4DeviceConfig: f.prog.JSON,
			Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: 42}},
	})
	if err != nil {
		f.t.Fatalf("SetForwardingPipelineConfig: %v", err)
	}
}

func (f *fixture) write(election uint64, updates ...*p4v1.Update) error {
	_, err := f.client.Write(context.Background(), &p4v1.WriteRequest{DeviceId: testDevice, ElectionId: &p4v1.Uint128{Low: election}, Updates: updates})
	return err
}

func (f *fixture) mustWrite(updates ...*p4v1.Update) {
	f.t.Helper()
	if err := f.write(1, updates...); err != nil {
		f.t.Fatalf("Write: %v", err)
	}
}

func (f *fixture) read(entities ...*p4v1.Entity) []*p4v1.Entity {
	f.t.Helper()
	out, err := f.tryRead(entities...)
	if err != nil {
		f.t.Fatalf("Read: %v", err)
	}
	return out
}

func (f *fixture) tryRead(entities ...*p4v1.Entity) ([]*p4v1.Entity, error) {
	stream, err := f.client.Read(context.Background(), &p4v1.ReadRequest{DeviceId: testDevice, Entities: entities})
	if err != nil {
		return nil, err
	}
	var out []*p4v1.Entity
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, resp.Entities...)
	}
}

// process sends a frame through the server's data plane and returns what
// leaves.
func (f *fixture) process(port uint32, frame []byte) []engine.Output {
	f.t.Helper()
	var out []engine.Output
	err := f.srv.Process(port, frame, func(o engine.Output) {
		out = append(out, engine.Output{Port: o.Port, Data: append([]byte(nil), o.Data...), Instance: o.Instance})
	})
	if err != nil {
		f.t.Fatalf("Process: %v", err)
	}
	return out
}

// ids of the test program, by name.
func (f *fixture) tableID(name string) uint32 { return preambleID(f.t, f.prog.P4Info.Tables, name) }

func (f *fixture) actionID(name string) uint32 { return preambleID(f.t, f.prog.P4Info.Actions, name) }

func preambleID[T interface{ GetPreamble() *p4configv1.Preamble }](t testing.TB, items []T, name string) uint32 {
	t.Helper()
	for _, x := range items {
		if x.GetPreamble().GetName() == name {
			return x.GetPreamble().GetId()
		}
	}
	t.Fatalf("no %s in the P4Info", name)
	return 0
}

func update(typ p4v1.Update_Type, e *p4v1.Entity) *p4v1.Update {
	return &p4v1.Update{Type: typ, Entity: e}
}

func tableEntity(te *p4v1.TableEntry) *p4v1.Entity {
	return &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}
}

func action(id uint32, params ...[]byte) *p4v1.TableAction {
	a := &p4v1.Action{ActionId: id}
	for i, p := range params {
		a.Params = append(a.Params, &p4v1.Action_Param{ParamId: uint32(i + 1), Value: p})
	}
	return &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
}

func lpm(field uint32, v []byte, plen int32) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: field, FieldMatchType: &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: v, PrefixLen: plen}}}
}

func ternary(field uint32, v, mask []byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: field, FieldMatchType: &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: v, Mask: mask}}}
}

// route is an ipv4_lpm entry forwarding prefix/plen to port.
func (f *fixture) route(prefix []byte, plen int32, port byte) *p4v1.TableEntry {
	return &p4v1.TableEntry{TableId: f.tableID("TestIngress.ipv4_lpm"), Match: []*p4v1.FieldMatch{lpm(1, prefix, plen)},
		Action: action(f.actionID("TestIngress.forward"), []byte{port})}
}

// ipv4Frame is an Ethernet+IPv4 frame to dst with TTL 64.
func ipv4Frame(dst [4]byte) []byte {
	frame := make([]byte, 14+20)
	copy(frame[0:6], []byte{0, 0, 0, 0, 0, 2})
	frame[12], frame[13] = 0x08, 0x00
	frame[14], frame[22] = 0x45, 64
	copy(frame[30:34], dst[:])
	return frame
}

// writeDetails returns the per-update errors of a failed Write.
func writeDetails(t testing.TB, err error) []*p4v1.Error {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unknown {
		t.Fatalf("Write error %v: want code UNKNOWN with per-update details", err)
	}
	var out []*p4v1.Error
	for _, d := range st.Details() {
		e, ok := d.(*p4v1.Error)
		if !ok {
			t.Fatalf("detail %T is not a p4.v1.Error", d)
		}
		out = append(out, e)
	}
	return out
}

// oneUpdateError checks a one-update Write failed with code and a message
// containing every part of want.
func oneUpdateError(t testing.TB, err error, code codes.Code, want ...string) {
	t.Helper()
	details := writeDetails(t, err)
	if len(details) != 1 {
		t.Fatalf("%d details, want 1: %v", len(details), err)
	}
	d := details[0]
	if codes.Code(d.CanonicalCode) != code {
		t.Fatalf("update error code %v (%s), want %v", codes.Code(d.CanonicalCode), d.Message, code)
	}
	for _, w := range want {
		if !strings.Contains(d.Message, w) {
			t.Fatalf("update error %q does not mention %q", d.Message, w)
		}
	}
}

func ip(a, b, c, d byte) []byte { return []byte{a, b, c, d} }

func describeOutputs(outs []engine.Output) string {
	s := ""
	for _, o := range outs {
		s += fmt.Sprintf("[port %d, %d bytes] ", o.Port, len(o.Data))
	}
	return s
}
