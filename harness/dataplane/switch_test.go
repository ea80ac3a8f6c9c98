package dataplane_test

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/dataplane/nstest"
	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/p4rt/client"
)

const testDevice = 1

// startSwitch creates a switch in n with cfg (listening on a free port of the
// namespace's loopback) and serves it until the test ends, when Serve must
// return nil.
func startSwitch(t *testing.T, n *nstest.Net, cfg dataplane.SwitchConfig) *dataplane.Switch {
	t.Helper()
	cfg.DeviceID = testDevice
	cfg.GRPCAddr = "127.0.0.1:0"
	var sw *dataplane.Switch
	err := n.Do(func() (err error) {
		sw, err = dataplane.NewSwitch(cfg)
		return err
	})
	if err != nil {
		t.Fatalf("NewSwitch: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sw.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return within 10 s of its context being cancelled")
		}
	})
	return sw
}

// controller connects to sw as the primary controller and installs the
// compiled P4 program at path.
func controller(t *testing.T, n *nstest.Net, sw *dataplane.Switch, path string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, sw.Addr().String(), testDevice, 1,
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return n.DialContext(ctx, addr) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	res, err := p4c.Compile(path, p4c.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetPipeline(ctx, res.P4Info, res.JSON); err != nil {
		t.Fatal(err)
	}
	return c
}

func twoPorts(n *nstest.Net) []dataplane.PortSpec {
	n.Veth("sw0", "h0")
	n.Veth("sw1", "h1")
	return []dataplane.PortSpec{{Port: 0, Interface: "sw0"}, {Port: 1, Interface: "sw1"}}
}

func TestSwitchDropsUntilAControllerSetsAPipelineAndThenForwardsByItsEntries(t *testing.T) {
	n := nstest.New(t)
	var trace lockedBuffer
	sw := startSwitch(t, n, dataplane.SwitchConfig{Ports: twoPorts(n), Trace: &trace})
	h0, h1 := n.Socket("h0"), n.Socket("h1")
	in := mustHex(t, "000000000001 0000000000aa 0800 4500001c 00010000 401165cb 0a000001 0a000105 0001020304050607")
	want := mustHex(t, "000000000102 000000000001 0800 4500001c 00010000 3f1166cb 0a000001 0a000105 0001020304050607")

	send(t, h0, in)
	eventually(t, sw, "the frame received", func(st dataplane.Stats) bool { return st.Ports[0].RxFrames == 1 })
	if got := nstest.Receive(t, h1, 1, 200*time.Millisecond); len(got) != 0 {
		t.Fatalf("without a pipeline the switch forwarded %x", got[0])
	}

	c := controller(t, n, sw, "../../p4/examples/basic_ipv4.p4")
	err := c.InsertEntry(context.Background(), client.TableEntry{
		Table:  "MyIngress.ipv4_lpm",
		Match:  []client.Match{{Field: "hdr.ipv4.dstAddr", Value: []byte{10, 0, 1, 0}, PrefixLen: 24}},
		Action: "MyIngress.ipv4_forward", Args: [][]byte{{0x01, 0x02}, {1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	send(t, h0, in)
	if got := nstest.Receive(t, h1, 1, 5*time.Second); len(got) != 1 || !bytes.Equal(got[0], want) {
		t.Fatalf("h1 received %x, want %x", got, want)
	}
	if !strings.Contains(trace.String(), "Table 'MyIngress.ipv4_lpm': hit") {
		t.Errorf("the trace does not show the table hit:\n%s", trace.String())
	}
}

// lockedBuffer is a bytes.Buffer for writers on several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestSwitchRunsItsStartProgramUntilAControllerCommitsAnother(t *testing.T) {
	n := nstest.New(t)
	res, err := p4c.Compile("testdata/port0_to_port1.p4", p4c.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sw := startSwitch(t, n, dataplane.SwitchConfig{Ports: twoPorts(n), Program: res.JSON})
	h0, h1 := n.Socket("h0"), n.Socket("h1")
	frame := testFrame(1, 64)
	send(t, h0, frame)
	if got := nstest.Receive(t, h1, 1, 5*time.Second); len(got) != 1 || !bytes.Equal(got[0], frame) {
		t.Fatalf("the start program should forward port 0 to 1: h1 received %x", got)
	}
	// basic_ipv4 drops what is not IPv4.
	controller(t, n, sw, "../../p4/examples/basic_ipv4.p4")
	send(t, h0, frame)
	eventually(t, sw, "the second frame received", func(st dataplane.Stats) bool { return st.Ports[0].RxFrames == 2 })
	if got := nstest.Receive(t, h1, 1, 200*time.Millisecond); len(got) != 0 {
		t.Fatalf("after the controller's pipeline the start program still forwarded %x", got[0])
	}
}

func TestSwitchSendsPacketOutToItsPortAndFramesToTheCPUPortAsPacketIn(t *testing.T) {
	n := nstest.New(t)
	sw := startSwitch(t, n, dataplane.SwitchConfig{Ports: twoPorts(n), CPUPort: 64})
	h0, h1 := n.Socket("h0"), n.Socket("h1")
	c := controller(t, n, sw, "testdata/cpu_port.p4")

	out := testFrame(1, 64)
	if err := c.SendPacket(out, client.Metadata{Name: "egress_port", Value: []byte{1}}, client.Metadata{Name: "_pad", Value: []byte{0}}); err != nil {
		t.Fatal(err)
	}
	if got := nstest.Receive(t, h1, 1, 5*time.Second); len(got) != 1 || !bytes.Equal(got[0], out) {
		t.Fatalf("PacketOut to port 1: h1 received %x, want %x", got, out)
	}

	in := testFrame(2, 80)
	send(t, h0, in)
	select {
	case p := <-c.PacketIns():
		if !bytes.Equal(p.Payload, in) || !bytes.Equal(p.Metadata["ingress_port"], []byte{0, 0}) {
			t.Errorf("PacketIn payload %x metadata %x; want %x from port 0", p.Payload, p.Metadata, in)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no PacketIn for a frame received on port 0")
	}
	if got := nstest.Receive(t, h1, 1, 200*time.Millisecond); len(got) != 0 {
		t.Errorf("a frame for the CPU port left on port 1: %x", got[0])
	}
}
