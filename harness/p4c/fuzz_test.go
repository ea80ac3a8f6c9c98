package p4c

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/p4c/frontend"
	"github.com/grid-ina/grid/harness/p4c/midend"
)

// FuzzLowerNeverFailsInternally feeds mutated programs through the front
// end and, when they check, through the lowering: a checked program must
// lower or be rejected with a diagnostic, never hit an internal error
// (Lower turns panics into "internal compiler error").
func FuzzLowerNeverFailsInternally(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "programs", "*.p4"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		src, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src))
	}
	f.Fuzz(func(t *testing.T, src string) {
		prog, err := frontend.LoadSource("fuzz.p4", []byte(src), frontend.Options{Features: features})
		if err != nil {
			return
		}
		if _, err := midend.Lower(prog, "fuzz.p4"); err != nil && strings.Contains(err.Error(), "internal compiler error") {
			t.Fatalf("lowering failed internally: %v\nprogram:\n%s", err, src)
		}
	})
}
