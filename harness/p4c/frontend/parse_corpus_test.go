package frontend

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/grid-ina/grid/harness/p4c/frontend/check"
)

// corpusDir returns <repo root>/../shared/p4c-conformance/programs or
// skips the test when it is absent.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir := corpusDirIfPresent()
	if dir == "" {
		t.Skip("conformance corpus absent: <repo>/../shared/p4c-conformance/programs not found")
	}
	return dir
}

// corpusPrograms lists the test programs (the three include-only helper
// files are not programs on their own).
func corpusPrograms(t testing.TB) []string {
	dir := corpusDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.p4"))
	if err != nil {
		t.Fatal(err)
	}
	var progs []string
	for _, f := range files {
		switch filepath.Base(f) {
		case "arith-skeleton.p4", "arith-inline-skeleton.p4", "ml-headers.p4":
			continue
		}
		progs = append(progs, f)
	}
	return progs
}

func TestEveryCorpusProgramParses(t *testing.T) {
	progs := corpusPrograms(t)
	for _, f := range progs {
		if _, err := ParseFile(f, Options{}); err != nil {
			t.Errorf("%s:\n%v", filepath.Base(f), err)
		}
	}
	t.Logf("%d corpus programs parsed", len(progs))
}

func TestEveryCorpusProgramChecksOrIsPreciselyUnsupported(t *testing.T) {
	progs := corpusPrograms(t)
	clean, unsupported := 0, 0
	for _, f := range progs {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, diags := Compile(f, src, Options{})
		switch {
		case !diags.HasErrors():
			clean++
		case diags.OnlyUnsupported():
			unsupported++
			t.Logf("%s: %s", filepath.Base(f), diags.Diags[0])
		default:
			t.Errorf("%s:\n%v", filepath.Base(f), diags)
		}
	}
	t.Logf("%d of %d corpus programs check cleanly, %d are reported unsupported", clean, len(progs), unsupported)
}

func TestCorpusChecksWithHeaderUnionsAndVarbitEnabled(t *testing.T) {
	progs := corpusPrograms(t)
	opts := Options{Features: check.Features{HeaderUnions: true, Varbit: true}}
	clean := 0
	for _, f := range progs {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, diags := Compile(f, src, opts)
		switch {
		case !diags.HasErrors():
			clean++
		case diags.OnlyUnsupported():
			t.Logf("%s: %s", filepath.Base(f), diags.Diags[0])
		default:
			t.Errorf("%s:\n%v", filepath.Base(f), diags)
		}
	}
	t.Logf("with header unions and varbit enabled, %d of %d corpus programs check cleanly", clean, len(progs))
}
