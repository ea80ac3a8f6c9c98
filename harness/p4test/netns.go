package p4test

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/dataplane"
)

// netnsDir is where named network namespaces are bind-mounted, as by `ip
// netns add`, so `ip netns exec NAME ...` reaches a running testbed.
const netnsDir = "/run/netns"

// NamespacePrefix starts the name of every namespace a remote target
// creates: NamespacePrefix + "<pid>-<n>", pid being the process that owns it.
const NamespacePrefix = "gridp4t-"

// portMTU is the MTU of the veth pairs: roomy enough for any test frame
// (jumbo frames included); AF_PACKET refuses to send beyond it.
const portMTU = 9500

// maxPorts bounds a testbed's ports (each a veth pair).
const maxPorts = 512

var testbedSeq atomic.Uint64

// testbed is a private network namespace holding the switch's ports: veth
// pairs sw<i> (the switch's port i) and h<i> (where the test sends and
// receives port i's frames), IPv6 off so the kernel sends nothing by itself.
type testbed struct {
	name  string
	ns    netns.NsHandle
	ports []*dataplane.Socket // on h<i>, by port
}

// switchIface and hostIface name the two ends of port i's veth pair.
func switchIface(port int) string { return "sw" + strconv.Itoa(port) }
func hostIface(port int) string   { return "h" + strconv.Itoa(port) }

// newTestbed creates the namespace with ports veth pairs and opens a packet
// socket on each h<i>. Namespaces left behind by dead processes are removed
// first. On error nothing is left behind.
func newTestbed(ports int) (tb *testbed, err error) {
	if ports <= 0 || ports > maxPorts {
		return nil, fmt.Errorf("a testbed has 1 to %d ports, not %d", maxPorts, ports)
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("a switch on veth ports needs root (network namespaces and raw sockets)")
	}
	removeStaleTestbeds()
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", netnsDir, err)
	}
	tb = &testbed{name: fmt.Sprintf("%s%d-%d", NamespacePrefix, os.Getpid(), testbedSeq.Add(1)), ns: -1}
	defer func() {
		if p := recover(); p != nil {
			tb.close()
			panic(p)
		}
		if err != nil {
			err = errors.Join(err, tb.close())
		}
	}()
	if err := tb.create(); err != nil {
		return nil, err
	}
	if err := tb.addPorts(ports); err != nil {
		return nil, err
	}
	if err := tb.openPorts(ports); err != nil {
		return nil, err
	}
	return tb, nil
}

// create makes the namespace, mounts it under netnsDir and switches IPv6 off
// in it before any interface exists, so no port ever sends a router
// solicitation or an MLD report.
func (tb *testbed) create() error {
	path := filepath.Join(netnsDir, tb.name)
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EEXIST) {
		// Our PID with a number this process never handed out: left by an
		// earlier process that had the same PID (containers reuse them).
		if err := removeNamespace(tb.name); err != nil {
			return err
		}
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	unix.Close(fd)
	enter := func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("create network namespace %s: %w", tb.name, err)
		}
		return nil
	}
	return onThread(enter, func() error {
		self := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
		if err := unix.Mount(self, path, "none", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("mount network namespace %s: %w", tb.name, err)
		}
		ns, err := netns.GetFromPath(self)
		if err != nil {
			return fmt.Errorf("open network namespace %s: %w", tb.name, err)
		}
		tb.ns = ns
		// "all" covers lo; "default" is what the veths inherit.
		for _, key := range []string{"all", "default"} {
			p := "/proc/sys/net/ipv6/conf/" + key + "/disable_ipv6"
			if err := os.WriteFile(p, []byte("1"), 0); err != nil {
				return fmt.Errorf("switch IPv6 off in %s (%s): %w", tb.name, p, err)
			}
		}
		return nil
	})
}

// onThread runs f on a fresh goroutine locked to its OS thread, after enter
// moved that thread into a network namespace. The thread then returns to
// the original namespace, or, if it cannot, ends with its goroutine, so no
// other code ever runs in the wrong namespace. A panic in f is re-raised in
// the caller.
func onThread(enter, f func() error) error {
	type outcome struct {
		err   error
		panic any
	}
	done := make(chan outcome, 1)
	go func() {
		runtime.LockOSThread()
		origin, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			done <- outcome{err: fmt.Errorf("open the current network namespace: %w", err)}
			return
		}
		defer origin.Close()
		var out outcome
		func() {
			defer func() { out.panic = recover() }()
			if out.err = enter(); out.err == nil {
				out.err = f()
			}
		}()
		if err := netns.Set(origin); err != nil {
			// Locked and never unlocked: Go ends the thread with us.
			out.err = errors.Join(out.err, fmt.Errorf("return to the original network namespace: %w", err))
		} else {
			runtime.UnlockOSThread()
		}
		done <- out
	}()
	out := <-done
	if out.panic != nil {
		panic(out.panic)
	}
	return out.err
}

