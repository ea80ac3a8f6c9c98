package frontend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/p4c/frontend/diag"
)

// TestNegativeProgramsReportTheExpectedError compiles every program in
// testdata/errors (one per error class). The first line of each says
// `// expect: LINE:COL: SEVERITY: MESSAGE`; that must be the first
// error-level diagnostic, located in the test file itself, and it must be
// printed with the source line and a caret.
func TestNegativeProgramsReportTheExpectedError(t *testing.T) {
	files, err := filepath.Glob("testdata/errors/*.p4")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if filepath.Base(f) == "skeleton.p4" {
			continue
		}
		n++
		t.Run(strings.TrimSuffix(filepath.Base(f), ".p4"), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(src), "\n")
			want, ok := strings.CutPrefix(first, "// expect: ")
			if !ok {
				t.Fatalf("%s: first line must be // expect: LINE:COL: SEVERITY: MESSAGE", f)
			}
			_, diags := Compile(f, src, Options{})
			var firstErr *diag.Diagnostic
			for _, d := range diags.Diags {
				if d.Severity != diag.Warning {
					firstErr = d
					break
				}
			}
			if firstErr == nil {
				t.Fatalf("no error reported; want %s", want)
			}
			if got := firstErr.String(); got != f+":"+want {
				t.Errorf("first error:\n got  %s\n want %s:%s\nall diagnostics:\n%v", got, f, want, diags)
			}
			formatted := firstErr.Format()
			if lines := strings.Split(formatted, "\n"); len(lines) != 3 || !strings.HasSuffix(lines[2], "^") {
				t.Errorf("diagnostic not shown with source line and caret:\n%s", formatted)
			}
			if diags.ErrorCount() > 3 {
				t.Errorf("one mistake produced %d errors (cascade):\n%v", diags.ErrorCount(), diags)
			}
		})
	}
	if n < 20 {
		t.Errorf("only %d negative tests found", n)
	}
}

func TestIndependentErrorsAreAllReported(t *testing.T) {
	_, err := Load("testdata/several-errors.p4", Options{})
	if err == nil {
		t.Fatal("no error")
	}
	d := err.(*diag.List)
	want := []string{
		"testdata/several-errors.p4:6:26: error: prt: declaration not found",
		"testdata/several-errors.p4:9:24: error: hdr.ipv4.totalLen has type bit<16> but bit<8> is expected for hdr.ipv4.ttl; widths and signedness must match (add a cast)",
		"testdata/several-errors.p4:10:9: error: set_port: expected 1 arguments, got 2",
	}
	if len(d.Diags) != len(want) {
		t.Fatalf("got %d diagnostics, want %d:\n%v", len(d.Diags), len(want), d)
	}
	for i, w := range want {
		if got := d.Diags[i].String(); got != w {
			t.Errorf("diagnostic %d:\n got  %s\n want %s", i, got, w)
		}
	}
}
