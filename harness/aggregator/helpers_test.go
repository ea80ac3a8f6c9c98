package aggregator

import (
	"path/filepath"
	"testing"
)

// ProgramDir is p4/aggregator of the repository the test runs in.
func ProgramDir(t testing.TB) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "p4", "aggregator")
}
