package aggregator

import (
	"os"
	"path/filepath"
	"testing"
)

// ProgramDir is p4/aggregator of the repository the test runs in: the
// directory holding go.mod above the working directory.
func ProgramDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "p4", "aggregator")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
