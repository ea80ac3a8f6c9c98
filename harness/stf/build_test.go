package stf

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeSTF(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.stf")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadBuildCollectsDefinitionsWithDefaultValueOne(t *testing.T) {
	p := writeSTF(t, "# a test\n# build: GRID_VALUES_64 GRID_UNITS=16\npacket 0 00\n# build: EXTRA=x\n")
	got, err := ReadBuild(p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"GRID_VALUES_64": "1", "GRID_UNITS": "16", "EXTRA": "x"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ReadBuild = %v, want %v", got, want)
	}
}

func TestReadBuildIsNilWithoutABuildLine(t *testing.T) {
	got, err := ReadBuild(writeSTF(t, "packet 0 00\n"))
	if err != nil || got != nil {
		t.Fatalf("ReadBuild = %v, %v; want nil, nil", got, err)
	}
}

func TestReadBuildNamesFileAndLineOfABadName(t *testing.T) {
	p := writeSTF(t, "\n# build: 9LIVES=1\n")
	_, err := ReadBuild(p)
	if err == nil || !strings.Contains(err.Error(), p+":2:") || !strings.Contains(err.Error(), "9LIVES") {
		t.Fatalf("error %v does not name %s:2 and the bad name", err, p)
	}
}
