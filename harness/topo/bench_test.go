package topo

import (
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkParseLeafSpine60(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(topologiesDir(b), "leafspine-60.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data, "leafspine-60.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFatTreeK8Generate(b *testing.B) {
	for b.Loop() {
		if _, err := FatTree(8, 6); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlanLeafSpine60(b *testing.B) {
	tp, err := LeafSpine(30, 30, 500)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := tp.Plan(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSVGLeafSpine60(b *testing.B) {
	tp, err := LeafSpine(30, 30, 500)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		tp.SVG()
	}
}
