package engine

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// A simple header written 8 bytes at a time (header.chunks) comes out as
// writing its fields one by one gives, whatever its fields' widths and
// wherever they cross a chunk's edge; bits of a value beyond its field's
// width do not spill into its neighbours. Read back a field at a time
// from 8 bytes at its first byte (header.loads, when every field lies
// within them), 8 bytes at a time where the packet ends before the last
// such load, or field by field where it ends inside the last chunk, it
// gives each field's value.
func TestChunkedHeadersEmitWhatFieldByFieldWritesAndReadBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		var simple []fieldPos
		off := 0
		for len(simple) == 0 || off%8 != 0 || rng.IntN(3) > 0 && off < 400 {
			w := 1 + rng.IntN(64)
			if rng.IntN(4) == 0 {
				w = 8 * (1 + rng.IntN(8))
			}
			simple = append(simple, fieldPos{slot: len(simple), off: off, width: w})
			off += w
		}
		h := &header{simple: simple, chunks: headerChunks(simple), chunkBytes: (off + 63) / 64 * 8}
		h.loads, h.loadBytes = fieldLoads(simple)
		k := &pkt{f: make([]uint64, len(simple))}
		want := make([]byte, off/8+8)
		for i, fp := range simple {
			k.f[i] = rng.Uint64() // wider than the field: emit masks it
			putBits(want, fp.off, fp.width, k.f[i]&mask64(fp.width))
		}
		got := bytes.Repeat([]byte{0xee}, off/8+8)
		k.emitSimple(h, got)
		if !bytes.Equal(got[:off/8], want[:off/8]) {
			t.Fatalf("trial %d, fields %+v:\n got % x\nwant % x", trial, simple, got[:off/8], want[:off/8])
		}
		for _, data := range [][]byte{got, got[:h.chunkBytes], got[:off/8]} {
			back := &pkt{f: make([]uint64, len(simple))}
			for i := range back.f {
				back.f[i] = rng.Uint64() // what the last packet left
			}
			back.extractSimple(h, data)
			for i, fp := range simple {
				if want := k.f[i] & mask64(fp.width); back.f[i] != want {
					t.Fatalf("trial %d, %d bytes, fields %+v: field %d read back %#x, want %#x", trial, len(data), simple, i, back.f[i], want)
				}
			}
		}
	}
}

// What a packet reads of its switch (its program, tables, counters, lock
// and the packet's part of its Config) lies in the switch's first two
// cache lines, and a switch is a whole number of lines, so that it starts
// at a line's start.
func TestAPacketReadsTwoCacheLinesOfItsSwitch(t *testing.T) {
	var s Switch
	if n := unsafe.Sizeof(s); n%64 != 0 {
		t.Errorf("a switch is %d bytes", n)
	}
	for name, end := range map[string]uintptr{
		"prog":                unsafe.Offsetof(s.prog) + unsafe.Sizeof(s.prog),
		"tables":              unsafe.Offsetof(s.tables) + unsafe.Sizeof(s.tables),
		"counters":            unsafe.Offsetof(s.counters) + unsafe.Sizeof(s.counters),
		"serial":              unsafe.Offsetof(s.serial) + unsafe.Sizeof(s.serial),
		"cfg up to MaxPasses": unsafe.Offsetof(s.cfg) + unsafe.Offsetof(s.cfg.MaxPasses) + unsafe.Sizeof(s.cfg.MaxPasses),
	} {
		if end > 128 {
			t.Errorf("%s ends at byte %d of the switch", name, end)
		}
	}
}
