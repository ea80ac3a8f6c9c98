package dataplane_test

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/dataplane/nstest"
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

// TestExclusivePortsSpareTheNamespacesStackButNotItsCaptures: an ARP request
// for the address of a switch port's interface is answered by the
// namespace's stack when the port is not exclusive; on an exclusive port
// the switch and a capture on the interface still get it, the interface
// counts it as received and not dropped, and the stack never answers; once
// the switch closes, the stack answers again.
func TestExclusivePortsSpareTheNamespacesStackButNotItsCaptures(t *testing.T) {
	n := nstest.New(t)
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
	answered := func() bool {
		t.Helper()
		send(t, h0, ask)
		for _, f := range nstest.Receive(t, h0, 1, 300*time.Millisecond) {
			if isARPReply(f) {
				return true
			}
		}
		return false
	}
	if !answered() {
		t.Fatal("the stack does not answer ARP on sw0 even without a switch: the test cannot tell anything")
	}

	dp := openDP(t, n, []dataplane.PortSpec{{Port: 0, Interface: "sw0"}}, dataplane.Options{Exclusive: true})
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
		t.Error("the stack does not answer ARP on sw0 after the switch closed: the filter stayed")
	}
}

func rxCounters(t *testing.T, n *nstest.Net, iface string) *netlink.LinkStatistics {
	t.Helper()
	link, err := n.Netlink().LinkByName(iface)
	if err != nil {
		t.Fatal(err)
	}
	return link.Attrs().Statistics
}
