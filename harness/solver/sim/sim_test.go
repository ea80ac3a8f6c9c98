package sim

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/solver"
)

func TestRunWritesCSVAndPlotsIntoPlace(t *testing.T) {
	cfg := Config{
		Scenarios:  solver.PaperScenarios()[:1],
		Algorithms: []string{solver.AlgoGRIDExact, solver.AlgoSwitchML},
		Workers:    map[string][]int{"fattree": {8, 16}},
		Seed:       1,
		Options:    solver.Options{LP: lp.Embedded},
	}
	rows, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 2 worker counts x 2 algorithms", len(rows))
	}
	dir := filepath.Join(t.TempDir(), "results", "sim")
	if err := os.MkdirAll(dir, 0o755); err != nil { // an older run to be replaced
		t.Fatal(err)
	}
	files, err := WriteResults(dir, rows, cfg.Algorithms, cfg.ModelName())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1+3*2 {
		t.Errorf("wrote %d files, want the CSV and 3 metrics x (png, svg)", len(files))
	}
	data, err := os.ReadFile(filepath.Join(dir, "simulation.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(recs) != 5 || recs[0][5] != "lambda_gbps" {
		t.Fatalf("csv: %v, %d records", err, len(recs))
	}
	png, err := os.ReadFile(filepath.Join(dir, "fattree-tor-worker-rate.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("worker-rate plot missing or not a PNG: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".sim.tmp-*"))
	if len(left) != 0 {
		t.Errorf("temporary directories left behind: %v", left)
	}
}

// grid-exact used to fall back to the paper model silently on these
// fabrics (7.7 Gbps where grid-paths showed 50): the table says whether it
// proved its rate, and what the row is when it did not.
func TestTableSaysWhetherGridExactProvedItsRate(t *testing.T) {
	cfg := Config{
		Scenarios:  solver.PaperScenarios()[:1],
		Algorithms: []string{solver.AlgoGRIDPaths, solver.AlgoGRIDExact},
		Workers:    map[string][]int{"fattree": {40}},
		Seed:       1,
		Options:    solver.Options{LP: lp.Embedded},
	}
	rows, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, rows, cfg.ModelName()); err != nil {
		t.Fatal(err)
	}
	table := b.String()
	exact := rows[1]
	if exact.Algorithm != solver.AlgoGRIDExact || exact.Exact == "" {
		t.Fatalf("grid-exact row %+v has no verdict", exact)
	}
	if exact.LambdaGbps < rows[0].LambdaGbps*(1-1e-9) {
		t.Errorf("grid-exact %g below grid-paths %g", exact.LambdaGbps, rows[0].LambdaGbps)
	}
	if !strings.Contains(table, " exact ") || exact.Exact == "no" && !strings.Contains(table, "exact no: grid-exact's link-aware MILP was too big") {
		t.Errorf("the table does not say whether grid-exact proved its rate:\n%s", table)
	}
	if !strings.Contains(table, "100 Gbps links") {
		t.Errorf("the table does not say which network scored the plans:\n%s", table)
	}
}
