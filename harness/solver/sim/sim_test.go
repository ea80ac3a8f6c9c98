package sim

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
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
