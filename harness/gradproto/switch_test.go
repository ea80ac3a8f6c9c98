package gradproto

import (
	"bytes"
	"math"
	"testing"
)

// starWith returns a star and its model switch.
func starWith(t *testing.T, fanIn, direct int) (*Star, *Switch) {
	t.Helper()
	st, err := NewStar(7, fanIn, direct, 32)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := NewSwitch(st.Config, 32, DefaultUnits)
	if err != nil {
		t.Fatal(err)
	}
	return st, sw
}

func fragment(st *Star, member int, frag uint32, flags uint8, vals func(i int) int32) *Packet {
	w := NewWorker(&st.Plan, member, map[uint32][]int32{frag: nil})
	p := w.packet(frag, flags)
	p.Values = make([]int32, st.Plan.Values)
	for i := range p.Values {
		p.Values[i] = vals(i)
	}
	return p
}

func send(t *testing.T, sw *Switch, st *Star, p *Packet, member int) []*Packet {
	t.Helper()
	var out []*Packet
	for _, o := range sw.Process(st.WorkerPort(member), p.Marshal()) {
		q, err := Parse(o.Frame, 32)
		if err != nil {
			t.Fatalf("output on port %d: %v", o.Port, err)
		}
		if gotIP := q.DstIP; o.Port == StarPSPort && gotIP != st.Plan.PSIP {
			t.Fatalf("frame to %v left on the PS port", gotIP)
		}
		out = append(out, q)
	}
	return out
}

func TestModelAggregatesFanInWorkersIntoOnePacketWithExactSums(t *testing.T) {
	st, sw := starWith(t, 5, 0)
	var emitted []*Packet
	for m := 0; m < 5; m++ {
		emitted = append(emitted, send(t, sw, st, fragment(st, m, 42, 0, func(i int) int32 { return int32((m + 1) * (i - 3)) }), m)...)
		if m < 4 && len(emitted) != 0 {
			t.Fatalf("switch sent %d packets after %d of 5 fragments", len(emitted), m+1)
		}
	}
	if len(emitted) != 1 {
		t.Fatalf("%d packets after the fifth fragment, want 1", len(emitted))
	}
	p := emitted[0]
	if p.Count != 5 || p.Bitmap != 0x1f || !p.Has(FlagAggregated) || p.Node != st.SwitchNode {
		t.Fatalf("partial sum header %+v", p.Header)
	}
	for i, v := range p.Values {
		if want := int32(15 * (i - 3)); v != want {
			t.Fatalf("value %d = %d, want %d", i, v, want)
		}
	}
	if u := sw.Units()[UnitIndex(7, 42, DefaultUnits)]; u.State != UnitDone {
		t.Fatalf("unit state %d after completion, want done", u.State)
	}
	// The unit is reusable: the same fragment id in a new round aggregates again.
	if st := sw.Stats[7]; st[EvEmitted] != 1 || st[EvAbsorbed] != 4 || st[EvReceived] != 5 {
		t.Fatalf("stats %v", st)
	}
}

func TestModelForwardsFragmentsForOtherNodesByTheirRoute(t *testing.T) {
	st, sw := starWith(t, 2, 1)
	in := fragment(st, 2, 9, 0, func(i int) int32 { return int32(i) })
	out := sw.Process(st.WorkerPort(2), in.Marshal())
	if len(out) != 1 || out[0].Port != StarPSPort {
		t.Fatalf("direct fragment went to %v", out)
	}
	want := in.Marshal()
	h := HostMAC(0)
	copy(want[0:6], h[:])
	m := SwitchPortMAC(StarPSPort)
	copy(want[6:12], m[:])
	want[offIP+8]--
	SetIPv4Checksum(want[offIP:offUDP])
	if !bytes.Equal(out[0].Frame, want) {
		t.Fatalf("forwarded frame changed beyond MACs, TTL and checksum:\n%x\n%x", out[0].Frame, want)
	}
}

