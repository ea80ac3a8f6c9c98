package dataplane_test

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/grid-ina/grid/harness/dataplane"
)

// nsPrefix starts the name of every namespace these tests create, so a
// leftover is recognisable (and nothingLeft can look for it).
const nsPrefix = "gdptest-"

// testNet is a private named network namespace for one test, with veth
// pairs in it. It is removed when the test ends, whatever happens.
type testNet struct {
	t       testing.TB
	name    string
	ns      netns.NsHandle
	nl      *netlink.Handle
	removed bool
}

func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces and packet sockets (CI runs the tests as root)")
	}
}

func newTestNet(t testing.TB) *testNet {
	t.Helper()
	needRoot(t)
	b := make([]byte, 4)
	rand.Read(b)
	n := &testNet{t: t, name: nsPrefix + hex.EncodeToString(b), ns: netns.None()}
	t.Cleanup(n.remove)
	err := onScratchThread(func() error {
		ns, err := netns.NewNamed(n.name)
		if err != nil {
			os.Remove(filepath.Join("/run/netns", n.name))
			return err
		}
		n.ns = ns
		// Interfaces would otherwise send IPv6 router solicitations and
		// MLD reports by themselves, frames no test sent.
		return os.WriteFile("/proc/sys/net/ipv6/conf/default/disable_ipv6", []byte("1"), 0)
	})
	if err != nil {
		t.Fatalf("create namespace %s: %v", n.name, err)
	}
	if n.nl, err = netlink.NewHandleAt(n.ns); err != nil {
		t.Fatalf("netlink handle in %s: %v", n.name, err)
	}
	return n
}

// remove removes the namespace (and with it the veths) once.
func (n *testNet) remove() {
	if n.removed {
		return
	}
	n.removed = true
	if n.nl != nil {
		n.nl.Close()
	}
	n.ns.Close()
	if err := netns.DeleteNamed(n.name); err != nil && !errors.Is(err, os.ErrNotExist) {
		n.t.Errorf("remove namespace %s: %v", n.name, err)
	}
}

// onScratchThread runs f on a new goroutine locked to its OS thread and never
// unlocked, so the thread ends with the goroutine instead of going back to
// the scheduler in whatever namespace f left it.
func onScratchThread(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		done <- f()
	}()
	return <-done
}

// do runs f on a thread inside the namespace.
func (n *testNet) do(f func() error) error {
	return onScratchThread(func() error {
		if err := netns.Set(n.ns); err != nil {
			return err
		}
		return f()
	})
}

// veth creates the pair a <-> b, both up.
func (n *testNet) veth(a, b string) {
	n.t.Helper()
	v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a}, PeerName: b}
	if err := n.nl.LinkAdd(v); err != nil {
		n.t.Fatalf("add veth %s-%s: %v", a, b, err)
	}
	for _, name := range []string{a, b} {
		l, err := n.nl.LinkByName(name)
		if err == nil {
			err = n.nl.LinkSetUp(l)
		}
		if err != nil {
			n.t.Fatalf("bring up %s: %v", name, err)
		}
	}
}

// open opens a Dataplane on specs inside the namespace; it is closed when
// the test ends.
func (n *testNet) open(specs []dataplane.PortSpec, opts dataplane.Options) *dataplane.Dataplane {
	n.t.Helper()
	var dp *dataplane.Dataplane
	err := n.do(func() (err error) {
		dp, err = dataplane.Open(specs, opts)
		return err
	})
	if err != nil {
		n.t.Fatalf("open dataplane: %v", err)
	}
	n.t.Cleanup(func() { dp.Close() })
	return dp
}

// socket opens a packet socket on iface inside the namespace, closed when
// the test ends.
func (n *testNet) socket(iface string) *dataplane.Socket {
	n.t.Helper()
	var s *dataplane.Socket
	err := n.do(func() (err error) {
		s, err = dataplane.OpenSocket(iface)
		return err
	})
	if err != nil {
		n.t.Fatalf("open socket: %v", err)
	}
	n.t.Cleanup(func() { s.Close() })
	return s
}

// leftoverNamespaces lists the namespaces of these tests under /run/netns.
func leftoverNamespaces() []string {
	entries, _ := os.ReadDir("/run/netns")
	var left []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), nsPrefix) {
			left = append(left, e.Name())
		}
	}
	return left
}

// receive returns the frames arriving on s until n have arrived or timeout
// passes, whichever is first.
func receive(t testing.TB, s *dataplane.Socket, n int, timeout time.Duration) [][]byte {
	t.Helper()
	var frames [][]byte
	s.SetReadDeadline(time.Now().Add(timeout))
	defer s.SetReadDeadline(time.Time{})
	for len(frames) < n {
		f, err := s.Recv()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		frames = append(frames, append([]byte(nil), f...))
	}
	return frames
}

// openFDs counts the process's open file descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}
