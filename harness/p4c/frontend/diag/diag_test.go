package diag

import (
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

func TestFormatShowsSourceLineAndCaret(t *testing.T) {
	l := &List{Sources: Sources{"a.p4": []byte("line one\n\tx = y;\nline three\n")}}
	l.Errorf(ast.Pos{File: "a.p4", Line: 2, Col: 6}, "%s: undefined name", "y")
	want := "a.p4:2:6: error: y: undefined name\n\tx = y;\n\t    ^"
	if got := l.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if !l.HasErrors() || l.OnlyUnsupported() {
		t.Error("an error diagnostic must count as error, not unsupported")
	}
}

func TestCaretUnderlinesTheWordAtTheColumn(t *testing.T) {
	d := &Diagnostic{Pos: ast.Pos{File: "a.p4", Line: 1, Col: 5}, Msg: "m", Line: "x = nhop_port + 1;"}
	want := "a.p4:1:5: error: m\nx = nhop_port + 1;\n    ^^^^^^^^^"
	if got := d.Format(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	d.Pos.Col = 15 // the operator: a single caret
	if got := d.Format(); !strings.HasSuffix(got, "\n              ^") {
		t.Errorf("operator underlined wrongly:\n%s", got)
	}
	d.Line, d.Pos.Col = "    hdr.ipv4.ttl[7:0] = counts.read(n, (bit<32>)i) + x;", 5
	if got := d.Format(); !strings.HasSuffix(got, "\n    ^^^^^^^^^^^^^^^^^") {
		t.Errorf("access path underlined wrongly:\n%s", got)
	}
	d.Pos.Col = 25
	if got := d.Format(); !strings.HasSuffix(got, "\n"+strings.Repeat(" ", 24)+strings.Repeat("^", 26)) {
		t.Errorf("call underlined wrongly:\n%s", got)
	}
}

func TestWarningsDoNotFailAndUnsupportedDoes(t *testing.T) {
	l := &List{}
	l.Warnf(ast.Pos{Line: 1, Col: 1}, "w")
	if l.Err() != nil {
		t.Fatal("warnings alone must not be an error")
	}
	l.Unsupportedf(ast.Pos{File: "b.p4", Line: 3, Col: 1}, "header unions")
	if l.Err() == nil || !l.OnlyUnsupported() {
		t.Fatal("unsupported must fail the compilation and be recognised as such")
	}
	if got := l.Diags[1].String(); got != "b.p4:3:1: unsupported: header unions" {
		t.Errorf("got %q", got)
	}
}