func TestModelCollisionDropsFragmentAndSignalsTheWorker(t *testing.T) {
	st, sw := starWith(t, 3, 0)
	other := CollidingFragment(7, 1, 7, DefaultUnits)
	if out := send(t, sw, st, fragment(st, 0, 1, 0, func(int) int32 { return 1 }), 0); len(out) != 0 {
		t.Fatal("first fragment not absorbed")
	}
	out := send(t, sw, st, fragment(st, 1, other, 0, func(int) int32 { return 1 }), 1)
	if len(out) != 1 {
		t.Fatalf("%d packets for a collision", len(out))
	}
	c := out[0]
	if !c.Has(FlagCongestion) || c.ECN != ECNCongestion || c.Values != nil || c.DstIP != st.Plan.Members[1].IP || c.Frag != other {
		t.Fatalf("control packet %+v", c)
	}
}

func TestModelIgnoresDuplicates(t *testing.T) {
	st, sw := starWith(t, 2, 0)
	f := fragment(st, 0, 5, 0, func(int) int32 { return 10 })
	send(t, sw, st, f, 0)
	if out := send(t, sw, st, f, 0); len(out) != 0 {
		t.Fatalf("duplicate produced %v", out)
	}
	out := send(t, sw, st, fragment(st, 1, 5, 0, func(int) int32 { return 1 }), 1)
	if len(out) != 1 || out[0].Values[0] != 11 || out[0].Count != 2 {
		t.Fatalf("after a duplicate: %+v", out)
	}
	if out := send(t, sw, st, f, 0); len(out) != 0 {
		t.Fatalf("duplicate after completion produced %v", out)
	}
	if sw.Stats[7][EvDuplicate] != 2 {
		t.Fatalf("duplicates counted %d", sw.Stats[7][EvDuplicate])
	}
}

func TestModelOverflowSendsThePartialEarlyAndKeepsCounting(t *testing.T) {
	st, sw := starWith(t, 3, 0)
	big := func(int) int32 { return math.MaxInt32 - 5 }
	send(t, sw, st, fragment(st, 0, 3, 0, big), 0)
	out := send(t, sw, st, fragment(st, 1, 3, 0, big), 1)
	if len(out) != 1 || !out[0].Has(FlagOverflow|FlagAggregated) || out[0].Bitmap != 1 || out[0].Values[0] != math.MaxInt32-5 {
		t.Fatalf("overflow output %+v", out)
	}
	out = send(t, sw, st, fragment(st, 2, 3, 0, func(int) int32 { return -10 }), 2)
	if len(out) != 1 || out[0].Bitmap != 6 || out[0].Count != 2 || out[0].Values[0] != math.MaxInt32-15 {
		t.Fatalf("completion after overflow %+v", out)
	}
}

func TestModelResendCompletesTheUnitOrPassesThrough(t *testing.T) {
	st, sw := starWith(t, 3, 0)
	one := func(int) int32 { return 1 }
	send(t, sw, st, fragment(st, 0, 8, 0, one), 0)
	// Worker 1 lost its original; its resend joins the unit and flushes it.
	out := send(t, sw, st, fragment(st, 1, 8, FlagResend, one), 1)
	if len(out) != 1 || out[0].Bitmap != 3 || out[0].Values[0] != 2 {
		t.Fatalf("resend flush %+v", out)
	}
	// Worker 2's late original finds the unit done: passed to the PS alone.
	out = send(t, sw, st, fragment(st, 2, 8, 0, one), 2)
	if len(out) != 1 || out[0].Bitmap != 4 || !out[0].Has(FlagAggregated) {
		t.Fatalf("late original %+v", out)
	}
	// A resend for a fragment with no unit goes straight to the PS.
	out = send(t, sw, st, fragment(st, 2, 99, FlagResend, one), 2)
	if len(out) != 1 || out[0].Bitmap != 4 || !out[0].Has(FlagAggregated|FlagResend) {
		t.Fatalf("resend pass-through %+v", out)
	}
	if u := sw.Units()[UnitIndex(7, 99, DefaultUnits)]; u.State != UnitEmpty {
		t.Fatal("a resend allocated a unit")
	}
}

