package gradproto

import (
	"net/netip"
	"strings"
	"testing"
)

func TestTheScheduleSplitsAnyRunOfFragmentsCloseToTheShares(t *testing.T) {
	p := &Plan{Classes: []float64{0.923, 1}}
	for _, run := range []struct{ first, n uint32 }{{0, 64}, {1000, 1024}, {1 << 31, 4096}} {
		second := 0
		for f := run.first; f < run.first+run.n; f++ {
			if p.Class(f) == 1 {
				second++
			}
		}
		want := 0.077 * float64(run.n)
		if d := float64(second) - want; d > 2 || d < -2 {
			t.Errorf("fragments %d..%d: %d in the 7.7%% class, want %.1f within 2", run.first, run.first+run.n-1, second, want)
		}
	}
}

// splitPlan: two workers, the first split 1:1 between node 1 and the PS,
// the second always at node 1.
func splitPlan() Plan {
	return Plan{Job: 1, PSIP: netip.MustParseAddr("10.0.0.9"), Values: 1, Classes: []float64{0.5, 1},
		Members: []Member{
			{IP: netip.MustParseAddr("10.0.0.1"), Placements: []Placement{{Node: 1, Slot: 0}, {Node: 0, Slot: 0}}},
			{IP: netip.MustParseAddr("10.0.0.2"), Placements: []Placement{{Node: 1, Slot: 1}, {Node: 7, Slot: 0}}},
		}}
}

func TestAPSCompletesEachFragmentWithTheWorkersOfItsClass(t *testing.T) {
	p := splitPlan()
	exp, err := p.Expected()
	if err != nil {
		t.Fatal(err)
	}
	if len(exp) != 2 || exp[0][1] != 0b11 || exp[1][0] != 0b1 || exp[1][7] != 0b1 {
		t.Fatalf("expected per class %v", exp)
	}
	ps, err := NewPS(p)
	if err != nil {
		t.Fatal(err)
	}
	var frag uint32
	for p.Class(frag) != 1 {
		frag++
	}
	// Class 1: worker 0 straight to the PS, worker 1 through node 7.
	out, err := ps.Receive(&Packet{Header: Header{Job: 1, Node: 0, Frag: frag, Bitmap: 1}, Values: []int32{2}})
	if err != nil || out != nil {
		t.Fatalf("one of two contributions: %v %v", out, err)
	}
	out, err = ps.Receive(&Packet{Header: Header{Job: 1, Node: 7, Flags: FlagAggregated, Frag: frag, Bitmap: 1}, Values: []int32{3}})
	if err != nil || len(out) != 1 || out[0].Values[0] != 5 {
		t.Fatalf("both contributions: result %v, err %v", out, err)
	}
	// The same fragment's class-0 node is not where this fragment goes.
	if _, err := ps.Receive(&Packet{Header: Header{Job: 1, Node: 1, Flags: FlagAggregated, Frag: frag + 1000, Bitmap: 0b100}, Values: []int32{1}}); err == nil || !strings.Contains(err.Error(), "names workers") {
		t.Errorf("a bitmap no worker of the class has: %v", err)
	}
	w := NewWorker(&p, 0, map[uint32][]int32{frag: {2}})
	if pkt := w.Originals()[0]; pkt.Node != 0 || pkt.Bitmap != 1 {
		t.Errorf("worker 0's fragment %d of class 1 goes to node %d bitmap %#x, want the PS (0) in slot 0", frag, pkt.Node, pkt.Bitmap)
	}
}

func TestClassesThatDoNotCoverTheFragmentsAreRefused(t *testing.T) {
	for _, classes := range [][]float64{{0.5}, {0.5, 0.4, 1}, {0, 1}} {
		p := splitPlan()
		p.Classes = classes
		if _, err := p.Expected(); err == nil {
			t.Errorf("classes %v accepted", classes)
		}
	}
	p := splitPlan()
	p.Members[1].Placements = p.Members[1].Placements[:1]
	if _, err := p.Expected(); err == nil || !strings.Contains(err.Error(), "member 1: 1 placements for 2 classes") {
		t.Errorf("a member without a placement per class: %v", err)
	}
}
