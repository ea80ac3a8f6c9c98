package stf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/p4c"
)

// TestExamplesPassTheirSTF compiles every p4/examples/NAME.p4 with the
// embedded compiler and runs NAME.stf on the engine. The expected packets
// were derived by hand, independently of the compiler and the engine.
func TestExamplesPassTheirSTF(t *testing.T) {
	dir := filepath.Join(repo.RootOrFail(t), "p4", "examples")
	programs, _ := filepath.Glob(filepath.Join(dir, "*.p4"))
	if len(programs) < 10 {
		t.Fatalf("found %d example programs in %s, want at least 10", len(programs), dir)
	}
	for _, prog := range programs {
		name := strings.TrimSuffix(filepath.Base(prog), ".p4")
		t.Run(name, func(t *testing.T) {
			cmds, err := ParseFile(filepath.Join(dir, name+".stf"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := p4c.Compile(prog, p4c.Options{})
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			result, err := Run(res.JSON, cmds, Options{})
			if err != nil {
				t.Fatal(err)
			}
			mustPass(t, result)
			if result.Sent == 0 {
				t.Errorf("%s.stf sends no packet", name)
			}
		})
	}
}

// TestExamplesHaveTheirSTF keeps the corpus in pairs: a test for every
// program and a program for every test.
func TestExamplesHaveTheirSTF(t *testing.T) {
	dir := filepath.Join(repo.RootOrFail(t), "p4", "examples")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range entries {
		have[e.Name()] = true
	}
	for name := range have {
		base, ext := strings.TrimSuffix(name, filepath.Ext(name)), filepath.Ext(name)
		switch ext {
		case ".p4":
			if !have[base+".stf"] {
				t.Errorf("%s has no %s.stf", name, base)
			}
		case ".stf":
			if !have[base+".p4"] {
				t.Errorf("%s has no %s.p4", name, base)
			}
		}
	}
}
