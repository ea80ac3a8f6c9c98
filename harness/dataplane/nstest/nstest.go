// Package nstest gives tests of switches a private network namespace with
// veth pairs, packet sockets and processes inside it, removed when the test
// ends whatever happens. The tests need root and skip without it.
package nstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/dataplane"
)

// Prefix starts the name of every namespace this package creates, so a
// leftover is recognisable.
const Prefix = "gdptest-"

// NetnsDir is where named network namespaces are mounted.
const NetnsDir = "/run/netns"

// Net is a named network namespace of one test.
type Net struct {
	t       testing.TB
	name    string
	ns      netns.NsHandle
	nl      *netlink.Handle
	removed bool
}

// NeedRoot skips the test unless it runs as root.
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces and packet sockets (CI runs the tests as root)")
	}
}

// New creates a namespace named Prefix, the test process's PID, a dash and
// random hex, with IPv6 off (so the interfaces send nothing by themselves)
// and the loopback interface up. It is removed when the test ends; one left
// behind by a test process that was killed is removed by the next New.
func New(t testing.TB) *Net {
	t.Helper()
	NeedRoot(t)
	removeStale()
	b := make([]byte, 4)
	rand.Read(b)
	n := &Net{t: t, name: fmt.Sprintf("%s%d-%s", Prefix, os.Getpid(), hex.EncodeToString(b)), ns: netns.None()}
	t.Cleanup(n.Remove)
	err := onScratchThread(func() error {
		ns, err := netns.NewNamed(n.name)
		if err != nil {
			os.Remove(filepath.Join(NetnsDir, n.name))
			return err
		}
		n.ns = ns
		// Interfaces created later inherit "default": no IPv6 router
		// solicitations or MLD reports that no test sent.
		return os.WriteFile("/proc/sys/net/ipv6/conf/default/disable_ipv6", []byte("1"), 0)
	})
	if err != nil {
		t.Fatalf("create namespace %s: %v", n.name, err)
	}
	if n.nl, err = netlink.NewHandleAt(n.ns); err != nil {
		t.Fatalf("netlink handle in %s: %v", n.name, err)
	}
	n.up("lo")
	return n
}

// Name is the namespace's name under NetnsDir.
func (n *Net) Name() string { return n.name }

// Netlink is a netlink handle working in the namespace.
func (n *Net) Netlink() *netlink.Handle { return n.nl }

// Remove removes the namespace, and with it its interfaces, once all sockets
// in it are closed; New arranges it for the end of the test.
func (n *Net) Remove() {
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

// removeStale removes the namespaces of test processes that no longer run.
func removeStale() {
	for _, name := range Leftovers() {
		pid, _, ok := strings.Cut(strings.TrimPrefix(name, Prefix), "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n == os.Getpid() {
			continue
		}
		if err := syscall.Kill(n, 0); errors.Is(err, syscall.ESRCH) {
			netns.DeleteNamed(name)
		}
	}
}

// Leftovers lists the namespaces of this package under NetnsDir.
func Leftovers() []string {
	entries, _ := os.ReadDir(NetnsDir)
	var left []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), Prefix) {
			left = append(left, e.Name())
		}
	}
	return left
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

// Do runs f on a thread inside the namespace. Sockets f opens, and processes
// it starts, stay in the namespace.
func (n *Net) Do(f func() error) error {
	return onScratchThread(func() error {
		if err := netns.Set(n.ns); err != nil {
			return err
		}
		return f()
	})
}

func (n *Net) up(name string) {
	n.t.Helper()
	l, err := n.nl.LinkByName(name)
	if err == nil {
		err = n.nl.LinkSetUp(l)
	}
	if err != nil {
		n.t.Fatalf("bring up %s: %v", name, err)
	}
}

// Veth creates the veth pair a <-> b, both up and carrying frames.
func (n *Net) Veth(a, b string) {
	n.t.Helper()
	v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a}, PeerName: b}
	if err := n.nl.LinkAdd(v); err != nil {
		n.t.Fatalf("add veth %s-%s: %v", a, b, err)
	}
	// A veth has a carrier only once both ends are up.
	n.up(a)
	n.up(b)
	n.waitCarrying(a)
	n.waitCarrying(b)
}

