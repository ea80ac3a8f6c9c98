package frontend

import (
	"os"
	"path/filepath"
	"testing"
)

// Front-end cost (preprocess with the embedded v1model.p4, parse, check).
// The peer, real p4c-bm2-ss, needs 0.28 s / 48 MB for a 57-line
// IPv4 program and 0.46 s / 54 MB for the 430-line
// v1model-special-ops-bmv2.p4 for the whole compilation; these
// benchmarks measure our front end's share.

func benchmarkLoad(b *testing.B, path string) {
	src, err := os.ReadFile(path)
	if err != nil {
		b.Skipf("%s: %v", path, err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := LoadSource(path, src, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadBasicIPv4(b *testing.B) {
	benchmarkLoad(b, "testdata/basic_ipv4.p4")
}

// BenchmarkLoadAggregator loads the GRID aggregator (p4/aggregator), the
// program the testbed's switches run.
func BenchmarkLoadAggregator(b *testing.B) {
	benchmarkLoad(b, "../../../p4/aggregator/aggregator.p4")
}

func BenchmarkLoadLargestCorpusProgram(b *testing.B) {
	benchmarkLoad(b, filepath.Join(corpusDir(b), "v1model-special-ops-bmv2.p4"))
}

func TestBasicIPv4ExampleChecks(t *testing.T) {
	prog, err := Load("testdata/basic_ipv4.p4", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if prog.Main == nil || prog.Lookup("MyIngress") == nil {
		t.Error("checked program lacks main or MyIngress")
	}
}
