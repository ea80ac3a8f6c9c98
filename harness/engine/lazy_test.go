package engine_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/engine"
)

// Headers the parser leaves unread until something reads them (lazy
// extraction) give their values to whatever reads them - a table's key,
// an action, a hash, a condition in egress, a digest - and one nothing
// reads leaves byte for byte as it came.
func TestHeadersReadAfterTheParserGiveTheirValues(t *testing.T) {
	prog := compileTestdata(t, "lazy.p4")
	var digests []engine.Digest
	sw := engine.NewSwitch(prog, engine.Config{Digest: func(d engine.Digest) { digests = append(digests, d) }})
	for key, action := range map[byte]string{1: "I.from_b", 2: "I.hash_c"} {
		if _, err := sw.AddEntry("I.t", engine.Entry{Match: []engine.Match{engine.Exact([]byte{key})}, Action: action}); err != nil {
			t.Fatal(err)
		}
	}
	// a: k, x; b: q; c: v; d: z; e: w; f: u, u2; payload.
	frame := func(k, z byte) []byte {
		return []byte{k, 0x10, 0xab, 0xcd, 0x01, 0x02, 0x03, 0x04, z, 0xe0, 0xe1, 0xe2, 0xe3,
			0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 'p'}
	}
	with := func(b []byte, x byte) []byte { b = bytes.Clone(b); b[1] = x; return b }
	for _, c := range []struct {
		name    string
		in      []byte
		want    []byte
		digests int
	}{
		{"an action reads b; egress reads d", frame(1, 7), with(frame(1, 7), 0xcd+1), 0},
		{"an action hashes c", frame(2, 0), with(frame(2, 0), 0x04), 0},
		{"a miss leaves every header as it came", frame(9, 0), frame(9, 0), 0},
		{"a digest reads e", frame(3, 0), frame(3, 0), 1},
	} {
		digests = nil
		var out []byte
		if err := sw.Process(0, c.in, func(o engine.Output) { out = bytes.Clone(o.Data) }); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, c.want) {
			t.Errorf("%s: in % x:\n out % x\nwant % x", c.name, c.in, out, c.want)
		}
		if len(digests) != c.digests {
			t.Errorf("%s: %d digests, want %d", c.name, len(digests), c.digests)
		} else if c.digests == 1 && !bytes.Equal(digests[0].Values[0], []byte{0xe0, 0xe1, 0xe2, 0xe3}) {
			t.Errorf("%s: digest %+v, want e.w = e0e1e2e3", c.name, digests[0])
		}
	}
}

// The ingress timestamp is read from the clock only by a packet that
// reads it, at its first read, or as the packet leaves ingress when egress
// may read it: never after the egress timestamp.
func TestIngressTimestampIsReadWhenTheProgramReadsIt(t *testing.T) {
	type packet struct {
		a            byte
		reads        int    // clock reads for the packet
		in, eg, inEg uint64 // ms after the switch started, 0 for unset
	}
	for _, c := range []struct {
		name    string
		defines []string
		packets []packet
	}{
		{"read in ingress only", nil, []packet{
			{0, 1, 0, 1, 0}, // egress_global_timestamp only
			{1, 2, 2, 3, 0},
			{0, 1, 0, 4, 0},
		}},
		{"read in egress too", []string{"EGRESS_READS_INGRESS"}, []packet{
			{0, 2, 0, 2, 0}, // egress may read it: read as the packet leaves ingress
			{1, 2, 3, 4, 0},
			{2, 2, 0, 6, 5},
		}},
	} {
		prog := compileTestdata(t, "timestamps.p4", c.defines...)
		start := time.Unix(1000, 0)
		reads := 0
		clock := func() time.Time { reads++; return start.Add(time.Duration(reads-1) * time.Millisecond) }
		sw := engine.NewSwitch(prog, engine.Config{Now: clock})
		ts := func(b []byte) uint64 {
			return uint64(binary.BigEndian.Uint16(b))<<32 | uint64(binary.BigEndian.Uint32(b[2:]))
		}
		for _, pk := range c.packets {
			before := reads
			var out []byte
			if err := sw.Process(0, append([]byte{pk.a}, make([]byte, 18)...), func(o engine.Output) { out = bytes.Clone(o.Data) }); err != nil {
				t.Fatal(err)
			}
			if len(out) != 19 {
				t.Fatalf("%s, a=%d: output % x, want 19 bytes", c.name, pk.a, out)
			}
			in, eg, inEg := ts(out[1:])/1000, ts(out[7:])/1000, ts(out[13:])/1000
			if reads-before != pk.reads || in != pk.in || eg != pk.eg || inEg != pk.inEg {
				t.Errorf("%s, a=%d: %d clock reads, timestamps (ms) in %d, egress %d, ingress's in egress %d; want %d reads, %d, %d, %d",
					c.name, pk.a, reads-before, in, eg, inEg, pk.reads, pk.in, pk.eg, pk.inEg)
			}
		}
	}
}