// LinkUp brings the interface up and waits until it carries frames. For a
// veth it also waits for the peer: the peer's carrier comes back with this
// end, and until the kernel's link-watch work has caught up with the peer,
// frames sent from the peer are dropped without an error.
func (n *Net) LinkUp(name string) {
	n.t.Helper()
	n.up(name)
	n.waitCarrying(name)
	if peer := n.vethPeer(name); peer != "" {
		n.waitCarrying(peer)
	}
}

// vethPeer names the other end of the veth name if it is in this
// namespace; otherwise (or when name is no veth) it is empty.
func (n *Net) vethPeer(name string) string {
	n.t.Helper()
	l, err := n.nl.LinkByName(name)
	if err != nil {
		n.t.Fatalf("%s: %v", name, err)
	}
	if _, ok := l.(*netlink.Veth); !ok {
		return ""
	}
	// A veth's link index is its peer's, counted in the peer's namespace,
	// which the link names (NetNsID) when it is another one.
	if l.Attrs().NetNsID >= 0 {
		return ""
	}
	peer, err := n.nl.LinkByIndex(l.Attrs().ParentIndex)
	if err != nil {
		return ""
	}
	if _, ok := peer.(*netlink.Veth); !ok || peer.Attrs().ParentIndex != l.Attrs().Index {
		return ""
	}
	return peer.Attrs().Name
}

// LinkDown takes the interface down.
func (n *Net) LinkDown(name string) {
	n.t.Helper()
	l, err := n.nl.LinkByName(name)
	if err == nil {
		err = n.nl.LinkSetDown(l)
	}
	if err != nil {
		n.t.Fatalf("take down %s: %v", name, err)
	}
}

// waitCarrying waits until the kernel has attached a real qdisc to the
// interface. That happens in its link-watch work some time after the
// interface comes up, and until then whatever is sent through it is
// dropped without an error.
func (n *Net) waitCarrying(name string) {
	n.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := n.nl.LinkByName(name)
		if err != nil {
			n.t.Fatalf("%s: %v", name, err)
		}
		qdiscs, err := n.nl.QdiscList(l)
		if err != nil {
			n.t.Fatalf("%s: list qdiscs: %v", name, err)
		}
		if l.Attrs().OperState == netlink.OperUp && len(qdiscs) > 0 && qdiscs[0].Type() != "noop" {
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("%s does not carry frames 30 s after it came up (oper %v, qdiscs %v)", name, l.Attrs().OperState, qdiscs)
		}
		time.Sleep(time.Millisecond)
	}
}

// Socket opens a packet socket on iface in the namespace, closed when the
// test ends.
func (n *Net) Socket(iface string) *dataplane.Socket {
	n.t.Helper()
	var s *dataplane.Socket
	err := n.Do(func() (err error) {
		s, err = dataplane.OpenSocket(iface)
		return err
	})
	if err != nil {
		n.t.Fatalf("open socket: %v", err)
	}
	n.t.Cleanup(func() { s.Close() })
	return s
}

// DialContext connects to addr from inside the namespace (for
// grpc.WithContextDialer): a switch in the namespace listens on its own
// loopback.
func (n *Net) DialContext(ctx context.Context, addr string) (net.Conn, error) {
	var c net.Conn
	err := n.Do(func() (err error) {
		c, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		return err
	})
	return c, err
}

// Start starts cmd inside the namespace.
func (n *Net) Start(cmd *exec.Cmd) error { return n.Do(cmd.Start) }

// Receive returns the frames arriving on s until count have arrived or
// timeout passes, whichever is first. That the interface went down in
// between is no error.
func Receive(t testing.TB, s *dataplane.Socket, count int, timeout time.Duration) [][]byte {
	t.Helper()
	var frames [][]byte
	s.SetReadDeadline(time.Now().Add(timeout))
	defer s.SetReadDeadline(time.Time{})
	for len(frames) < count {
		f, err := s.Recv()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if errors.Is(err, unix.ENETDOWN) {
			// The interface went down since the last read (reported
			// once); the socket receives again when it is up.
			continue
		}
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		frames = append(frames, append([]byte(nil), f...))
	}
	return frames
}
