package fabric

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/topo"
)

// A course's topology file gives hosts their own addresses and expects ARP
// and Mininet's port names (p4lang/tutorials: s1-eth1, h1 at 10.0.1.1/24).
func TestHostAddressesGiveTheCoursesAddressesWithARPAndMininetPortNames(t *testing.T) {
	needRoot(t)
	tp, err := topo.Parse([]byte(`name: course
nodes:
  - {name: s1, kind: switch}
  - {name: h1, kind: host}
  - {name: h2, kind: host}
links:
  - {endpoints: ["h1:eth0", "s1:p1"]}
  - {endpoints: ["h2:eth0", "s1:p2"]}
`), "course.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h1MAC := mustMAC(t, "08:00:00:00:01:11")
	run := newRunName(t)
	t.Cleanup(func() { Clean(run) })
	st, err := Up(context.Background(), tp, Options{Name: run, MininetNames: true, HostAddresses: map[topo.Endpoint]HostAddress{
		{Node: "h1", Port: 0}: {IP: netip.MustParsePrefix("10.0.1.1/24"), MAC: h1MAC},
		{Node: "h2", Port: 0}: {IP: netip.MustParsePrefix("10.0.1.2/24"), MAC: mustMAC(t, "08:00:00:00:01:22")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s1 := st.Node("s1")
	if s1.Port(1).Name != "s1-eth1" || s1.Port(2).Name != "s1-eth2" {
		t.Errorf("switch ports %q %q, want s1-eth1 s1-eth2", s1.Port(1).Name, s1.Port(2).Name)
	}
	if h1 := st.Node("h1").Port(0); h1.IP != "10.0.1.1/24" || h1.MAC != h1MAC.String() || h1.Gateway != "" {
		t.Errorf("h1 recorded as %+v", h1)
	}
	inNamespace(t, st.Node("h1").Namespace, func() {
		link, err := netlink.LinkByName("eth0")
		if err != nil {
			t.Fatal(err)
		}
		if link.Attrs().RawFlags&unix.IFF_NOARP != 0 || link.Attrs().HardwareAddr.String() != h1MAC.String() {
			t.Errorf("eth0: flags %#x, MAC %s; want ARP on and %s", link.Attrs().RawFlags, link.Attrs().HardwareAddr, h1MAC)
		}
		routes, err := netlink.RouteList(link, unix.AF_INET)
		if err != nil || len(routes) != 1 || routes[0].Dst.String() != "10.0.1.0/24" {
			t.Errorf("routes %v (%v), want the prefix route 10.0.1.0/24 only", routes, err)
		}
	})
	// h1 sending to h2 first asks for h2's MAC: an ARP request reaches s1.
	fd := openPort(t, s1, 1)
	defer unix.Close(fd)
	inNamespace(t, st.Node("h1").Namespace, func() {
		conn, err := net.Dial("udp4", "10.0.1.2:9")
		if err != nil {
			t.Fatal(err)
		}
		conn.Write([]byte("x"))
		conn.Close()
	})
	frame, err := receive(fd, 0)
	if err != nil {
		t.Fatalf("nothing reached s1-eth1: %v", err)
	}
	if len(frame) < 14 || binary.BigEndian.Uint16(frame[12:14]) != 0x0806 {
		t.Errorf("first frame from h1 %x, want an ARP request", frame)
	}
}
