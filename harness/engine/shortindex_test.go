package engine

import (
	"math/rand/v2"
	"testing"
	"unsafe"
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
					var got *entry
					if sl := x.get(q); sl != nil {
						got = sl.e
					}
					if got != ref[q] {
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

// A slot is what a packet hitting an entry reads and counts, in one cache
// line: its array is a power of two of them, from 8, so no slot straddles
// two lines.
func TestShortIndexSlotIsOneCacheLine(t *testing.T) {
	if n := unsafe.Sizeof(shortSlot{}); n != 64 {
		t.Errorf("a slot is %d bytes", n)
	}
}
