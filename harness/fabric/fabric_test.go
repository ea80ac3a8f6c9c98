package fabric

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/topo"
)

// Integration tests: they build real namespaces and need root (CI runs them
// as root). Every run gets a random name starting with "gt" and is cleaned up
// even when the test fails.

func needRoot(t *testing.T) {
	t.Helper()
	if err := CanBuild(); err != nil {
		t.Skipf("cannot build network namespaces here (CI runs the tests as root): %v", err)
	}
}

// newRunName returns a run name no other test or helper uses.
func newRunName(t *testing.T) string {
	b := make([]byte, 3)
	rand.Read(b)
	return "gt" + hex.EncodeToString(b)
}

// upRun builds tp as a fresh run that is removed when the test ends.
func upRun(t *testing.T, tp *topo.Topology) *State {
	t.Helper()
	run := newRunName(t)
	t.Cleanup(func() {
		if _, err := Clean(run); err != nil {
			t.Errorf("clean %s: %v", run, err)
		}
	})
	st, err := Up(context.Background(), tp, Options{Name: run})
	if err != nil {
		t.Fatalf("up %s: %v", run, err)
	}
	return st
}

// upYAML builds a topology given as YAML text as a fresh run.
func upYAML(t *testing.T, yaml string) *State {
	t.Helper()
	tp, err := topo.Parse([]byte(yaml), t.Name()+".yaml")
	if err != nil {
		t.Fatal(err)
	}
	return upRun(t, tp)
}

func fatTree(t *testing.T, k, hostsPerEdge int) *topo.Topology {
	t.Helper()
	tp, err := topo.FatTree(k, hostsPerEdge)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// leftovers lists everything of the run with this name and tag that still
// exists: namespaces, root-namespace interfaces, state.
func leftovers(t *testing.T, run, tag string) []string {
	t.Helper()
	var left []string
	entries, err := os.ReadDir(NetnsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), run+"-") {
			left = append(left, "namespace "+e.Name())
		}
	}
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if tag != "" && strings.HasPrefix(l.Attrs().Name, tag) {
			left = append(left, "root interface "+l.Attrs().Name)
		}
	}
	if _, err := os.Stat(runDir(run)); err == nil {
		left = append(left, "state "+runDir(run))
	}
	return append(left, heldNamespaces(t)...)
}

// heldNamespaces lists what in this process still refers to a network
// namespace other than its own: namespace handles, sockets opened inside one
// (SIOCGSKNS gives a socket's namespace) and threads left inside one. Each
// keeps an unmounted namespace, and every interface in it, alive unseen.
func heldNamespaces(t *testing.T) []string {
	t.Helper()
	own, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range fds {
		link, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue // the directory's own descriptor, closed meanwhile
		}
		if strings.HasPrefix(link, "net:[") && link != own {
			held = append(held, fmt.Sprintf("descriptor %s on namespace %s", e.Name(), link))
		}
		if !strings.HasPrefix(link, "socket:[") {
			continue
		}
		var fd int
		fmt.Sscan(e.Name(), &fd)
		nsfd, err := unix.IoctlRetInt(fd, unix.SIOCGSKNS)
		if err != nil {
			continue
		}
		ns, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", nsfd))
		unix.Close(nsfd)
		if ns != own {
			held = append(held, fmt.Sprintf("socket %s (descriptor %s) in namespace %s", link, e.Name(), ns))
		}
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tasks {
		if ns, err := os.Readlink("/proc/self/task/" + e.Name() + "/ns/net"); err == nil && ns != own {
			held = append(held, fmt.Sprintf("thread %s in namespace %s", e.Name(), ns))
		}
	}
	return held
}

func requireNothingLeft(t *testing.T, run, tag string) {
	t.Helper()
	if left := leftovers(t, run, tag); len(left) > 0 {
		t.Fatalf("run %s left behind: %s", run, strings.Join(left, ", "))
	}
}

// inNamespace runs f on a thread inside the named namespace.
func inNamespace(t *testing.T, ns string, f func()) {
	t.Helper()
	if err := InNamespace(filepath.Join(NetnsDir, ns), func() error { f(); return nil }); err != nil {
		t.Fatal(err)
	}
}

