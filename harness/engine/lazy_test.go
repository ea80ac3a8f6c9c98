package engine_test

import (
	"bytes"
	"testing"

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
