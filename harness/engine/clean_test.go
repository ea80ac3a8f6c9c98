package engine_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/p4c"
)

// A header written after the parser extracted it leaves with what was
// written, wherever the write happened (a parser assignment, a register
// read, an assignment to a stack element, a table's action), and one only
// read leaves as it came; the frame given to Process is not changed.
func TestRewrittenHeadersLeaveRewrittenAndOthersAsTheyCame(t *testing.T) {
	prog := compileTestdata(t, "rewrites.p4")
	sw := engine.NewSwitch(prog, engine.Config{})
	if _, err := sw.AddEntry("I.t", engine.Entry{Match: []engine.Match{engine.Exact([]byte{0x20})}, Action: "I.set_c",
		Args: [][]byte{{0xbe, 0xef}}}); err != nil {
		t.Fatal(err)
	}
	// h: a, b, c, d; st[0], st[1]; pass: w0, w1; payload.
	in := []byte{0x10, 0xff, 0x12, 0x34, 1, 2, 3, 4, 0x55, 0x66, 0xa0, 0xa1, 0xa2, 0xa3, 0xb0, 0xb1, 0xb2, 0xb3, 'p'}
	want := []byte{0x10, 0xff, 0x12, 0x34, 0, 0, 0, 0, 0x56, 0x10, 0xa0, 0xa1, 0xa2, 0xa3, 0xb0, 0xb1, 0xb2, 0xb3, 'p'}
	for _, c := range []struct {
		in, want []byte
	}{
		{in, want},
		// a = 0x20 also hits the table, which rewrites c.
		{append([]byte{0x20}, in[1:]...), append([]byte{0x20, 0xff, 0xbe, 0xef, 0, 0, 0, 0, 0x56, 0x20}, want[10:]...)},
	} {
		var out []byte
		frame := bytes.Clone(c.in)
		if err := sw.Process(0, frame, func(o engine.Output) { out = bytes.Clone(o.Data) }); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, c.want) {
			t.Errorf("in % x:\n out % x\nwant % x", c.in, out, c.want)
		}
		if !bytes.Equal(frame, c.in) {
			t.Errorf("in % x: Process changed its frame to % x", c.in, frame)
		}
	}
}

// compileTestdata compiles testdata/name with grid's compiler, the macros
// defines named defined, and loads it.
func compileTestdata(t testing.TB, name string, defines ...string) *engine.Program {
	t.Helper()
	opts := p4c.Options{Defines: map[string]string{}}
	for _, d := range defines {
		opts.Defines[d] = "1"
	}
	res, err := p4c.Compile(filepath.Join("testdata", name), opts)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := engine.Load(res.JSON)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}
