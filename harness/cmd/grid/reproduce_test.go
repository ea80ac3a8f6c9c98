package main

import (
	"bytes"
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

func TestAReproductionHoldsOnlyWhenFidelityAndThePapersFiguresDo(t *testing.T) {
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
	if len(f) != 2 || !strings.Contains(out.String(), "LOW") || !strings.Contains(out.String(), "PAPER DISAGREES: atp") {
		t.Errorf("ATP at 0.8: failures %v\n%s", f, out.String())
	}
	// The testbed's order: SwitchML under Geryon breaks it.
	testbed := reproductions[1]
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
// scales that keep each run under a minute on 2 cores: Fig. 1's slowest
// workers within 10% of the paper's 1, 2.4375 and 3 Gbps, and the
// testbed's GRID > ATP > SwitchML > Geryon, each algorithm within 0.9 of
// its plan's lambda.
func TestReproduceFig1AndTheTestbed(t *testing.T) {
	if err := fabric.CanBuild(); err != nil {
		t.Skipf("cannot build network namespaces here (CI runs the tests as root): %v", err)
	}
	bin := buildGrid(t)
	for _, tc := range []struct{ name, scale string }{{"fig1", "0.0001"}, {"testbed", "0.00002"}} {
		t.Run(tc.name, func(t *testing.T) {
			// A machine busy with other work starves the emulation of CPU,
			// and its rates are then the CPU's: the run says so and fails.
			// A second attempt tells such noise from a defect.
			var out []byte
			for attempt := 1; attempt <= 2; attempt++ {
				run := newRunName()
				t.Cleanup(func() { fabric.Clean(run) })
				root := t.TempDir()
				cmd := exec.Command(bin, "reproduce", tc.name, "--scale", tc.scale, "--fragments", "1024", "--results", root, "--name", run)
				cmd.Dir = repo.RootOrFail(t)
				var err error
				out, err = cmd.CombinedOutput()
				nothingLeft(t, run)
				if err != nil || !strings.Contains(string(out), tc.name+" reproduced") {
					t.Logf("attempt %d: grid reproduce %s: %v", attempt, tc.name, err)
					continue
				}
				tables, _ := filepath.Glob(filepath.Join(root, run+"-*", "reproduce.txt"))
				if len(tables) != 1 {
					t.Fatalf("reproduce.txt in %v, want one", tables)
				}
				if b, _ := os.ReadFile(tables[0]); !strings.Contains(string(b), "the paper's figures hold") {
					t.Errorf("reproduce.txt:\n%s", b)
				}
				return
			}
			t.Fatalf("grid reproduce %s failed twice; the last output:\n%s", tc.name, out)
		})
	}
}
