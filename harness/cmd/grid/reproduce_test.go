package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/results"
	"github.com/grid-ina/grid/harness/solver"
)

func summaryOf(rates map[string][2]float64) *results.Summary {
	s := &results.Summary{Scale: 0.0001, FragmentsPerWorker: 1024}
	for _, a := range []string{solver.AlgoGeryon, solver.AlgoATP, solver.AlgoGRIDPaths} {
		r := rates[a]
		ratio := r[1] / r[0]
		s.Algorithms = append(s.Algorithms, results.AlgorithmSummary{Algorithm: a, Verified: true,
			Fidelity: &results.Fidelity{PredictedGbps: r[0], MeasuredGbps: r[1], Ratio: &ratio}})
	}
	return s
}

func TestAReproductionHoldsOnlyWhenEveryFidelityIsInItsBandAndThePapersFiguresHold(t *testing.T) {
	fig1 := reproductions[0]
	var out bytes.Buffer
	good := summaryOf(map[string][2]float64{solver.AlgoGeryon: {1, 0.99}, solver.AlgoATP: {2.4375, 2.4}, solver.AlgoGRIDPaths: {3, 2.95}})
	if f := holdAgainstPaper(&out, fig1, good); len(f) != 0 {
		t.Errorf("a faithful run of Fig. 1 fails: %v\n%s", f, out.String())
	}
	// ATP at 0.8 of its lambda: both its fidelity and the paper's 2.4375
	// fail.
	out.Reset()
	low := summaryOf(map[string][2]float64{solver.AlgoGeryon: {1, 0.99}, solver.AlgoATP: {2.4375, 1.95}, solver.AlgoGRIDPaths: {3, 2.95}})
	f := holdAgainstPaper(&out, fig1, low)
	if len(f) != 2 || !strings.Contains(out.String(), "FIDELITY LOW atp") || !strings.Contains(out.String(), "PAPER DISAGREES: atp") {
		t.Errorf("ATP at 0.8: failures %v\n%s", f, out.String())
	}
	// SwitchML at 1.265 of its lambda (a capacity meter's burst let it
	// through) fails although the paper's order holds.
	out.Reset()
	testbed := reproductions[1]
	over := &results.Summary{}
	for _, r := range []struct {
		algo            string
		predicted, gbps float64
	}{{solver.AlgoGRIDPaths, 33.33, 33.4}, {solver.AlgoATP, 26.51, 25.8}, {solver.AlgoSwitchML, 15, 18.97}, {solver.AlgoGeryon, 12.5, 12.41}} {
		ratio := r.gbps / r.predicted
		over.Algorithms = append(over.Algorithms, results.AlgorithmSummary{Algorithm: r.algo, Verified: true,
			Fidelity: &results.Fidelity{PredictedGbps: r.predicted, MeasuredGbps: r.gbps, Ratio: &ratio}})
	}
	f = holdAgainstPaper(&out, testbed, over)
	if len(f) != 1 || !strings.Contains(f[0], "switchml: fidelity 1.265") || !strings.Contains(out.String(), "FIDELITY HIGH switchml") ||
		!strings.Contains(out.String(), "1.265 HIGH") || !strings.Contains(out.String(), "the paper's figures hold") {
		t.Errorf("SwitchML at 1.265: failures %v\n%s", f, out.String())
	}
	// The testbed's order: SwitchML under Geryon breaks it.
	s := &results.Summary{}
	for a, g := range map[string]float64{solver.AlgoGRIDPaths: 33, solver.AlgoATP: 26, solver.AlgoSwitchML: 12, solver.AlgoGeryon: 12.4} {
		one := 1.0
		s.Algorithms = append(s.Algorithms, results.AlgorithmSummary{Algorithm: a, Verified: true, Fidelity: &results.Fidelity{MeasuredGbps: g, Ratio: &one}})
	}
	out.Reset()
	if f := holdAgainstPaper(&out, testbed, s); len(f) != 1 || !strings.Contains(f[0], "switchml") {
		t.Errorf("SwitchML below Geryon: failures %v", f)
	}
}

