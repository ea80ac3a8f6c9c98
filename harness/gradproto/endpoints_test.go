package gradproto

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func contribution(node uint16, bitmap uint64, v int32) *Packet {
	p := &Packet{Header: Header{Flags: FlagAggregated, Job: 1, Node: node, Bitmap: bitmap, Frag: 4}, Values: make([]int32, 32)}
	for i := range p.Values {
		p.Values[i] = v
	}
	return p
}

func TestPSAddsEachWorkerOnceAndAnswersDuplicatesOnlyToTheirWorkers(t *testing.T) {
	st, err := NewStar(1, 3, 1, 32)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := NewPS(st.Plan)
	if err != nil {
		t.Fatal(err)
	}
	direct := st.Plan.Members[3]
	steps := []struct {
		p *Packet
		// to are the addresses the replies go to.
		to []netip.Addr
	}{
		{contribution(1, 0b011, 5), nil},                                 // partial sum of slots 0, 1
		{contribution(1, 0b110, 100), nil},                               // overlaps in part: discarded
		{contribution(1, 0b001, 100), nil},                               // duplicate, fragment incomplete: nothing
		{contribution(st.Plan.PSNode, 0b1, 7), nil},                      // direct worker
		{contribution(1, 0b100, 1), []netip.Addr{Broadcast}},             // last worker: the result, for the switches to multicast
		{contribution(1, 0b100, 1), []netip.Addr{st.Plan.Members[2].IP}}, // its resend: the result to it alone
		{contribution(1, 0b011, 5), []netip.Addr{st.Plan.Members[0].IP, st.Plan.Members[1].IP}},
		{contribution(st.Plan.PSNode, 0b1, 7), []netip.Addr{direct.IP}},
	}
	steps[3].p.Flags = 0
	steps[7].p.Flags = 0
	var res *Packet
	for i, s := range steps {
		replies, err := ps.Receive(s.p)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		var to []netip.Addr
		for _, r := range replies {
			to = append(to, r.DstIP)
			if res != nil && (!slices.Equal(r.Values, res.Values) || r.Header != res.Header) {
				t.Errorf("step %d: reply %+v %v differs from the result %+v %v", i, r.Header, r.Values, res.Header, res.Values)
			}
			res = r
		}
		if !slices.Equal(to, s.to) {
			t.Fatalf("step %d: replies to %v, want %v", i, to, s.to)
		}
	}
	if res.Values[0] != 5+7+1 || !res.Has(FlagResult) || res.Count != 4 {
		t.Fatalf("result %+v values[0] %d", res.Header, res.Values[0])
	}
	if ps.Overlaps != 1 || ps.Duplicates != 4 {
		t.Fatalf("overlaps %d duplicates %d", ps.Overlaps, ps.Duplicates)
	}
	if !ps.Complete(4) || ps.Complete(5) {
		t.Fatal("Complete reports the wrong fragments")
	}
}

func TestPSRejectsContributionsOutsideThePlan(t *testing.T) {
	st, _ := NewStar(1, 2, 0, 32)
	ps, _ := NewPS(st.Plan)
	for _, tc := range []struct {
		p    *Packet
		want string
	}{
		{contribution(1, 0b100, 1), "names workers node 1 does not have"},
		{func() *Packet { p := contribution(1, 1, 1); p.Flags = 0; return p }(), "reached the PS unaggregated"},
		{func() *Packet { p := contribution(1, 1, 1); p.Job = 9; return p }(), "not a contribution"},
	} {
		if _, err := ps.Receive(tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Receive(%+v) = %v, want %q", tc.p.Header, err, tc.want)
		}
	}
	plan := st.Plan
	plan.Members = append(plan.Members, plan.Members[0])
	if _, err := NewPS(plan); err == nil || !strings.Contains(err.Error(), "taken twice") {
		t.Errorf("duplicate slot: %v", err)
	}
}
