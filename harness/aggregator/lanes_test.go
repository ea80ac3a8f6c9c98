package aggregator

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite generated files (lane includes, STF tests) instead of comparing")

func TestLaneIncludesAreCurrent(t *testing.T) {
	dir := programDir(t)
	for name, want := range LaneFiles() {
		checkGenerated(t, filepath.Join(dir, name), want, "the lane generator")
	}
}

// checkGenerated compares a checked-in generated file with what its
// generator produces now, or rewrites it with -update.
func checkGenerated(t *testing.T, path, want, generator string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (generate it with -update)", err)
	}
	if string(got) != want {
		t.Errorf("%s differs from what %s produces (run with -update and review the diff)", path, generator)
	}
}
