// Package repo locates the grid repository and the team's shared material
// beside it, for tests and for commands that default to files in the tree.
package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// module is the first line of grid's go.mod, which tells its root apart
// from another Go project's.
const module = "module github.com/grid-ina/grid"

// Root is the directory holding grid's go.mod, found from the working
// directory upwards (tests run in their package's directory), else from
// the running executable's directory upwards (bin/grid run from anywhere).
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	if root, ok := rootAbove(wd); ok {
		return root, nil
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			if root, ok := rootAbove(filepath.Dir(exe)); ok {
				return root, nil
			}
		}
	}
	return "", errors.New("not inside the grid repository (no grid go.mod at or above the working directory or the grid executable)")
}

// rootAbove finds grid's go.mod at or above dir.
func rootAbove(dir string) (string, bool) {
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), module+"\n") {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// Resolve is rel inside the repository, for commands whose default files
// live in the tree (topologies/testbed.yaml): it resolves against the
// repository from any working directory. rel is returned as it is when no
// repository is found, so the error reading it names it.
func Resolve(rel string) string {
	root, err := Root()
	if err != nil {
		return rel
	}
	return filepath.Join(root, rel)
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
