package topo

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary files to the decoder: it must never panic, must
// reject with a located *Error, and what it accepts must be valid and survive
// Marshal and Parse unchanged.
func FuzzParse(f *testing.F) {
	f.Add(withLines(nil))
	f.Add(withLine(10, `  - {endpoints: ["s1:p2", "s9:p2"]}`))
	f.Add(withLine(4, "  - {name: s2, kind: switch, kind: host}"))
	f.Add(withLine(8, `  - {endpoints: ["s1:p1", "h1:eth0"], bandwidth: 10}`))
	f.Add([]byte("nodes:\n  - {name: s1, kind: switch}\n  - {name: h1, kind: host}\nlinks:\n  - {endpoints: [s1:p1, h1:eth0]}\n---\n"))
	f.Add([]byte("name: &a x\nnodes: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tp, err := Parse(data, "f.yaml")
		if err != nil {
			var located *Error
			if !errors.As(err, &located) || located.Source != "f.yaml" {
				t.Fatalf("error %q is not a located *Error", err)
			}
			return
		}
		if err := tp.Validate(); err != nil {
			t.Fatalf("accepted, then invalid: %v", err)
		}
		out, err := Marshal(tp)
		if err != nil {
			t.Fatalf("accepted, then cannot marshal: %v", err)
		}
		again, err := Parse(out, "f.yaml")
		if err != nil {
			t.Fatalf("marshalled file does not parse: %v\n%s", err, out)
		}
		out2, err := Marshal(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("marshal, parse, marshal changed the file (%v):\n%s\n---\n%s", err, out, out2)
		}
	})
}