func TestModelCapacityMeterTurnsExcessIntoControlPackets(t *testing.T) {
	st, _ := starWith(t, 4, 0)
	st.Config.Capacity = &Capacity{PacketsPerSecond: 1e-6, Burst: 2}
	sw, err := NewSwitch(st.Config, 32, DefaultUnits)
	if err != nil {
		t.Fatal(err)
	}
	one := func(int) int32 { return 1 }
	send(t, sw, st, fragment(st, 0, 1, 0, one), 0)
	send(t, sw, st, fragment(st, 1, 1, 0, one), 1)
	out := send(t, sw, st, fragment(st, 2, 1, 0, one), 2)
	if len(out) != 1 || !out[0].Has(FlagCongestion) || out[0].ECN != ECNCongestion {
		t.Fatalf("third fragment over a burst of 2: %+v", out)
	}
	if sw.Stats[7][EvCapacity] != 1 {
		t.Fatal("capacity excess not counted")
	}
}

func TestModelMulticastsResultsToEveryWorkerWithItsAddress(t *testing.T) {
	st, sw := starWith(t, 3, 1)
	res := &Packet{DstMAC: st.Plan.Gateway, SrcIP: st.Plan.PSIP, DstIP: Broadcast, TTL: 64, SrcPort: UDPPort, DstPort: UDPPort,
		Header: Header{Version: Version, Flags: FlagResult, Job: 7, Node: st.Plan.PSNode, Count: 4, Frag: 1}, Values: make([]int32, 32)}
	outs := sw.Process(StarPSPort, res.Marshal())
	if len(outs) != 4 {
		t.Fatalf("%d replicas, want 4", len(outs))
	}
	for i, o := range outs {
		p, err := Parse(o.Frame, 32)
		if err != nil {
			t.Fatal(err)
		}
		m := st.Plan.Members[o.Port-1]
		if p.DstIP != m.IP || p.DstMAC != m.MAC || p.SrcMAC != SwitchPortMAC(int(o.Port)) || IPv4Checksum(o.Frame[offIP:offUDP]) != uint16(o.Frame[offIP+10])<<8|uint16(o.Frame[offIP+11]) {
			t.Fatalf("replica %d on port %d: %+v", i, o.Port, p)
		}
	}
}

func TestModelRoutesAResultAddressedToOneWorkerToItAlone(t *testing.T) {
	st, sw := starWith(t, 3, 1)
	m := st.Plan.Members[2]
	res := &Packet{DstMAC: st.Plan.Gateway, SrcIP: st.Plan.PSIP, DstIP: m.IP, TTL: 64, SrcPort: UDPPort, DstPort: UDPPort,
		Header: Header{Version: Version, Flags: FlagResult, Job: 7, Node: st.Plan.PSNode, Count: 4, Frag: 1}, Values: make([]int32, 32)}
	outs := sw.Process(StarPSPort, res.Marshal())
	if len(outs) != 1 || outs[0].Port != st.WorkerPort(2) {
		t.Fatalf("outputs %+v, want one on worker 2's port %d", outs, st.WorkerPort(2))
	}
	p, err := Parse(outs[0].Frame, 32)
	if err != nil {
		t.Fatal(err)
	}
	if p.DstIP != m.IP || p.DstMAC != m.MAC || p.TTL != 63 || !p.Has(FlagResult) {
		t.Fatalf("routed result %+v", p)
	}
}

func TestCapacityForConvertsARateIntoFragmentsPerSecond(t *testing.T) {
	// 190-byte frames: 1.52 Mbit/s is 1000 fragments per second.
	c := CapacityFor(1.52e6, 32, 16)
	if math.Abs(c.PacketsPerSecond-1000) > 1e-9 || c.Burst != 16 {
		t.Fatalf("capacity %+v", c)
	}
}
