package frontend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/p4c/frontend/check"
)

// FuzzFrontend feeds arbitrary text through the preprocessor, parser and
// checker: none of them may panic (the checker turns a panic into an
// "internal compiler error" diagnostic, which counts as a failure here).
// Seeds: the negative tests and, when present, the conformance corpus.
//
//	go test ./harness/p4c/frontend -run '^$' -fuzz FuzzFrontend -fuzztime 60s
func FuzzFrontend(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/errors/*.p4")
	if dir := corpusDirIfPresent(); dir != "" {
		more, _ := filepath.Glob(filepath.Join(dir, "*.p4"))
		seeds = append(seeds, more...)
	}
	for _, s := range seeds {
		if src, err := os.ReadFile(s); err == nil {
			f.Add(src)
		}
	}
	f.Add([]byte("#define F(x) F(x) + x\nconst bit<8> c = F(1);"))
	f.Add([]byte("control c(inout bit<8> x) { apply { x = x >> 1 >> 2; } }"))
	opts := Options{Features: check.Features{HeaderUnions: true, Varbit: true}, MaxErrors: 20}
	f.Fuzz(func(t *testing.T, src []byte) {
		_, diags := Compile("fuzz.p4", src, opts)
		for _, d := range diags.Diags {
			if strings.Contains(d.Msg, "internal compiler error") {
				t.Fatalf("%s\ninput:\n%s", d, src)
			}
		}
	})
}

// corpusDirIfPresent is corpusDir without a testing.TB: "" when absent.
func corpusDirIfPresent() string {
	progs, err := repo.Shared("p4c-conformance", "programs")
	if err != nil {
		return ""
	}
	return progs
}
