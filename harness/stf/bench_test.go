package stf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/grid-ina/grid/harness/internal/repo"

	"github.com/grid-ina/grid/harness/p4c"
)

// BenchmarkParseConformanceSuite parses all STF files of the conformance
// corpus once per iteration.
func BenchmarkParseConformanceSuite(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(repo.SharedOrSkip(b, "p4c-conformance", "programs"), "*.stf"))
	if len(files) == 0 {
		b.Skip("no STF files in the conformance corpus")
	}
	texts := make([]string, len(files))
	size := 0
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		texts[i] = string(data)
		size += len(data)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, text := range texts {
			if _, err := Parse(files[j], text); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRunBasicIPv4 runs the basic_ipv4 example's STF test (load, 3
// entries, 8 packets, comparison) on a fresh switch per iteration.
func BenchmarkRunBasicIPv4(b *testing.B) {
	dir := filepath.Join(repo.RootOrFail(b), "p4", "examples")
	res, err := p4c.Compile(filepath.Join(dir, "basic_ipv4.p4"), p4c.Options{})
	if err != nil {
		b.Fatal(err)
	}
	cmds, err := ParseFile(filepath.Join(dir, "basic_ipv4.stf"))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := Run(res.JSON, cmds, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if !r.Passed() {
			b.Fatal(r.Summary())
		}
	}
}
