package engine

import "math/bits"

// shortIndex finds the entries of an exact table by their key as a number
// (tableDecl.short): an open-addressing hash table, linear probing, at
// most half full. A lookup reads one 16-byte slot of the table's own array
// (and the next on a collision) where a Go map reads its header, a control
// word and a slot: in a switch host, whose many switches leave few of
// their tables in the CPU's caches, those are cache misses per packet.
// The caller synchronises: lookups against changes (table.readLock).
type shortIndex struct {
	slots []shortSlot // a power of two of them, or none
	shift uint        // 64 - log2(len(slots))
	n     int
}

type shortSlot struct {
	key uint64
	e   *entry // nil: the slot is free
}

// home is the slot a key's probe starts at (Fibonacci hashing).
func (x *shortIndex) home(key uint64) int {
	return int((key * 0x9e3779b97f4a7c15) >> x.shift)
}

// get returns the entry with key, or nil.
func (x *shortIndex) get(key uint64) *entry {
	if len(x.slots) == 0 {
		return nil
	}
	mask := len(x.slots) - 1
	for i := x.home(key); ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.e == nil || s.key == key {
			return s.e
		}
	}
}

// put adds e under key, which the index does not hold.
func (x *shortIndex) put(key uint64, e *entry) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	mask := len(x.slots) - 1
	i := x.home(key)
	for x.slots[i].e != nil {
		i = (i + 1) & mask
	}
	x.slots[i] = shortSlot{key, e}
	x.n++
}

// grow doubles the slots (8 at first) and places the entries anew.
func (x *shortIndex) grow() {
	old := x.slots
	size := max(8, 2*len(old))
	x.slots, x.shift, x.n = make([]shortSlot, size), uint(64-bits.TrailingZeros(uint(size))), 0
	for _, s := range old {
		if s.e != nil {
			x.put(s.key, s.e)
		}
	}
}

// remove deletes key's entry, if the index holds it, moving back the
// entries whose probe passed its slot so that no probe stops short.
func (x *shortIndex) remove(key uint64) {
	if len(x.slots) == 0 {
		return
	}
	mask := len(x.slots) - 1
	i := x.home(key)
	for x.slots[i].key != key {
		if x.slots[i].e == nil {
			return
		}
		i = (i + 1) & mask
	}
	if x.slots[i].e == nil {
		return
	}
	x.n--
	for {
		x.slots[i] = shortSlot{}
		j := i
		for {
			j = (j + 1) & mask
			if x.slots[j].e == nil {
				return
			}
			// The entry at j stays unless its home lies cyclically
			// outside (i, j]: then its probe passes the freed slot i.
			h := x.home(x.slots[j].key)
			if i <= j && i < h && h <= j || i > j && (i < h || h <= j) {
				continue
			}
			x.slots[i] = x.slots[j]
			i = j
			break
		}
	}
}
