package conformance

import (
	"testing"
)

// BenchmarkReferenceSuite runs every program of the corpus with real p4c's
// JSON: the time for one full conformance pass.
func BenchmarkReferenceSuite(b *testing.B) {
	dir := corpusDir(b)
	for i := 0; i < b.N; i++ {
		report, err := Run(Options{Dir: dir, Mode: Reference})
		if err != nil {
			b.Fatal(err)
		}
		if report.Passed() == 0 {
			b.Fatal("nothing passed")
		}
	}
}
