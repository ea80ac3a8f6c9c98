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

// TestPSTakesDirectFragmentsUnderItsAliases: a PS with 70 direct workers
// has them under two node ids, 64 under its own and 6 under an alias (a
// bitmap has 64 slots); it takes each worker's unaggregated fragment under
// either, completes the fragment only when both are full, and refuses a
// fragment for a node id that is not its own.
func TestPSTakesDirectFragmentsUnderItsAliases(t *testing.T) {
	const alias = 9
	st, err := NewStar(1, 0, 64, 32)
	if err != nil {
		t.Fatal(err)
	}
	plan := st.Plan
	plan.PSAliases = []uint16{alias}
	for i := range 6 {
		m := plan.Members[i]
		m.IP = netip.AddrFrom4([4]byte{10, 0, 2, byte(i + 1)})
		m.Node, m.Slot = alias, uint8(i)
		plan.Members = append(plan.Members, m)
	}
	ps, err := NewPS(plan)
	if err != nil {
		t.Fatal(err)
	}
	var res []*Packet
	for i, m := range plan.Members {
		p := contribution(m.Node, 1<<m.Slot, int32(i))
		p.Flags = 0
		if res != nil {
			t.Fatalf("the result came before member %d's fragment", i)
		}
		if res, err = ps.Receive(p); err != nil {
			t.Fatalf("member %d (node %d slot %d): %v", i, m.Node, m.Slot, err)
		}
	}
	want := int32(69 * 70 / 2)
	if len(res) != 1 || res[0].Values[0] != want || res[0].Count != 70 || res[0].Node != plan.PSNode {
		t.Fatalf("replies %v, want one result with count 70 and sums %d", res, want)
	}
	stray := contribution(alias+1, 1, 1)
	stray.Flags = 0
	if _, err := ps.Receive(stray); err == nil || !strings.Contains(err.Error(), "reached the PS unaggregated") {
		t.Errorf("a fragment for node %d, not the PS's: %v", alias+1, err)
	}
	plan.PSAliases = []uint16{alias, plan.PSNode}
	if _, err := NewPS(plan); err == nil || !strings.Contains(err.Error(), "already the PS's") {
		t.Errorf("an alias that is the PS's own id: %v", err)
	}
}
