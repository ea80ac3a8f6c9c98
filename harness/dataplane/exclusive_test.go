package dataplane_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/dataplane/nstest"
	"github.com/grid-ina/grid/harness/internal/bpf"
)

// arpRequest asks, from h0's side, who has ip.
func arpRequest(ip net.IP) []byte {
	f := make([]byte, 60)
	copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x07})
	binary.BigEndian.PutUint16(f[12:], 0x0806)
	copy(f[14:], []byte{0, 1, 0x08, 0, 6, 4, 0, 1})
	copy(f[22:], []byte{0x02, 0, 0, 0, 0, 0x07})
	copy(f[28:], net.IPv4(10, 77, 0, 2).To4())
	copy(f[38:], ip.To4())
	return f
}

// isARPReply reports whether f is an ARP reply.
func isARPReply(f []byte) bool {
	return len(f) >= 22 && binary.BigEndian.Uint16(f[12:]) == 0x0806 && binary.BigEndian.Uint16(f[20:]) == 2
}

// arpPath gives sw0 (of the veth sw0-h0 in n) the address 10.77.0.1 and
// returns a check that asks for it from h0 and reports whether the
// namespace's stack answered.
func arpPath(t *testing.T, n *nstest.Net) (request []byte, answered func() bool) {
	t.Helper()
	n.Veth("sw0", "h0")
	link, err := n.Netlink().LinkByName("sw0")
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := netlink.ParseAddr("10.77.0.1/24")
	if err := n.Netlink().AddrAdd(link, addr); err != nil {
		t.Fatal(err)
	}
	h0 := n.Socket("h0")
	ask := arpRequest(net.IPv4(10, 77, 0, 1))
	return ask, func() bool {
		t.Helper()
		send(t, h0, ask)
		for _, f := range nstest.Receive(t, h0, 1, 300*time.Millisecond) {
			if isARPReply(f) {
				return true
			}
		}
		return false
	}
}

// TestExclusivePortsSpareTheNamespacesStackButNotItsCaptures: an ARP request
// for the address of a switch port's interface is answered by the
// namespace's stack when the port is not exclusive; on an exclusive port
// the switch and a capture on the interface still get it, the interface
// counts it as received and not dropped, and the stack never answers; once
// the switch closes, the stack answers again and the interface has no tc
// filter or clsact qdisc left. So with the drop on a tcx link and with the
// clsact fallback of kernels before 6.6 (forced here).
func TestExclusivePortsSpareTheNamespacesStackButNotItsCaptures(t *testing.T) {
	for _, hook := range []string{"tcx", "clsact"} {
		t.Run(hook, func(t *testing.T) {
			if hook == "clsact" {
				bpf.ClsactOnly.Store(true)
				t.Cleanup(func() { bpf.ClsactOnly.Store(false) })
			}
			n := nstest.New(t)
			ask, answered := arpPath(t, n)
			if !answered() {
				t.Fatal("the stack does not answer ARP on sw0 even without a switch: the test cannot tell anything")
			}

			dp := openDP(t, n, []dataplane.PortSpec{{Port: 0, Interface: "sw0"}}, dataplane.Options{Exclusive: true})
			if _, filters := n.TCIngress("sw0"); hook == "clsact" && !slices.Equal(filters, []string{"grid-switch-port"}) {
				t.Errorf("the clsact fallback's filters on sw0's ingress are %v, want grid-switch-port", filters)
			}
			capture := n.Socket("sw0")
			stop := run(t, dp, to())
			before := rxCounters(t, n, "sw0")
			if answered() {
				t.Error("the namespace's stack answered ARP on an exclusive port")
			}
			if got := nstest.Receive(t, capture, 1, time.Second); len(got) != 1 || !bytes.Equal(got[0], ask) {
				t.Errorf("a capture on the exclusive port's interface got %d frames, want the request", len(got))
			}
			deadline := time.Now().Add(2 * time.Second)
			for dp.Stats().Ports[0].RxFrames == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if got := dp.Stats().Ports[0].RxFrames; got != 1 {
				t.Errorf("the switch received %d frames on its exclusive port, want 1", got)
			}
			after := rxCounters(t, n, "sw0")
			if after.RxPackets != before.RxPackets+1 || after.RxDropped != before.RxDropped {
				t.Errorf("interface counters went from %d received, %d dropped to %d, %d; want one more received, none dropped",
					before.RxPackets, before.RxDropped, after.RxPackets, after.RxDropped)
			}

			stop()
			if err := dp.Close(); err != nil {
				t.Fatal(err)
			}
			if !answered() {
				t.Error("the stack does not answer ARP on sw0 after the switch closed: the drop stayed")
			}
			if clsact, filters := n.TCIngress("sw0"); clsact || len(filters) > 0 {
				t.Errorf("the switch closed, and sw0 still has clsact %v, filters %v", clsact, filters)
			}
		})
	}
}

// TestAnExclusivePortsDropGoesWithAProcessThatDies: a process holding an
// exclusive port (this test's binary, run again in the namespace) is
// killed without closing anything; with the drop on a tcx link the
// namespace's stack answers on the interface again at once.
func TestAnExclusivePortsDropGoesWithAProcessThatDies(t *testing.T) {
	if os.Getenv(exclusiveChildEnv) != "" {
		exclusiveChild(t)
		return
	}
	n := nstest.New(t)
	_, answered := arpPath(t, n)
	if !answered() {
		t.Fatal("the stack does not answer ARP on sw0 even without a switch: the test cannot tell anything")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestAnExclusivePortsDropGoesWithAProcessThatDies$", "-test.count", "1")
	cmd.Env = append(os.Environ(), exclusiveChildEnv+"=sw0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := n.Start(cmd); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "open\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child did not open its port: %q %v\n%s", line, err, errOut.Bytes())
	}
	if _, filters := n.TCIngress("sw0"); len(filters) > 0 {
		t.Skipf("the child's drop is a clsact filter (%v), not a tcx link: it outlives its process", filters)
	}
	if answered() {
		t.Error("the namespace's stack answered ARP on the child's exclusive port")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if !answered() {
		t.Error("the stack does not answer ARP on sw0 after the process holding it was killed: the drop stayed")
	}
	if clsact, filters := n.TCIngress("sw0"); clsact || len(filters) > 0 {
		t.Errorf("after the process holding it was killed, sw0 has clsact %v, filters %v", clsact, filters)
	}
}

// exclusiveChildEnv names the interface the child of
// TestAnExclusivePortsDropGoesWithAProcessThatDies opens.
const exclusiveChildEnv = "DATAPLANE_EXCLUSIVE_CHILD"

// exclusiveChild opens an exclusive port on the interface the environment
// names, says "open" on its standard output, and waits to be killed.
func exclusiveChild(t *testing.T) {
	iface := os.Getenv(exclusiveChildEnv)
	dp, err := dataplane.Open([]dataplane.PortSpec{{Port: 0, Interface: iface}}, dataplane.Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dp.Close()
	fmt.Println("open")
	time.Sleep(time.Minute)
	t.Fatal("not killed within a minute")
}

func rxCounters(t *testing.T, n *nstest.Net, iface string) *netlink.LinkStatistics {
	t.Helper()
	link, err := n.Netlink().LinkByName(iface)
	if err != nil {
		t.Fatal(err)
	}
	return link.Attrs().Statistics
}
