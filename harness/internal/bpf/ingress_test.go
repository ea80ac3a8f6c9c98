package bpf_test

import (
	"encoding/binary"
	"net"
	"runtime"
	"testing"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/dataplane/nstest"
	"github.com/grid-ina/grid/harness/internal/bpf"
	"github.com/grid-ina/grid/harness/internal/cputime"
)

// dropAll loads a tc program that drops every frame.
func dropAll(t testing.TB) int {
	t.Helper()
	fd, err := bpf.Load(unix.BPF_PROG_TYPE_SCHED_CLS, []uint64{
		bpf.Insn(unix.BPF_ALU64|unix.BPF_MOV|unix.BPF_K, 0, 0, 0, 2), // TC_ACT_SHOT
		bpf.Insn(unix.BPF_JMP|unix.BPF_EXIT, 0, 0, 0, 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// forceClsact makes AttachIngress use the clsact fallback until the test
// ends.
func forceClsact(t testing.TB) {
	bpf.ClsactOnly.Store(true)
	t.Cleanup(func() { bpf.ClsactOnly.Store(false) })
}

// attach attaches prog at iface's ingress from inside n.
func attach(t testing.TB, n *nstest.Net, iface string, prog int) *bpf.Ingress {
	t.Helper()
	l, err := n.Netlink().LinkByName(iface)
	if err != nil {
		t.Fatal(err)
	}
	var a *bpf.Ingress
	if err := n.Do(func() (err error) {
		a, err = bpf.AttachIngress(n.Netlink(), l.Attrs().Index, prog, "grid-test")
		return err
	}); err != nil {
		t.Fatalf("attach at %s: %v", iface, err)
	}
	return a
}

// udpPath is a veth a <-> b in n, b holding 10.99.0.2 with a UDP socket
// bound there: delivered sends a datagram to it as a frame from a packet
// socket on a and reports whether the socket received it.
func udpPath(t testing.TB, n *nstest.Net) (delivered func() bool) {
	t.Helper()
	n.Veth("a", "b")
	la, _ := n.Netlink().LinkByName("a")
	lb, _ := n.Netlink().LinkByName("b")
	addr, _ := netlink.ParseAddr("10.99.0.2/24")
	if err := n.Netlink().AddrAdd(lb, addr); err != nil {
		t.Fatal(err)
	}
	var tx, rx int
	if err := n.Do(func() (err error) {
		if tx, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0); err != nil {
			return err
		}
		rx, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(tx); unix.Close(rx) })
	if err := unix.Bind(tx, &unix.SockaddrLinklayer{Ifindex: la.Attrs().Index}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(rx, &unix.SockaddrInet4{Addr: [4]byte{10, 99, 0, 2}, Port: 9999}); err != nil {
		t.Fatal(err)
	}
	unix.SetsockoptTimeval(rx, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 200_000})
	frame := udpFrame(lb.Attrs().HardwareAddr, la.Attrs().HardwareAddr)
	return func() bool {
		t.Helper()
		if _, err := unix.Write(tx, frame); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 128)
		_, _, err := unix.Recvfrom(rx, buf, 0)
		return err == nil
	}
}

// TestAnIngressDropKeepsFramesFromTheStackAndDetachingLeavesTheInterfaceAsItWas:
// on a kernel with tcx the program hangs from a link, with no clsact qdisc
// or tc filter on the interface; without (forced here) it is a filter of
// the given name on a clsact qdisc. Either way the namespace's stack gets
// no frame while it is attached, and after detaching the stack gets them
// again and the interface has neither qdisc nor filter.
func TestAnIngressDropKeepsFramesFromTheStackAndDetachingLeavesTheInterfaceAsItWas(t *testing.T) {
	for _, tcx := range []bool{true, false} {
		t.Run(map[bool]string{true: "tcx", false: "clsact"}[tcx], func(t *testing.T) {
			if !tcx {
				forceClsact(t)
			}
			n := nstest.New(t)
			delivered := udpPath(t, n)
			if !delivered() {
				t.Fatal("a datagram to b's address does not arrive even without a drop: the test cannot tell anything")
			}
			a := attach(t, n, "b", dropAll(t))
			clsact, filters := n.TCIngress("b")
			switch {
			case tcx && !a.TCX():
				var u unix.Utsname
				unix.Uname(&u)
				t.Skipf("the kernel (%s) took no tcx link: the clsact fallback is what runs here", unix.ByteSliceToString(u.Release[:]))
			case !tcx && a.TCX():
				t.Fatal("forced to clsact, AttachIngress took a tcx link")
			case tcx && (clsact || len(filters) > 0):
				t.Errorf("with a tcx link the interface has clsact %v, filters %v; want neither", clsact, filters)
			case !tcx && (!clsact || len(filters) != 1 || filters[0] != "grid-test"):
				t.Errorf("clsact fallback: the interface has clsact %v, filters %v; want clsact and grid-test", clsact, filters)
			}
			if delivered() {
				t.Error("a datagram reached b's stack through the drop")
			}
			if err := a.Detach(); err != nil {
				t.Fatal(err)
			}
			if clsact, filters := n.TCIngress("b"); clsact || len(filters) > 0 {
				t.Errorf("detached, the interface has clsact %v, filters %v; want neither", clsact, filters)
			}
			if !delivered() {
				t.Error("detached, datagrams to b still do not arrive")
			}
		})
	}
}

// TestTheClsactFallbackLeavesAQdiscItDidNotAdd: detaching removes the
// filter but not a clsact qdisc that was there before.
func TestTheClsactFallbackLeavesAQdiscItDidNotAdd(t *testing.T) {
	forceClsact(t)
	n := nstest.New(t)
	n.Veth("a", "b")
	l, _ := n.Netlink().LinkByName("b")
	theirs := &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: l.Attrs().Index,
		Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}, QdiscType: "clsact"}
	if err := n.Netlink().QdiscAdd(theirs); err != nil {
		t.Fatal(err)
	}
	a := attach(t, n, "b", dropAll(t))
	if _, filters := n.TCIngress("b"); len(filters) != 1 {
		t.Errorf("attached to an existing clsact qdisc: filters %v, want grid-test", filters)
	}
	if err := a.Detach(); err != nil {
		t.Fatal(err)
	}
	if clsact, filters := n.TCIngress("b"); !clsact || len(filters) > 0 {
		t.Errorf("detached: clsact %v, filters %v; want the qdisc that was there, no filter", clsact, filters)
	}
}