// openPort opens a packet socket on a port of a node (Node.OpenPort) that
// gives up waiting for a frame after a second; the test closes it.
func openPort(t *testing.T, n *Node, port int) int {
	t.Helper()
	fd, err := n.OpenPort(port)
	if err != nil {
		t.Fatal(err)
	}
	tv := unix.NsecToTimeval(int64(time.Second))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	return fd
}

// closeAll closes file descriptors in parallel: closing a packet socket waits
// for an RCU grace period, tens of milliseconds each when done one by one.
func closeAll(fds []int) {
	var wg sync.WaitGroup
	for _, fd := range fds {
		wg.Add(1)
		go func() { defer wg.Done(); unix.Close(fd) }()
	}
	wg.Wait()
}

// receive returns the next frame at the packet socket, or an error on
// timeout. Ports ignore the frames they send, so a frame seen here arrived.
func receive(fd int, flags int) ([]byte, error) {
	buf := make([]byte, 9216)
	n, _, err := unix.Recvfrom(fd, buf, flags)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

func mustMAC(t *testing.T, s string) net.HardwareAddr {
	t.Helper()
	m, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFatTreeK4CarriesAFrameAcrossEveryLinkBothWaysAndLeavesNothing(t *testing.T) {
	needRoot(t)
	st := upRun(t, fatTree(t, 4, 0))
	if len(st.Nodes) != 36 || len(st.Links) != 48 {
		t.Fatalf("%d nodes and %d links, want 36 and 48", len(st.Nodes), len(st.Links))
	}
	// One packet socket per interface, keyed by "node:port".
	type end struct {
		fd  int
		mac net.HardwareAddr
	}
	ends := map[topo.Endpoint]end{}
	var fds []int
	defer func() { closeAll(fds) }()
	for _, n := range st.Nodes {
		if !namespaceExists(n.Namespace) {
			t.Fatalf("namespace %s missing from %s", n.Namespace, NetnsDir)
		}
		for _, ifc := range n.Interfaces {
			fd := openPort(t, &n, ifc.Port)
			fds = append(fds, fd)
			ends[topo.Endpoint{Node: n.Name, Port: ifc.Port}] = end{fd, mustMAC(t, ifc.MAC)}
		}
	}
	for i, l := range st.Links {
		for dir, pair := range [][2]topo.Endpoint{{l.A, l.B}, {l.B, l.A}} {
			from, to := ends[pair[0]], ends[pair[1]]
			frame := make([]byte, 0, 64)
			frame = append(frame, to.mac...)
			frame = append(frame, from.mac...)
			frame = binary.BigEndian.AppendUint16(frame, 0x88b5) // IEEE local experimental ethertype
			frame = fmt.Appendf(frame, "link %d direction %d %v->%v", i, dir, pair[0], pair[1])
			if _, err := unix.Write(from.fd, frame); err != nil {
				t.Fatalf("send on %v: %v", pair[0], err)
			}
			got, err := receive(to.fd, 0)
			if err != nil {
				t.Fatalf("link %v-%v: nothing arrived at %v: %v", l.A, l.B, pair[1], err)
			}
			// The first frame to arrive must be ours: no ARP, IPv6 or IGMP chatter.
			if !bytes.Equal(got, frame) {
				t.Fatalf("at %v got %x, want %x", pair[1], got, frame)
			}
		}
	}
	for ep, e := range ends {
		if got, err := receive(e.fd, unix.MSG_DONTWAIT); err == nil {
			t.Errorf("unexpected frame at %v: %x", ep, got)
		}
	}
	closeAll(fds)
	fds = nil
	if err := Down(st.Run); err != nil {
		t.Fatal(err)
	}
	requireNothingLeft(t, st.Run, st.Tag)
}

// ipChecksum is the Internet checksum of b (0 when b carries a valid one).
func ipChecksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}

func TestHostSendsThroughItsGatewayWithoutARPAndWithCorrectChecksums(t *testing.T) {
	needRoot(t)
	st := upRun(t, fatTree(t, 4, 0))
	h1, h2, e1 := st.Node("h1"), st.Node("h2"), st.Node("e1")
	eth0 := h1.Port(0)
	port := e1.Port(eth0.Peer.Port)
	capture := openPort(t, e1, port.Port)
	defer unix.Close(capture)
	// A port socket on h1 itself must not see what h1's own stack sends.
	own := openPort(t, h1, 0)
	defer unix.Close(own)

	// The kernel must have left checksumming to software.
	inNamespace(t, h1.Namespace, func() {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		on, err := txChecksum(fd, eth0.Name)
		if err != nil {
			t.Fatal(err)
		}
		if on {
			t.Errorf("tx checksum offload still on for %s", eth0.Name)
		}
	})

	dst := netipAddr(t, h2.Port(0).IP)
	payload := []byte("gradient fragment")
	inNamespace(t, h1.Namespace, func() {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		if err := unix.Sendto(fd, payload, 0, &unix.SockaddrInet4{Port: 9999, Addr: dst}); err != nil {
			t.Fatalf("send UDP from h1: %v", err)
		}
	})
	frame, err := receive(capture, 0)
	if err != nil {
		t.Fatalf("nothing reached e1 from h1: %v", err)
	}
	if got, err := receive(own, unix.MSG_DONTWAIT); err == nil {
		t.Errorf("h1's port socket saw the frame h1 sent: %x", got)
	}
	if got := net.HardwareAddr(frame[0:6]).String(); got != eth0.GatewayMAC || got != port.MAC {
		t.Errorf("destination MAC %s, want the gateway's %s (e1 port %d's MAC %s)", got, eth0.GatewayMAC, port.Port, port.MAC)
	}
	if got := net.HardwareAddr(frame[6:12]).String(); got != eth0.MAC {
		t.Errorf("source MAC %s, want h1's %s", got, eth0.MAC)
	}
	if et := binary.BigEndian.Uint16(frame[12:]); et != 0x0800 {
		t.Fatalf("ethertype %#x, want IPv4 (first frame out of h1 must be our datagram, not ARP)", et)
	}
	ip := frame[14:]
	ihl := int(ip[0]&0x0f) * 4
	if ipChecksum(ip[:ihl]) != 0 {
		t.Errorf("bad IPv4 header checksum")
	}
	if got := [4]byte(ip[16:20]); got != dst {
		t.Errorf("IPv4 destination %v, want %v", got, dst)
	}
	udp := ip[ihl:]
	pseudo := append(append([]byte{}, ip[12:20]...), 0, unix.IPPROTO_UDP, udp[4], udp[5])
	if ipChecksum(append(pseudo, udp[:binary.BigEndian.Uint16(udp[4:])]...)) != 0 {
		t.Errorf("bad UDP checksum %#04x: transmit checksum offload left it partial", binary.BigEndian.Uint16(udp[6:]))
	}
	if !bytes.HasSuffix(frame, payload) {
		t.Errorf("payload missing from %x", frame)
	}

	// Only the hosts' network is routed: anything else fails at the sender.
	inNamespace(t, h1.Namespace, func() {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		err = unix.Sendto(fd, payload, 0, &unix.SockaddrInet4{Port: 9999, Addr: [4]byte{192, 0, 2, 1}})
		if !errors.Is(err, unix.ENETUNREACH) {
			t.Errorf("send from h1 to 192.0.2.1 outside the hosts' network: %v, want ENETUNREACH", err)
		}
	})
	if got, err := receive(capture, unix.MSG_DONTWAIT); err == nil {
		t.Errorf("a frame for outside the hosts' network reached e1: %x", got)
	}
}

func netipAddr(t *testing.T, prefix string) [4]byte {
	t.Helper()
	ip, _, err := net.ParseCIDR(prefix)
	if err != nil {
		t.Fatal(err)
	}
	return [4]byte(ip.To4())
}

// qdiscOf returns the root qdisc of interface ifindex in namespace ns.
func qdiscOf(t *testing.T, ns string, ifindex int) netlink.Qdisc {
	t.Helper()
	h, err := netns.GetFromName(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	nh, err := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer nh.Close()
	qs, err := nh.QdiscList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: ifindex}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Attrs().Parent == netlink.HANDLE_ROOT {
			return q
		}
	}
	return nil
}

