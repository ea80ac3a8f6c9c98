package gradproto

import (
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

func TestPSAddsEachWorkerOnceAndAnswersDuplicatesWithTheResult(t *testing.T) {
	st, err := NewStar(1, 3, 1, 32)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := NewPS(st.Plan)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		p          *Packet
		wantResult bool
	}{
		{contribution(1, 0b011, 5), false},            // partial sum of slots 0, 1
		{contribution(1, 0b110, 100), false},          // overlaps in part: discarded
		{contribution(1, 0b001, 100), false},          // duplicate, fragment incomplete: nothing
		{contribution(st.Plan.PSNode, 0b1, 7), false}, // direct worker
		{contribution(1, 0b100, 1), true},             // last worker: result
		{contribution(1, 0b100, 1), true},             // its resend: result again
	}
	steps[3].p.Flags = 0
	var res *Packet
	for i, s := range steps {
		r, err := ps.Receive(s.p)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if (r != nil) != s.wantResult {
			t.Fatalf("step %d: result %v, want one: %v", i, r, s.wantResult)
		}
		if r != nil {
			res = r
		}
	}
	if res.Values[0] != 5+7+1 || !res.Has(FlagResult) || res.Count != 4 {
		t.Fatalf("result %+v values[0] %d", res.Header, res.Values[0])
	}
	if ps.Overlaps != 1 || ps.Duplicates != 2 {
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
