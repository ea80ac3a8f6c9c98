package repo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootHoldsGoModFromADeepDirectory(t *testing.T) {
	root := RootOrFail(t)
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("root %s has no go.mod: %v", root, err)
	}
	if want := filepath.Join(mustWd(t), "..", "..", ".."); filepath.Clean(want) != root {
		t.Fatalf("root %s is not three levels above the package directory %s", root, mustWd(t))
	}
}

func TestSharedReportsAnAbsentPath(t *testing.T) {
	if _, err := Shared("no-such-material-here"); err == nil {
		t.Fatal("an absent shared path was reported present")
	}
}

func TestRootFailsOutsideTheRepository(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := Root(); err == nil {
		t.Fatal("found a repository root in an empty temporary directory")
	}
}

func mustWd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func TestRootIgnoresAnotherGoProject(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if root, err := Root(); err == nil {
		t.Fatalf("took %s, another module, for grid's root", root)
	}
}