// addPorts creates the veth pairs inside the namespace, both ends up. No
// offload needs switching off: frames sent on packet sockets go through a
// veth as they are (checksum offload applies only to the kernel's own
// packets, and a veth merges nothing unless GRO is turned on).
func (tb *testbed) addPorts(n int) error {
	h, err := netlink.NewHandleAt(tb.ns, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("open rtnetlink socket in %s: %w", tb.name, err)
	}
	defer h.Close()
	if err := h.LinkSetUp(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: 1, Name: "lo"}}); err != nil {
		return fmt.Errorf("bring up lo in %s: %w", tb.name, err)
	}
	for i := 0; i < n; i++ {
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: switchIface(i), MTU: portMTU}, PeerName: hostIface(i)}
		if err := h.LinkAdd(veth); err != nil {
			return fmt.Errorf("create veth pair %s/%s in %s: %w", switchIface(i), hostIface(i), tb.name, err)
		}
		for _, name := range []string{switchIface(i), hostIface(i)} {
			link, err := h.LinkByName(name)
			if err == nil {
				err = h.LinkSetMTU(link, portMTU)
			}
			if err == nil {
				err = h.LinkSetUp(link)
			}
			if err != nil {
				return fmt.Errorf("bring up %s in %s: %w", name, tb.name, err)
			}
		}
	}
	return tb.waitOperUp(h, 2*n)
}

// operUpTimeout bounds the wait for the ports to become operational:
// usually milliseconds, but the kernel's link-watch work can be starved on
// a loaded machine.
const operUpTimeout = 30 * time.Second

// waitOperUp waits until all n veth ends are operationally up and have
// their queue. The kernel attaches an interface's queue only then (in its
// link-watch work, shortly after the carrier comes on and just after it
// marks the interface up); until then it silently drops what is sent.
func (tb *testbed) waitOperUp(h *netlink.Handle, n int) error {
	deadline := time.Now().Add(operUpTimeout)
	for {
		notReady, err := tb.notCarrying(h, n)
		if err != nil {
			return err
		}
		if notReady == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %s not operational after %v", tb.name, notReady, operUpTimeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// notCarrying names a veth end that cannot carry frames yet (not up, or
// its root queue still the "noop" placeholder), or returns "" when all n
// can.
func (tb *testbed) notCarrying(h *netlink.Handle, n int) (string, error) {
	links, err := h.LinkList()
	if err != nil {
		return "", fmt.Errorf("list interfaces of %s: %w", tb.name, err)
	}
	qdiscs, err := h.QdiscList(nil)
	if err != nil {
		return "", fmt.Errorf("list queues of %s: %w", tb.name, err)
	}
	rootQdisc := map[int]string{}
	for _, q := range qdiscs {
		if q.Attrs().Parent == netlink.HANDLE_ROOT {
			rootQdisc[q.Attrs().LinkIndex] = q.Type()
		}
	}
	veths := 0
	for _, l := range links {
		if l.Type() != "veth" {
			continue
		}
		veths++
		a := l.Attrs()
		if a.OperState != netlink.OperUp {
			return "interface " + a.Name + " (not up)", nil
		}
		if q, ok := rootQdisc[a.Index]; !ok || q == "noop" {
			return "interface " + a.Name + " (no queue yet)", nil
		}
	}
	if veths < n {
		return fmt.Sprintf("%d of %d interfaces", n-veths, n), nil
	}
	return "", nil
}

// openPorts opens a packet socket on each host end h<i>: what it sends
// enters the switch on port i, what it receives is what the switch sent out
// of port i (VLAN tags as sent, its own frames not).
func (tb *testbed) openPorts(n int) error {
	return tb.do(func() error {
		for i := 0; i < n; i++ {
			s, err := dataplane.OpenSocket(hostIface(i))
			if err != nil {
				return fmt.Errorf("port %d: %w", i, err)
			}
			tb.ports = append(tb.ports, s)
		}
		return nil
	})
}

// do runs f on an OS thread inside the namespace; a socket or process f
// creates belongs to the namespace.
func (tb *testbed) do(f func() error) error {
	return onThread(func() error {
		if err := netns.Set(tb.ns); err != nil {
			return fmt.Errorf("enter network namespace %s: %w", tb.name, err)
		}
		return nil
	}, f)
}

// close closes the packet sockets and removes the namespace; the kernel
// deletes its veths with it once no process is left inside.
func (tb *testbed) close() error {
	// Closing a packet socket waits for an RCU grace period: in parallel.
	errs := []error{dataplane.CloseAll(tb.ports)}
	tb.ports = nil
	if tb.ns >= 0 {
		tb.ns.Close()
		tb.ns = -1
	}
	errs = append(errs, removeNamespace(tb.name))
	return errors.Join(errs...)
}

// removeNamespace unmounts and removes a named namespace; one that does not
// exist is not an error.
func removeNamespace(name string) error {
	path := filepath.Join(netnsDir, name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && err != unix.EINVAL && err != unix.ENOENT {
		return fmt.Errorf("unmount network namespace %s: %w", name, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove network namespace %s: %w", name, err)
	}
	return nil
}

// removeStaleTestbeds removes the namespaces of processes that died without
// cleaning up (killed, or interrupted in the middle of a test). Their switch
// processes died with them (they are started with a parent-death signal).
func removeStaleTestbeds() {
	entries, err := os.ReadDir(netnsDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := testbedOwner(e.Name())
		if !ok || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		if err := removeNamespace(e.Name()); err != nil {
			slog.Warn("cannot remove the namespace of a dead test run", "namespace", e.Name(), "err", err)
			continue
		}
		slog.Debug("removed the namespace of a dead test run", "namespace", e.Name(), "owner", pid)
	}
}

// testbedOwner parses the owner's PID out of a testbed namespace name.
func testbedOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, NamespacePrefix)
	if !ok {
		return 0, false
	}
	pidText, seq, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	if _, errSeq := strconv.ParseUint(seq, 10, 64); err != nil || errSeq != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// processAlive reports whether pid names a process that is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
