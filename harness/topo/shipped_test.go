package topo

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the shipped topology files in topologies/ from the generators")

// shipped maps each file in topologies/ to the generator call that produces it.
var shipped = map[string]func() (*Topology, error){
	"testbed.yaml":      func() (*Topology, error) { return Testbed(), nil },
	"paper-fig1.yaml":   func() (*Topology, error) { return PaperFig1(), nil },
	"fattree-k4.yaml":   func() (*Topology, error) { return FatTree(4, 0) },
	"fattree-k8.yaml":   func() (*Topology, error) { return FatTree(8, 6) },
	"leafspine-60.yaml": func() (*Topology, error) { return LeafSpine(30, 30, 500) },
}

// TestShippedTopologiesAreCurrent regenerates every shipped file and fails if
// the committed one differs; go test ./harness/topo -run Shipped -update rewrites them.
func TestShippedTopologiesAreCurrent(t *testing.T) {
	for file, gen := range shipped {
		tp, err := gen()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		want, err := Marshal(tp)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		path := filepath.Join(topologiesDir(t), file)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run go test ./harness/topo -run Shipped -update)", file, err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from its generator's output; run go test ./harness/topo -run Shipped -update", path)
		}
	}
}

func TestShippedFatTreeK8HasPaperCounts(t *testing.T) {
	tp, err := Load(filepath.Join(topologiesDir(t), "fattree-k8.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Switches()) != 80 || len(tp.Hosts()) != 192 {
		t.Errorf("fattree-k8.yaml has %d switches and %d hosts, want 80 and 192", len(tp.Switches()), len(tp.Hosts()))
	}
}
