package topo

import (
	"net/netip"
	"testing"
)

func TestPlanGivesUniqueAddressesOnFatTreeK8(t *testing.T) {
	ft, err := FatTree(8, 6)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ft.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hosts) != 192 {
		t.Fatalf("host interfaces = %d, want 192", len(p.Hosts))
	}
	// Every switch port faces one link end: 2*448 ends minus 192 host ends.
	if len(p.Ports) != 2*448-192 {
		t.Fatalf("switch ports = %d, want %d", len(p.Ports), 2*448-192)
	}
	ips := map[netip.Addr]string{}
	macs := map[string]string{}
	for _, hi := range p.Hosts {
		for _, a := range []netip.Addr{hi.IP.Addr(), hi.Gateway} {
			if prev, dup := ips[a]; dup {
				t.Errorf("%v used by %s and %s", a, prev, hi.Host)
			}
			ips[a] = hi.Host
		}
		if !HostNetwork.Contains(hi.IP.Addr()) || hi.IP.Bits() != HostPrefixLen || !hi.IP.Contains(hi.Gateway) {
			t.Errorf("%s: %v gateway %v not in the plan's shape", hi.Host, hi.IP, hi.Gateway)
		}
		if prev, dup := macs[hi.MAC.String()]; dup {
			t.Errorf("MAC %v used by %s and %s", hi.MAC, prev, hi.Host)
		}
		macs[hi.MAC.String()] = hi.Host
	}
	for _, sp := range p.Ports {
		if prev, dup := macs[sp.MAC.String()]; dup {
			t.Errorf("MAC %v used by %s and %s:p%d", sp.MAC, prev, sp.Switch, sp.Port)
		}
		macs[sp.MAC.String()] = sp.Switch
		if sp.MAC[0] != 0x02 {
			t.Errorf("%s:p%d MAC %v is not locally administered unicast", sp.Switch, sp.Port, sp.MAC)
		}
	}
}

func TestPlanGatewayMACIsTheFacingSwitchPort(t *testing.T) {
	p, err := Testbed().Plan()
	if err != nil {
		t.Fatal(err)
	}
	ps, ok := p.Interface("ps", 0)
	if !ok {
		t.Fatal("no ps eth0")
	}
	// ps is host 9 under s1 port 3.
	if ps.IP != netip.MustParsePrefix("10.0.9.1/24") || ps.Gateway != netip.MustParseAddr("10.0.9.254") {
		t.Errorf("ps address %v gateway %v", ps.IP, ps.Gateway)
	}
	if ps.MAC.String() != "02:00:00:00:00:09" || ps.GatewayMAC.String() != "02:01:00:01:00:03" {
		t.Errorf("ps MAC %v gateway MAC %v", ps.MAC, ps.GatewayMAC)
	}
	port, ok := p.Port("s1", 3)
	if !ok || port.MAC.String() != ps.GatewayMAC.String() || port.Peer != (Endpoint{"ps", 0}) {
		t.Errorf("s1:p3 = %+v", port)
	}
	if hi, ok := p.ByIP(netip.MustParseAddr("10.0.9.1")); !ok || hi.Host != "ps" {
		t.Errorf("ByIP(10.0.9.1) = %+v %v", hi, ok)
	}
	if _, ok := p.ByIP(netip.MustParseAddr("10.0.9.254")); ok {
		t.Error("the gateway address belongs to no host")
	}
}

func TestHostAddressesSeparateInterfacesAndHighIDs(t *testing.T) {
	cases := []struct {
		id, iface int
		want      string
	}{
		{1, 0, "10.0.1.1"}, {300, 0, "10.1.44.1"}, {MaxHostID, 0, "10.63.255.1"}, {1, 1, "10.64.1.1"}, {MaxHostID, 3, "10.255.255.1"},
	}
	for _, c := range cases {
		if got := HostAddr(c.id, c.iface).String(); got != c.want {
			t.Errorf("HostAddr(%d, %d) = %s, want %s", c.id, c.iface, got, c.want)
		}
	}
}

func TestPlanRejectsInvalidTopology(t *testing.T) {
	tb := Testbed()
	tb.Nodes[3].ID = MaxHostID + 1
	if _, err := tb.Plan(); err == nil {
		t.Fatal("plan of a host beyond the ID range accepted")
	}
}
