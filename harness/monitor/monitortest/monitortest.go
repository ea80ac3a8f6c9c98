// Package monitortest builds small fabric runs and sends known frames
// through them, for the tests of the monitor and of what uses it (results,
// grid monitor). Every run is named "gm" and a random suffix and removed
// when the test ends, even when it fails; without the privileges to build
// namespaces the test is skipped.
package monitortest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/topo"
)

// Pair is a switch with two hosts: h1 on s1:p1, h2 on s1:p2.
const Pair = `name: pair
nodes:
  - {name: s1, kind: switch}
  - {name: h1, kind: host}
  - {name: h2, kind: host}
links:
  - {endpoints: ["s1:p1", "h1:eth0"]}
  - {endpoints: ["s1:p2", "h2:eth0"]}
`

// Line is a worker, two switches and a PS in a line.
const Line = `name: line
nodes:
  - {name: s1, kind: switch}
  - {name: s2, kind: switch}
  - {name: w1, kind: host, role: worker}
  - {name: ps, kind: host, role: ps}
links:
  - {endpoints: ["s1:p1", "w1:eth0"]}
  - {endpoints: ["s1:p2", "s2:p1"]}
  - {endpoints: ["s2:p2", "ps:eth0"]}
`

// NeedRoot skips the test unless this process can build namespaces.
func NeedRoot(tb testing.TB) {
	tb.Helper()
	if err := fabric.CanBuild(); err != nil {
		tb.Skipf("cannot build network namespaces here (CI runs the tests as root): %v", err)
	}
}

// Up builds the topology given as YAML as a fresh run.
func Up(tb testing.TB, yaml string) *fabric.State {
	tb.Helper()
	tp, err := topo.Parse([]byte(yaml), tb.Name()+".yaml")
	if err != nil {
		tb.Fatal(err)
	}
	return UpTopology(tb, tp)
}

// UpTopology builds tp as a fresh run.
func UpTopology(tb testing.TB, tp *topo.Topology) *fabric.State {
	tb.Helper()
	NeedRoot(tb)
	b := make([]byte, 3)
	rand.Read(b)
	run := "gm" + hex.EncodeToString(b)
	tb.Cleanup(func() {
		if _, err := fabric.Clean(run); err != nil {
			tb.Errorf("clean %s: %v", run, err)
		}
	})
	st, err := fabric.Up(context.Background(), tp, fabric.Options{Name: run})
	if err != nil {
		tb.Fatalf("up %s: %v", run, err)
	}
	return st
}

// Sender sends raw Ethernet frames out of a host's eth0 through an
// AF_PACKET socket, addressed to its gateway with a local experimental
// EtherType no network stack answers. With no switch process running, they
// stop at the switch port.
type Sender struct {
	fd    int
	frame []byte
}

// NewSender opens the socket on host's eth0; frames are size bytes long.
// The test closes it.
func NewSender(tb testing.TB, st *fabric.State, host string, size int) *Sender {
	tb.Helper()
	n := st.Node(host)
	fd, err := n.OpenPort(0)
	if err != nil {
		tb.Fatal(err)
	}
	ifc := n.Port(0)
	dst, err := net.ParseMAC(ifc.GatewayMAC)
	if err != nil {
		unix.Close(fd)
		tb.Fatalf("%s: gateway MAC: %v", host, err)
	}
	src, err := net.ParseMAC(ifc.MAC)
	if err != nil {
		unix.Close(fd)
		tb.Fatalf("%s: MAC: %v", host, err)
	}
	frame := make([]byte, size)
	copy(frame, dst)
	copy(frame[6:], src)
	frame[12], frame[13] = 0x88, 0xb5
	return &Sender{fd: fd, frame: frame}
}

// Send sends one frame.
func (s *Sender) Send() error {
	_, err := unix.Write(s.fd, s.frame)
	return err
}

// SendN sends count frames and fails the test if one cannot go.
func (s *Sender) SendN(tb testing.TB, count int) {
	tb.Helper()
	for i := range count {
		if err := s.Send(); err != nil {
			tb.Fatalf("send frame %d: %v", i, err)
		}
	}
}

// Close closes the socket.
func (s *Sender) Close() { unix.Close(s.fd) }