// TestReproduceFig1AndTheTestbed runs both results for real, at fixed
// scales that keep each run under a minute on 2 cores. It holds what the
// emulation reaches on every run: each algorithm's sums exact, a fidelity
// for each, the reproduction table written, no algorithm above its lambda
// by more than the sampling's error (a capacity meter whose burst lets a
// plan through faster, as a second of C_s did SwitchML's at 1.265), and
// Geryon's slowest worker (link-bound, no aggregation to wait for) within
// [0.9, 1.05] of its lambda. Whether every algorithm reaches [0.9, 1.02]
// and the paper's figures within 10% is logged, not required: aggregating
// plans may fall short on a run the machine starves (resends while the PS
// waits for slower workers; README, "Rate-faithful experiments"), and
// `grid reproduce` then says so and exits 1.
// geryonCeiling is the most a measured rate may exceed its lambda by in
// TestReproduceFig1AndTheTestbed: sampling error, not a faster network.
const geryonCeiling = 1.05

func TestReproduceFig1AndTheTestbed(t *testing.T) {
	if err := fabric.CanBuild(); err != nil {
		t.Skipf("cannot build network namespaces here (CI runs the tests as root): %v", err)
	}
	bin := buildGrid(t)
	for _, tc := range []struct{ name, scale string }{{"fig1", "0.0001"}, {"testbed", "0.00002"}} {
		t.Run(tc.name, func(t *testing.T) {
			run := newRunName()
			t.Cleanup(func() { fabric.Clean(run) })
			root := t.TempDir()
			cmd := exec.Command(bin, "reproduce", tc.name, "--scale", tc.scale, "--fragments", "1024", "--results", root, "--name", run)
			cmd.Dir = repo.RootOrFail(t)
			out, err := cmd.CombinedOutput()
			nothingLeft(t, run)
			reproduced := err == nil && strings.Contains(string(out), tc.name+" reproduced")
			if err != nil && !strings.Contains(string(out), tc.name+" not reproduced") {
				t.Fatalf("grid reproduce %s: %v\n%s", tc.name, err, out)
			}
			tables, _ := filepath.Glob(filepath.Join(root, run+"-*", "reproduce.txt"))
			summaries, _ := filepath.Glob(filepath.Join(root, run+"-*", "summary.json"))
			if len(tables) != 1 || len(summaries) != 1 {
				t.Fatalf("reproduce.txt %v and summary.json %v, want one each; output:\n%s", tables, summaries, out)
			}
			b, err := os.ReadFile(summaries[0])
			if err != nil {
				t.Fatal(err)
			}
			var sum results.Summary
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatalf("%s: %v", summaries[0], err)
			}
			var geryon *results.Fidelity
			for _, a := range sum.Algorithms {
				if !a.Verified {
					t.Errorf("%s: %s did not verify every sum", tc.name, a.Algorithm)
				}
				if a.Fidelity == nil || a.Fidelity.Ratio == nil {
					t.Errorf("%s: %s has no fidelity", tc.name, a.Algorithm)
					continue
				}
				if a.Algorithm == solver.AlgoGeryon {
					geryon = a.Fidelity
				}
				if r := *a.Fidelity.Ratio; r > geryonCeiling {
					t.Errorf("%s: %s's slowest worker at %.3f of its lambda, above %.2f: the emulation let it through faster than the model allows",
						tc.name, a.Algorithm, r, geryonCeiling)
				}
			}
			if geryon == nil {
				t.Fatalf("%s: no Geryon run with a fidelity:\n%s", tc.name, out)
			}
			// The band is [0.9, 1.02]; the monitor samples every
			// 100 ms over a few seconds of steady sending, so a faithful run
			// measures up to a few percent either way (1.025 seen in CI).
			if r := *geryon.Ratio; r < results.MinFidelity || r > geryonCeiling {
				t.Errorf("%s: Geryon's slowest worker at %.3f of its lambda, want [%.2f, %.2f]", tc.name, r, results.MinFidelity, geryonCeiling)
			}
			table, _ := os.ReadFile(tables[0])
			t.Logf("paper's figures reproduced: %v\n%s", reproduced, table)
		})
	}
}
