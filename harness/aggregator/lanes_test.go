package aggregator

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite generated files (lane includes, STF tests) instead of comparing")

func TestLaneIncludesAreCurrent(t *testing.T) {
	dir := ProgramDir(t)
	for name, want := range LaneFiles() {
		path := filepath.Join(dir, name)
		if *update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./harness/aggregator -run TestLaneIncludesAreCurrent -update)", err)
		}
		if string(got) != want {
			t.Errorf("%s differs from the generator's output (run with -update)", path)
		}
	}
}