const shapedTopology = `name: shaped
nodes:
  - {name: s1, kind: switch}
  - {name: s2, kind: switch}
  - {name: w1, kind: host, role: worker}
  - {name: ps, kind: host, role: ps}
links:
  - {endpoints: ["s1:p1", "w1:eth0"], bandwidth: 10Mbps}
  - {endpoints: ["s1:p2", "s2:p1"], bandwidth: 40Gbps, delay: 2ms, loss: 0.5%}
  - {endpoints: ["s2:p2", "ps:eth0"]}
`

func TestLinkBandwidthIsAppliedAsTbfAndMissingNetemIsRecorded(t *testing.T) {
	needRoot(t)
	st := upYAML(t, shapedTopology)
	check := func(node string, port int, wantBits float64) {
		t.Helper()
		n := st.Node(node)
		q := qdiscOf(t, n.Namespace, n.Port(port).Index)
		if wantBits == 0 {
			if q != nil && q.Type() == "tbf" {
				t.Errorf("%s:%d is shaped (%v) though its link has no bandwidth", node, port, q)
			}
			return
		}
		tbf, ok := q.(*netlink.Tbf)
		if !ok {
			if st.Emulation.Netem && q != nil && q.Type() == "netem" {
				return
			}
			t.Fatalf("%s:%d root qdisc is %v, want tbf", node, port, q)
		}
		if tbf.Rate != uint64(wantBits/8) {
			t.Errorf("%s:%d tbf rate %d B/s, want %d", node, port, tbf.Rate, uint64(wantBits/8))
		}
		if tbf.Limit == 0 || tbf.Buffer == 0 {
			t.Errorf("%s:%d tbf without limit or buffer: %+v", node, port, tbf)
		}
	}
	check("w1", 0, 10e6)
	check("s1", 1, 10e6)
	check("s1", 2, 40e9)
	check("s2", 1, 40e9)
	check("s2", 2, 0)
	check("ps", 0, 0)
	if st.Emulation.Netem {
		t.Logf("this kernel has netem: delay and loss applied by qdisc")
		return
	}
	if st.Emulation.NetemError == "" {
		t.Error("netem missing but no reason recorded")
	}
	if len(st.Emulation.Pending) != 1 || st.Emulation.Pending[0].Delay != 2*time.Millisecond || st.Emulation.Pending[0].Loss != 0.5 {
		t.Fatalf("pending emulation = %+v, want the s1-s2 link with 2ms and 0.5%%", st.Emulation.Pending)
	}
	saved, err := LoadState(st.Run)
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.Emulation.Pending) != 1 || saved.Emulation.Netem {
		t.Fatalf("state file emulation = %+v", saved.Emulation)
	}
}

