package engine

import (
	"math/rand/v2"
	"testing"
)

// The short index finds exactly what a Go map holds through any sequence
// of additions and removals, with keys that collide in their home slots.
func TestShortIndexHoldsWhatAMapHolds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, keys := range []uint64{4, 40, 5000} {
		var x shortIndex
		ref := map[uint64]*entry{}
		for step := range 20000 {
			k := r.Uint64N(keys) * 0x10000 // multiples: many share a home
			if _, ok := ref[k]; ok && r.IntN(2) == 0 {
				x.remove(k)
				delete(ref, k)
			} else if !ok {
				e := &entry{}
				e.priority = int32(step)
				x.put(k, e)
				ref[k] = e
			}
			if step%97 == 0 || keys == 4 {
				for q := range keys + 3 {
					q *= 0x10000
					if got := x.get(q); got != ref[q] {
						t.Fatalf("%d keys, step %d: get(%#x) = %p, want %p", keys, step, q, got, ref[q])
					}
				}
			}
		}
		if x.n != len(ref) || 2*x.n > len(x.slots) {
			t.Errorf("%d keys: the index counts %d in %d slots, the map holds %d", keys, x.n, len(x.slots), len(ref))
		}
		x.remove(12345) // never added: nothing changes
		if x.n != len(ref) {
			t.Errorf("removing a missing key changed the count")
		}
	}
	var empty shortIndex
	if empty.get(0) != nil {
		t.Error("an empty index found key 0")
	}
	empty.remove(0)
}
