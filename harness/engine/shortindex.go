package engine

import "math/bits"

// shortIndex finds the entries of an exact table by their key as a number
// (tableDecl.short): an open-addressing hash table, linear probing, at
// most half full. A slot holds, beside the key and the entry, what a
// packet hitting the entry needs: its action and data (when they fit) and
// its direct counter, in one cache line. A lookup and a hit then read one
// line of the table's own array (the next too on a collision) where a Go
// map reads its header, a control word and a slot and a hit the entry
// after them: in a switch host, whose many switches leave few of their
// tables in the CPU's caches, those are cache misses per packet.
// The caller synchronises: lookups and counts against changes
// (table.readLock), and slots move only when entries come or go.
type shortIndex struct {
	slots []shortSlot // a power of two of them, or none
	shift uint        // 64 - log2(len(slots))
	n     int
}

type shortSlot struct {
	key uint64
	e   *entry // nil: the slot is free
	// act and args are the entry's call (entry.call) when its data fits
	// in args; act is nil otherwise, and for an indirect table's entry.
	act  *action
	args [3]uint64
	// ctr is the entry's direct counter (entry.ctr is unused).
	ctr counterCell
}

// setCall makes the slot run call, which its entry now holds.
func (s *shortSlot) setCall(call *actionCall) {
	s.act = nil
	if call != nil && call.act.argWords <= len(s.args) {
		s.act = call.act
		copy(s.args[:], call.inline[:call.act.argWords])
	}
}

// home is the slot a key's probe starts at (Fibonacci hashing).
func (x *shortIndex) home(key uint64) int {
	return int((key * 0x9e3779b97f4a7c15) >> x.shift)
}

// get returns the slot of the entry with key, or nil.
func (x *shortIndex) get(key uint64) *shortSlot {
	if len(x.slots) == 0 {
		return nil
	}
	mask := len(x.slots) - 1
	for i := x.home(key); ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.e == nil {
			return nil
		}
		if s.key == key {
			return s
		}
	}
}

// put adds e under key, which the index does not hold, with its call and
// its counts at zero.
func (x *shortIndex) put(key uint64, e *entry) {
	s := x.place(key)
	*s = shortSlot{key: key, e: e}
	s.setCall(e.call.Load())
}

// place returns the free slot where key goes, growing the index first if
// it would be more than half full.
func (x *shortIndex) place(key uint64) *shortSlot {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	mask := len(x.slots) - 1
	i := x.home(key)
	for x.slots[i].e != nil {
		i = (i + 1) & mask
	}
	x.n++
	return &x.slots[i]
}

// grow doubles the slots (8 at first) and places the entries anew, with
// their calls and counts.
func (x *shortIndex) grow() {
	old := x.slots
	size := max(8, 2*len(old))
	x.slots, x.shift, x.n = make([]shortSlot, size), uint(64-bits.TrailingZeros(uint(size))), 0
	for i := range old {
		if old[i].e != nil {
			*x.place(old[i].key) = old[i]
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