// TestDetachAfterTheInterfaceIsGoneIsNoError, with a tcx link and with the
// fallback.
func TestDetachAfterTheInterfaceIsGoneIsNoError(t *testing.T) {
	for _, clsact := range []bool{false, true} {
		t.Run(map[bool]string{false: "tcx", true: "clsact"}[clsact], func(t *testing.T) {
			if clsact {
				forceClsact(t)
			}
			n := nstest.New(t)
			n.Veth("a", "b")
			a := attach(t, n, "b", dropAll(t))
			l, _ := n.Netlink().LinkByName("a")
			if err := n.Netlink().LinkDel(l); err != nil {
				t.Fatal(err)
			}
			if err := a.Detach(); err != nil {
				t.Errorf("detach after the veth was deleted: %v", err)
			}
		})
	}
}

// BenchmarkIngressDrop measures the CPU per frame of sending frames
// through a veth whose far end drops them at ingress: by a tcx link, by a
// clsact filter, or (for scale) by the namespace's IP stack, which finds
// no route. The far end's receive runs in the sender's thread, so this
// process's CPU time per frame is the whole path.
//
//	go test -run '^$' -bench IngressDrop ./harness/internal/bpf
func BenchmarkIngressDrop(b *testing.B) {
	n := nstest.New(b)
	n.Veth("a", "b")
	prog := dropAll(b)
	la, _ := n.Netlink().LinkByName("a")
	lb, _ := n.Netlink().LinkByName("b")
	frame := udpFrame(lb.Attrs().HardwareAddr, la.Attrs().HardwareAddr)
	var fd int
	if err := n.Do(func() (err error) {
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: la.Attrs().Index}); err != nil {
		b.Fatal(err)
	}
	for _, hook := range []string{"tcx", "clsact", "stack"} {
		b.Run(hook, func(b *testing.B) {
			if hook == "clsact" {
				forceClsact(b)
			}
			if hook != "stack" {
				a := attach(b, n, "b", prog)
				if a.TCX() != (hook == "tcx") {
					b.Skipf("the kernel gave tcx %v", a.TCX())
				}
				defer a.Detach()
			}
			sendFrames(b, fd, frame)
		})
	}
}

// sendFrames sends b.N copies of frame on the packet socket fd, 64 to a
// sendmmsg, and reports this process's CPU time per frame.
func sendFrames(b *testing.B, fd int, frame []byte) {
	const batch = 64
	type mmsghdr struct {
		hdr unix.Msghdr
		len uint32
		_   [4]byte
	}
	iov := unix.Iovec{Base: &frame[0]}
	iov.SetLen(len(frame))
	hdrs := make([]mmsghdr, batch)
	for i := range hdrs {
		hdrs[i].hdr.Iov, hdrs[i].hdr.Iovlen = &iov, 1
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	cpu := cputime.Used()
	for sent := 0; sent < b.N; {
		n, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&hdrs[0])), uintptr(min(batch, b.N-sent)), 0, 0, 0)
		if errno != 0 && errno != unix.EAGAIN && errno != unix.ENOBUFS {
			b.Fatal(errno)
		}
		sent += int(n)
	}
	cpu = cputime.Used() - cpu
	b.StopTimer()
	runtime.KeepAlive(frame)
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/frame")
}

// udpFrame is an IPv4 UDP datagram from 10.99.0.1 to 10.99.0.2 port
// 9999, without checksum, as a frame from src to dst (MACs).
func udpFrame(dst, src net.HardwareAddr) []byte {
	f := make([]byte, 14+20+8+32)
	copy(f, dst)
	copy(f[6:], src)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, unix.IPPROTO_UDP
	binary.BigEndian.PutUint16(ip[2:], uint16(len(f)-14))
	copy(ip[12:], net.IPv4(10, 99, 0, 1).To4())
	copy(ip[16:], net.IPv4(10, 99, 0, 2).To4())
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
	binary.BigEndian.PutUint16(ip[20:], 9999)
	binary.BigEndian.PutUint16(ip[20+2:], 9999)
	binary.BigEndian.PutUint16(ip[20+4:], uint16(len(f)-14-20))
	return f
}
