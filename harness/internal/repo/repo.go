// Package repo locates the grid repository and the team's shared material
// beside it, for tests and for commands that default to files in the tree.
package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Root is the directory holding grid's go.mod, found from the working
// directory upwards (tests run in their package's directory).
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the grid repository (no go.mod at or above the working directory)")
		}
		dir = parent
	}
}

// Shared is the path of elem inside ../shared beside the repository, the
// team's material that CI lays next to the clone; an error when it is absent.
func Shared(elem ...string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	p := filepath.Join(append([]string{root, "..", "shared"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s is absent: %w", p, err)
	}
	return p, nil
}

// SharedOrSkip is Shared for tests: it skips the test, saying why, when the
// material is absent, since the project must pass without ../shared.
func SharedOrSkip(t testing.TB, elem ...string) string {
	t.Helper()
	p, err := Shared(elem...)
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	return p
}

// RootOrFail is Root for tests.
func RootOrFail(t testing.TB) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}