func TestTwoRunsOfTheSameTopologyBuiltAtOnceCoexist(t *testing.T) {
	needRoot(t)
	tb := topo.Testbed()
	names := [2]string{newRunName(t), newRunName(t)}
	var states [2]*State
	var errs [2]error
	var wg sync.WaitGroup
	for i, run := range names {
		t.Cleanup(func() { Clean(run) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			states[i], errs[i] = Up(context.Background(), tb, Options{Name: run})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	a, b := states[0], states[1]
	if a.Tag == b.Tag {
		t.Fatalf("both runs use interface tag %s", a.Tag)
	}
	for _, n := range a.Nodes {
		if !namespaceExists(n.Namespace) || !namespaceExists(b.Node(n.Name).Namespace) {
			t.Fatalf("node %s missing in one of the runs", n.Name)
		}
	}
	if err := Down(a.Run); err != nil {
		t.Fatal(err)
	}
	requireNothingLeft(t, a.Run, a.Tag)
	for _, n := range b.Nodes {
		if !namespaceExists(n.Namespace) {
			t.Fatalf("removing run %s took %s of run %s", a.Run, n.Namespace, b.Run)
		}
	}
	if _, err := LoadState(b.Run); err != nil {
		t.Fatalf("state of the surviving run: %v", err)
	}
}

func TestUpRefusesAnExistingRunAndBuildsNothing(t *testing.T) {
	needRoot(t)
	st := upRun(t, topo.Testbed())
	_, err := Up(context.Background(), topo.Testbed(), Options{Name: st.Run})
	if err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("second up of run %s: err = %v", st.Run, err)
	}
	// The first run is untouched.
	for _, n := range st.Nodes {
		if !namespaceExists(n.Namespace) {
			t.Fatalf("namespace %s vanished", n.Namespace)
		}
	}
}

func TestUpRejectsAnInvalidTopologyWithTopoErrorAndCreatesNothing(t *testing.T) {
	needRoot(t)
	run := newRunName(t)
	t.Cleanup(func() { Clean(run) })
	for name, change := range map[string]func(tp *topo.Topology){
		"name unfit for a namespace": func(tp *topo.Topology) { tp.Nodes[0].Name = "c/1" },
		"duplicate name":             func(tp *topo.Topology) { tp.Nodes[1].Name = tp.Nodes[0].Name },
		"port clash":                 func(tp *topo.Topology) { tp.Links[1].A = tp.Links[0].A },
		"unknown node":               func(tp *topo.Topology) { tp.Links[0].B.Node = "nowhere" },
	} {
		tp := fatTree(t, 4, 0)
		change(tp)
		_, err := Up(context.Background(), tp, Options{Name: run})
		var located *topo.Error
		if !errors.As(err, &located) || located.Field == "" {
			t.Errorf("%s: up returned %v, want topo's error naming the field", name, err)
		}
		requireNothingLeft(t, run, "")
	}
}

func TestCancelledUpRollsBackEverything(t *testing.T) {
	needRoot(t)
	run := newRunName(t)
	t.Cleanup(func() { Clean(run) })
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel as soon as the first namespace exists, from outside the build.
	go func() {
		for ctx.Err() == nil {
			if namespaceExists(NamespaceName(run, "c1")) {
				cancel()
				return
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	_, err := Up(ctx, fatTree(t, 8, 6), Options{Name: run})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("up returned %v, want context.Canceled", err)
	}
	requireNothingLeft(t, run, "")
}

func TestFailedUpRollsBackWhatItBuilt(t *testing.T) {
	needRoot(t)
	run := newRunName(t)
	t.Cleanup(func() { Clean(run) })
	// A foreign namespace squatting on the name of a late node makes the build
	// fail after it has created others; the squatter must survive.
	tp := fatTree(t, 4, 0)
	last := tp.Nodes[len(tp.Nodes)-1].Name
	squat := filepath.Join(NetnsDir, NamespaceName(run, last))
	// Up checks for squatters before it starts, so plant it once the build has
	// begun, i.e. when the state file appears.
	go func() {
		for i := 0; i < 20000; i++ {
			if _, err := os.Stat(statePath(run)); err == nil {
				os.WriteFile(squat, nil, 0o644)
				return
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	_, err := Up(context.Background(), tp, Options{Name: run, Workers: 1})
	defer os.Remove(squat)
	if err == nil {
		t.Skip("the build finished before the squatter appeared")
	}
	if !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("up failed with %v, want the squatter's namespace to exist already", err)
	}
	if _, err := os.Stat(squat); err != nil {
		t.Fatalf("rollback removed a namespace it did not create: %v", err)
	}
	os.Remove(squat)
	requireNothingLeft(t, run, "")
}

func TestStartedProcessRunsInTheNodeAndDownStopsIt(t *testing.T) {
	needRoot(t)
	st := upRun(t, topo.Testbed())
	cmd := exec.Command("sleep", "60")
	if err := Start(st.Run, "w1", cmd, "test-sleeper"); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var want unix.Stat_t
	if err := unix.Stat(filepath.Join(NetnsDir, st.Node("w1").Namespace), &want); err != nil {
		t.Fatal(err)
	}
	if link != fmt.Sprintf("net:[%d]", want.Ino) {
		t.Fatalf("started process is in %s, want w1's namespace (inode %d)", link, want.Ino)
	}
	if self, _ := os.Readlink("/proc/self/ns/net"); self == link {
		t.Fatal("the test process itself ended up in w1's namespace")
	}
	saved, _ := LoadState(st.Run)
	if len(saved.Processes) != 1 || saved.Processes[0].PID != cmd.Process.Pid || saved.Processes[0].Node != "w1" {
		t.Fatalf("recorded processes = %+v", saved.Processes)
	}
	if err := Down(st.Run); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("down did not stop the recorded process")
	}
	requireNothingLeft(t, st.Run, st.Tag)
}

func TestDownRemovesAStrayInterfaceOfTheRunFromTheRootNamespace(t *testing.T) {
	needRoot(t)
	st := upRun(t, topo.Testbed())
	stray := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: st.Tag + "s99p1"}, PeerName: st.Tag + "s99p2"}
	if err := netlink.LinkAdd(stray); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { netlink.LinkDel(stray) })
	if err := Down(st.Run); err != nil {
		t.Fatal(err)
	}
	requireNothingLeft(t, st.Run, st.Tag)
}

func TestALiveBuildIsNeitherTakenDownNorCleaned(t *testing.T) {
	needRoot(t)
	st := upRun(t, topo.Testbed())
	self, err := ProcessOf(os.Getpid(), "", "grid-up")
	if err != nil {
		t.Fatal(err)
	}
	// Pretend this test process is still building the run.
	st.Status, st.Builder = StatusBuilding, &self
	if err := st.save(); err != nil {
		t.Fatal(err)
	}
	if err := Down(st.Run); err == nil || !strings.Contains(err.Error(), "being built") {
		t.Fatalf("down of a run under construction: %v", err)
	}
	rep, err := Clean(st.Run)
	if err != nil || len(rep.Busy) != 1 || len(rep.Runs) != 0 {
		t.Fatalf("clean of a run under construction: %+v, %v", rep, err)
	}
	for _, n := range st.Nodes {
		if !namespaceExists(n.Namespace) {
			t.Fatalf("namespace %s removed while its run was being built", n.Namespace)
		}
	}
	// Once its builder is gone, the run is a crashed build's leftover.
	st.Builder.Start++
	if err := st.save(); err != nil {
		t.Fatal(err)
	}
	if rep, err := Clean(st.Run); err != nil || len(rep.Runs) != 1 {
		t.Fatalf("clean of a crashed build: %+v, %v", rep, err)
	}
	requireNothingLeft(t, st.Run, st.Tag)
}

func TestNodeDoRunsInsideTheNodesNamespace(t *testing.T) {
	needRoot(t)
	st := upRun(t, topo.Testbed())
	s1 := st.Node("s1")
	var names []string
	err := s1.Do(func() error {
		ifs, err := net.Interfaces()
		for _, i := range ifs {
			names = append(names, i.Name)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Some kernels add fallback tunnel devices (sit0, tunl0) to every
	// namespace, so look for ours rather than for an exact list.
	seen := map[string]bool{}
	ours := 0
	for _, n := range names {
		seen[n] = true
		if strings.HasPrefix(n, st.Tag) {
			ours++
		}
	}
	if !seen["lo"] || ours != len(s1.Interfaces) {
		t.Fatalf("inside s1 the interfaces are %v, want lo and s1's %d ports", names, len(s1.Interfaces))
	}
	for _, i := range s1.Interfaces {
		if !seen[i.Name] {
			t.Fatalf("inside s1 the interfaces are %v: port %d (%s) missing", names, i.Port, i.Name)
		}
	}
	if outside, _ := net.InterfaceByName(s1.Interfaces[0].Name); outside != nil {
		t.Fatalf("s1's port %s is visible outside its namespace", outside.Name)
	}
}

const multihomedTopology = `name: multihomed
nodes:
  - {name: s1, kind: switch}
  - {name: s2, kind: switch}
  - {name: w1, kind: host, role: worker}
  - {name: ps, kind: host, role: ps}
links:
  - {endpoints: ["s1:p1", "ps:eth0"]}
  - {endpoints: ["s2:p1", "ps:eth1"]}
  - {endpoints: ["s1:p2", "w1:eth0"]}
  - {endpoints: ["s1:p3", "s2:p2"]}
`

func TestMultihomedHostSendsThroughTheInterfaceItsSocketIsBoundTo(t *testing.T) {
	needRoot(t)
	st := upYAML(t, multihomedTopology)
	ps, s1, s2 := st.Node("ps"), st.Node("s1"), st.Node("s2")
	at1 := openPort(t, s1, 1)
	defer unix.Close(at1)
	at2 := openPort(t, s2, 1)
	defer unix.Close(at2)
	dst := &unix.SockaddrInet4{Port: 9999, Addr: netipAddr(t, st.Node("w1").Port(0).IP)}
	send := func(bind *unix.SockaddrInet4) {
		inNamespace(t, ps.Namespace, func() {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			if bind != nil {
				if err := unix.Bind(fd, bind); err != nil {
					t.Fatal(err)
				}
			}
			if err := unix.Sendto(fd, []byte("x"), 0, dst); err != nil {
				t.Fatalf("send from ps (bound to %v): %v", bind, err)
			}
		})
	}
	expect := func(fd int, via *Interface, to *Interface) {
		t.Helper()
		frame, err := receive(fd, 0)
		if err != nil {
			t.Fatalf("nothing left ps through %s: %v", via.Name, err)
		}
		if src, dstMAC := net.HardwareAddr(frame[6:12]).String(), net.HardwareAddr(frame[0:6]).String(); src != via.MAC || dstMAC != to.MAC {
			t.Fatalf("frame through %s: %s -> %s, want %s -> %s", via.Name, src, dstMAC, via.MAC, to.MAC)
		}
	}
	send(nil)
	expect(at1, ps.Port(0), s1.Port(1))
	send(&unix.SockaddrInet4{Addr: netipAddr(t, ps.Port(1).IP)})
	expect(at2, ps.Port(1), s2.Port(1))
	for _, fd := range []int{at1, at2} {
		if got, err := receive(fd, unix.MSG_DONTWAIT); err == nil {
			t.Errorf("a frame went the wrong way: %x", got)
		}
	}
}

func TestDownFinishesARunWhoseTeardownWasInterrupted(t *testing.T) {
	needRoot(t)
	st := upRun(t, topo.Testbed())
	// A `grid down` killed half-way has removed some namespaces, not the state.
	for _, n := range st.Nodes[:5] {
		if err := removeNamespace(n.Namespace); err != nil {
			t.Fatal(err)
		}
	}
	if err := Down(st.Run); err != nil {
		t.Fatalf("down of a half torn-down run: %v", err)
	}
	requireNothingLeft(t, st.Run, st.Tag)
}

func TestNoInterfaceSendsAnythingByItself(t *testing.T) {
	needRoot(t)
	st := upRun(t, topo.Testbed())
	// IPv6 would send router solicitations, MLD reports and DAD probes
	// within a second of a link coming up; IGMP and ARP go out at once.
	time.Sleep(1500 * time.Millisecond)
	for _, n := range st.Nodes {
		h, err := netns.GetFromPath(n.NamespacePath())
		if err != nil {
			t.Fatal(err)
		}
		nh, err := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
		h.Close()
		if err != nil {
			t.Fatal(err)
		}
		links, err := nh.LinkList()
		nh.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links {
			if !strings.HasPrefix(l.Attrs().Name, st.Tag) {
				continue
			}
			if s := l.Attrs().Statistics; s == nil || s.TxPackets != 0 || s.RxPackets != 0 {
				t.Errorf("%s %s sent or received packets nobody asked for: %+v", n.Name, l.Attrs().Name, s)
			}
		}
	}
}
