package p4test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/dataplane"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: network namespaces, veth pairs and packet sockets (CI runs as root)")
	}
}

func newTestTestbed(t *testing.T, ports int) *testbed {
	t.Helper()
	needRoot(t)
	tb, err := newTestbed(ports)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tb.close(); err != nil {
			t.Error(err)
		}
	})
	return tb
}

// switchSide opens a packet socket on sw<i>, where the switch would sit.
func switchSide(t *testing.T, tb *testbed, i int) *dataplane.Socket {
	t.Helper()
	var s *dataplane.Socket
	if err := tb.do(func() (err error) { s, err = dataplane.OpenSocket(switchIface(i)); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func receiveWithin(t *testing.T, s *dataplane.Socket, d time.Duration) []byte {
	t.Helper()
	s.SetReadDeadline(time.Now().Add(d))
	frame, err := s.Recv()
	if err != nil {
		t.Fatalf("nothing arrived within %v: %v", d, err)
	}
	return append([]byte(nil), frame...)
}

func TestTestbedCarriesFramesBothWaysBetweenHostAndSwitchEnds(t *testing.T) {
	tb := newTestTestbed(t, 3)
	sw2 := switchSide(t, tb, 2)
	frame := append(bytes.Repeat([]byte{0xff}, 6), 0, 1, 2, 3, 4, 5, 0x88, 0xb5, 'h', 'i')
	if err := tb.ports[2].Send(frame); err != nil {
		t.Fatal(err)
	}
	if got := receiveWithin(t, sw2, 10*time.Second); !bytes.Equal(got, frame) {
		t.Errorf("the switch side got %x, want %x", got, frame)
	}
	// A VLAN-tagged frame from the switch comes out whole on h2, although
	// the kernel moves the tag into the packet's metadata.
	tagged := append(bytes.Repeat([]byte{0xff}, 6), 0, 1, 2, 3, 4, 5, 0x81, 0x00, 0x20, 0x07, 0x88, 0xb5, 'v', 'l', 'a', 'n')
	if err := sw2.Send(tagged); err != nil {
		t.Fatal(err)
	}
	if got := receiveWithin(t, tb.ports[2], 10*time.Second); !bytes.Equal(got, tagged) {
		t.Errorf("h2 got %x, want the tagged frame %x", got, tagged)
	}
}

func TestTestbedPortsHaveIPv6OffAndRoomForJumboFrames(t *testing.T) {
	tb := newTestTestbed(t, 2)
	err := tb.do(func() error {
		for _, ifc := range []string{"sw0", "h0", "sw1", "h1"} {
			b, err := os.ReadFile("/proc/sys/net/ipv6/conf/" + ifc + "/disable_ipv6")
			if err != nil {
				return err
			}
			if strings.TrimSpace(string(b)) != "1" {
				t.Errorf("%s: disable_ipv6 = %s, want 1 (no router solicitations or MLD reports on the ports)", ifc, b)
			}
			i, err := net.InterfaceByName(ifc)
			if err != nil {
				return err
			}
			if i.MTU != portMTU || i.Flags&net.FlagUp == 0 {
				t.Errorf("%s: MTU %d, flags %v; want MTU %d, up", ifc, i.MTU, i.Flags, portMTU)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sw0 := switchSide(t, tb, 0)
	jumbo := make([]byte, 9000)
	jumbo[0] = 0xff
	if err := tb.ports[0].Send(jumbo); err != nil {
		t.Fatalf("a 9000-byte frame: %v", err)
	}
	if got := receiveWithin(t, sw0, 10*time.Second); len(got) != 9000 {
		t.Errorf("the switch side got %d bytes of a 9000-byte frame", len(got))
	}
}

func TestTestbedCloseRemovesTheNamespaceAndItsProcess(t *testing.T) {
	needRoot(t)
	tb, err := newTestbed(1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(netnsDir, tb.name)
	if !strings.HasPrefix(tb.name, NamespacePrefix+strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("namespace %s does not name its owner", tb.name)
	}
	p, err := tb.startProcess([]string{"sleep", "60"}, nil)
	if err != nil {
		tb.close()
		t.Fatal(err)
	}
	// The process is inside the testbed's namespace, not ours.
	inside, err1 := os.Readlink("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/ns/net")
	ours, err2 := os.Readlink("/proc/self/ns/net")
	if err := errors.Join(err1, err2); err != nil || inside == ours {
		t.Errorf("process namespace %s, ours %s (%v)", inside, ours, err)
	}
	if err := p.stop(time.Second); err != nil {
		t.Error(err)
	}
	if p.alive() {
		t.Error("the process survived stop")
	}
	if err := tb.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there after close (%v)", path, err)
	}
}

func TestStaleNamespaceOfADeadOwnerIsRemovedByTheNextTestbed(t *testing.T) {
	needRoot(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	// A namespace as a killed run leaves it: mounted, owner gone.
	stale := &testbed{name: NamespacePrefix + strconv.Itoa(dead.Process.Pid) + "-1", ns: -1}
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := stale.create(); err != nil {
		t.Fatal(err)
	}
	stale.ns.Close()
	// One whose owner lives (this process) stays.
	live := newTestTestbed(t, 1)
	if _, err := os.Stat(filepath.Join(netnsDir, stale.name)); !errors.Is(err, os.ErrNotExist) {
		removeNamespace(stale.name)
		t.Errorf("the stale namespace %s survived the next testbed (%v)", stale.name, err)
	}
	removeStaleTestbeds()
	if _, err := os.Stat(filepath.Join(netnsDir, live.name)); err != nil {
		t.Errorf("a live testbed's namespace was removed: %v", err)
	}
}

func TestTestbedOwnerParsesOnlyOurNames(t *testing.T) {
	for name, want := range map[string]int{"gridp4t-123-4": 123, "gridp4t-1-1": 1, "gridp4t-x-1": 0, "gridp4t-12": 0, "grid-12-1": 0, "gridp4t-0-1": 0, "gridp4t-5-z": 0} {
		pid, ok := testbedOwner(name)
		if ok != (want != 0) || pid != want {
			t.Errorf("testbedOwner(%q) = %d, %v; want %d", name, pid, ok, want)
		}
	}
}

func TestWaitListeningSucceedsOnceTheNamespaceHasAListener(t *testing.T) {
	tb := newTestTestbed(t, 1)
	p, err := tb.startProcess([]string{"sleep", "60"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop(time.Second)
	// Nothing listens yet: the wait times out, naming the address.
	err = p.waitListening(context.Background(), tb, "127.0.0.1:9559", 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not listen on 127.0.0.1:9559") {
		t.Errorf("wait without a listener: %v", err)
	}
	var ln net.Listener
	if err := tb.do(func() (err error) { ln, err = net.Listen("tcp", "127.0.0.1:9559"); return err }); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := p.waitListening(context.Background(), tb, "127.0.0.1:9559", 5*time.Second); err != nil {
		t.Error(err)
	}
}

func TestWaitListeningQuotesTheOutputOfAProcessThatExits(t *testing.T) {
	tb := newTestTestbed(t, 1)
	p, err := tb.startProcess([]string{"sh", "-c", "echo 'cannot open interface sw0' >&2; exit 3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = p.waitListening(context.Background(), tb, "127.0.0.1:9559", 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "sh exited before it listened on 127.0.0.1:9559 (exit status 3)") ||
		!strings.Contains(err.Error(), "cannot open interface sw0") {
		t.Errorf("wait on a failing process: %v", err)
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	b := &tailBuffer{max: 8}
	b.Write([]byte("0123456789"))
	b.Write([]byte("ab"))
	if got := b.quote(); got != "; its output:\n    456789ab" {
		t.Errorf("quote = %q", got)
	}
	if (&tailBuffer{max: 8}).quote() != "" {
		t.Error("an empty buffer quotes something")
	}
}

func TestSwitchProcessSeesItsPortsInSys(t *testing.T) {
	tb := newTestTestbed(t, 2)
	p, err := tb.startProcess([]string{"ls", "/sys/class/net"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-p.exited
	if p.err != nil {
		t.Fatal(p.err)
	}
	got := strings.Fields(p.output.quote())
	want := []string{"h0", "h1", "lo", "sw0", "sw1"}
	if len(got) < len(want) || strings.Join(got[len(got)-len(want):], " ") != strings.Join(want, " ") {
		t.Errorf("/sys/class/net of the switch: %v, want %v", got, want)
	}
	// The host's /sys is untouched.
	if _, err := os.Stat("/sys/class/net/sw0"); err == nil {
		t.Error("the host's /sys shows the testbed's sw0")
	}
}
