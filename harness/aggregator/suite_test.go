package aggregator

import (
	"path/filepath"
	"testing"
)

func TestSTFSuitePassesOnTheEmbeddedEngine(t *testing.T) {
	dir := ProgramDir(t)
	cases, err := LoadSuite(filepath.Join(dir, "tests"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 16 {
		t.Fatalf("only %d STF cases in the suite", len(cases))
	}
	for _, r := range RunSuite(filepath.Join(dir, "aggregator.p4"), cases) {
		t.Run(r.Case.Name, func(t *testing.T) {
			if !r.Passed() {
				t.Error(r.Report())
			}
		})
	}
}
