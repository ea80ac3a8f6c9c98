package results

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestResultsTakesPlainRecordsNotMeasuringPackages keeps data flowing one
// way, measure -> records -> results: the writer imports none of the
// packages that measure (the runner turns their values into records).
func TestResultsTakesPlainRecordsNotMeasuringPackages(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, banned := range []string{"controller", "endpoint", "monitor", "runner", "fabric"} {
				if path == "github.com/grid-ina/grid/harness/"+banned {
					t.Errorf("%s imports %s: results takes records (records.go), the runner fills them", f, path)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no Go files checked")
	}
}
