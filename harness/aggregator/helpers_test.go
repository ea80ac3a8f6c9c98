package aggregator

import (
	"path/filepath"
	"testing"

	"github.com/grid-ina/grid/harness/internal/repo"
)

// programDir is p4/aggregator of the repository the test runs in.
func programDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(repo.RootOrFail(t), "p4", "aggregator")
}
