package main

// grid reproduce NAME: one of the paper's results as an experiment, run by
// grid run (every rate scaled, every sum checked), then held against the
// paper and against the plans' own predictions.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/results"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
)

// reproduction is one of the paper's results.
type reproduction struct {
	name, about string
	// topology is a shipped topology file, relative to the tree.
	topology string
	// scenario, instead, is a Sec. 6.3 scenario built at workers workers.
	scenario string
	workers  int
	algos    []string
	// fragments per worker by default: enough for a steady rate at the
	// scale the calibration picks on 2 cores.
	fragments int
	// paper checks the measured rates (Gbps, topology units, by algorithm)
	// against the paper; it returns what disagrees.
	paper func(measured map[string]float64) []string
}

// paperWithin checks each algorithm's measured rate within tol of the
// paper's figure.
func paperWithin(want map[string]float64, tol float64) func(map[string]float64) []string {
	return func(m map[string]float64) []string {
		var out []string
		for _, a := range slices.Sorted(maps.Keys(want)) {
			got, ok := m[a]
			if !ok || got < want[a]*(1-tol) || got > want[a]*(1+tol) {
				out = append(out, fmt.Sprintf("%s measured %.4g Gbps, the paper %.4g (within %.0f%%)", a, got, want[a], 100*tol))
			}
		}
		return out
	}
}

// paperOrder checks the measured rates fall in the paper's order.
func paperOrder(order ...string) func(map[string]float64) []string {
	return func(m map[string]float64) []string {
		var out []string
		for i := 1; i < len(order); i++ {
			a, b := order[i-1], order[i]
			if !(m[a] > m[b]) {
				out = append(out, fmt.Sprintf("%s (%.4g Gbps) is not above %s (%.4g Gbps) as in the paper", a, m[a], b, m[b]))
			}
		}
		return out
	}
}

var reproductions = []reproduction{
	{name: "fig1", about: "the motivating example (Fig. 1): slowest worker Geryon 1, ATP 2.4375, GRID 3 Gbps",
		topology: "topologies/paper-fig1.yaml", algos: []string{solver.AlgoGeryon, solver.AlgoATP, solver.AlgoGRIDPaths}, fragments: 1024,
		paper: paperWithin(map[string]float64{solver.AlgoGeryon: 1, solver.AlgoATP: 2.4375, solver.AlgoGRIDPaths: 3}, 0.1)},
	{name: "testbed", about: "the testbed (Fig. 3) with binding switch capacities (topologies/testbed-capacity.yaml): GRID > ATP > SwitchML > Geryon (Fig. 5a)",
		topology: "topologies/testbed-capacity.yaml", algos: []string{solver.AlgoGRIDPaths, solver.AlgoATP, solver.AlgoSwitchML, solver.AlgoGeryon}, fragments: 1024,
		paper: paperOrder(solver.AlgoGRIDPaths, solver.AlgoATP, solver.AlgoSwitchML, solver.AlgoGeryon)},
	{name: "fattree-k8", about: "the k=8 fat-tree (80 switches, 191 workers), every algorithm",
		topology: "topologies/fattree-k8.yaml", algos: nil, fragments: 512},
	{name: "fattree-tor", about: "Sec. 6.3: k=8 fat-tree, ToR switches programmable (capacities 100 Gbps-3.2 Tbps), 16 workers",
		scenario: "fattree-tor", workers: 16, fragments: 512},
	{name: "fattree-random20", about: "Sec. 6.3: k=8 fat-tree, a random 20% of switches programmable, 16 workers",
		scenario: "fattree-random20", workers: 16, fragments: 512},
	{name: "leafspine-leaf", about: "Sec. 6.3: leaf-spine (60 switches, 500 hosts), leaves programmable, 16 workers",
		scenario: "leafspine-leaf", workers: 16, fragments: 512},
	{name: "leafspine-random20", about: "Sec. 6.3: leaf-spine, a random 20% of switches programmable, 16 workers",
		scenario: "leafspine-random20", workers: 16, fragments: 512},
}

func init() {
	var names []string
	for _, r := range reproductions {
		names = append(names, fmt.Sprintf("   %-19s %s", r.name, r.about))
	}
	register(&cli.Command{
		Name:      "reproduce",
		Usage:     "reproduce one of the paper's results: an experiment held against the paper and the plans' predictions",
		ArgsUsage: "NAME",
		Description: "reproduce runs one of the paper's results as grid run does (every rate of the model scaled\n" +
			"by one factor, every sum checked) and holds the measured slowest-worker sending rates, scaled\n" +
			"back to the topology's units, against the paper and against each plan's lambda (fidelity\n" +
			"within [0.9, 1.02]: FIDELITY LOW or HIGH outside it). It prints a table and writes it as reproduce.txt into the run's results folder;\n" +
			"it exits non-zero when a sum, the fidelity or the paper's figure does not hold. Needs root.\n\n" +
			"NAME is one of:\n" + strings.Join(names, "\n") + "\n\n" +
			"The Sec. 6.3 scenarios are the instances grid simulate builds (same seed), at 16 workers: the\n" +
			"PREDICTED column is grid simulate's lambda for the instance.\n\n" +
			"Example:\n   sudo grid reproduce fig1\n   sudo grid reproduce testbed --fragments 512",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "fragments", Usage: "gradient fragments each worker sends (`N`; default: per result, enough for a steady rate)"},
			&cli.StringFlag{Name: "scale", Value: scaleAuto, Usage: "as for grid run: a `FACTOR` or \"auto\""},
			&cli.StringFlag{Name: "results", Value: "results", Usage: "`DIR` that receives the run's folder (the default is the grid tree's results/)"},
			&cli.StringFlag{Name: "name", Usage: "run name (default: reproduce-NAME)"},
		},
		Action: reproduce,
	})
}

func reproduce(c *cli.Context) error {
	args, err := positionalArgs(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return fmt.Errorf("want one NAME (grid reproduce --help lists them), got %d arguments", len(args))
	}
	i := slices.IndexFunc(reproductions, func(r reproduction) bool { return r.name == args[0] })
	if i < 0 {
		var names []string
		for _, r := range reproductions {
			names = append(names, r.name)
		}
		return fmt.Errorf("%q: no such result (one of %s)", args[0], strings.Join(names, ", "))
	}
	r := reproductions[i]
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	resultsDir := pathFlag(c, "results")
	run := c.String("name")
	if run == "" {
		run = "reproduce-" + r.name
	}
	fragments := c.Int("fragments")
	if fragments == 0 {
		fragments = r.fragments
	}
	argv := []string{"run", "--name", run, "--results", resultsDir, "--fragments", strconv.Itoa(fragments), "--scale", c.String("scale")}
	if r.scenario != "" {
		work, err := os.MkdirTemp("", "grid-reproduce-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(work)
		topoFile, jobsFile, err := writeScenario(work, r.scenario, r.workers)
		if err != nil {
			return err
		}
		argv = append(argv, "--topo", topoFile, "--jobs", jobsFile)
	} else {
		argv = append(argv, "--topo", repo.Resolve(r.topology))
	}
	algo := algoAll
	if len(r.algos) > 0 {
		algo = strings.Join(r.algos, ",")
	}
	argv = append(argv, "--algo", algo)
	w := c.App.Writer
	fmt.Fprintf(w, "reproducing %s: %s\n$ grid %s\n", r.name, r.about, strings.Join(argv, " "))
	cmd := exec.CommandContext(c.Context, bin, argv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(w, &out), c.App.ErrWriter
	runErr := cmd.Run()
	dir, err := newestFolder(resultsDir, run)
	if err != nil {
		return errors.Join(runErr, err)
	}
	summary, err := readSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		return errors.Join(runErr, err)
	}
	var table bytes.Buffer
	failures := holdAgainstPaper(&table, r, summary)
	fmt.Fprintln(w)
	w.Write(table.Bytes())
	if err := os.WriteFile(filepath.Join(dir, "reproduce.txt"), table.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "reproduction table in %s\n", filepath.Join(dir, "reproduce.txt"))
	if len(failures) > 0 || runErr != nil {
		return fmt.Errorf("%s not reproduced: %s", r.name, strings.Join(append(failures, errString(runErr)...), "; "))
	}
	fmt.Fprintf(w, "%s reproduced\n", r.name)
	return nil
}

func errString(err error) []string {
	if err == nil {
		return nil
	}
	return []string{"grid run: " + err.Error()}
}

// holdAgainstPaper writes the reproduction table and returns what does not
// hold: a fidelity outside [results.MinFidelity, results.MaxFidelity] (said
// as FIDELITY LOW or HIGH) or unmeasured, and the paper's check.
func holdAgainstPaper(out io.Writer, r reproduction, s *results.Summary) []string {
	var failures, outside []string
	measured := map[string]float64{}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s (scale %g, %d fragments per worker)\n", r.name, s.Scale, s.FragmentsPerWorker)
	fmt.Fprintln(tw, "ALGORITHM\tPREDICTED Gbps\tMEASURED Gbps\tFIDELITY\tSUMS")
	for _, a := range s.Algorithms {
		f := a.Fidelity
		sums := "exact"
		if !a.Verified {
			sums = "FAILED"
			failures = append(failures, a.Algorithm+": sums not verified")
		}
		switch {
		case a.Refused != "":
			fmt.Fprintf(tw, "%s\t-\t-\tnot run: %s\t-\n", a.Algorithm, a.Refused)
			failures = append(failures, a.Algorithm+": plan refused")
			continue
		case f == nil || f.Ratio == nil:
			why := "no prediction"
			if f != nil {
				why = f.Unmeasured
			}
			fmt.Fprintf(tw, "%s\t-\t-\tnot measured: %s\t%s\n", a.Algorithm, why, sums)
			failures = append(failures, a.Algorithm+": rate not measured")
			continue
		}
		measured[a.Algorithm] = f.MeasuredGbps
		verdict := fmt.Sprintf("%.3f", *f.Ratio)
		if flag := f.Flag(); flag != "" {
			verdict += " " + flag
			failures = append(failures, fmt.Sprintf("%s: fidelity %.3f, outside [%.2f, %.2f]", a.Algorithm, *f.Ratio, results.MinFidelity, results.MaxFidelity))
			line := fmt.Sprintf("FIDELITY %s %s: %.3f of its lambda, outside [%.2f, %.2f]", flag, a.Algorithm, *f.Ratio, results.MinFidelity, results.MaxFidelity)
			if f.High() {
				line += "; " + f.Excess()
			}
			outside = append(outside, line)
		}
		fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%s\t%s\n", a.Algorithm, f.PredictedGbps, f.MeasuredGbps, verdict, sums)
	}
	tw.Flush()
	for _, o := range outside {
		fmt.Fprintln(out, o)
	}
	if r.paper != nil {
		if disagree := r.paper(measured); len(disagree) > 0 {
			for _, d := range disagree {
				fmt.Fprintf(out, "PAPER DISAGREES: %s\n", d)
			}
			failures = append(failures, disagree...)
		} else {
			fmt.Fprintln(out, "the paper's figures hold")
		}
	}
	return failures
}

// newestFolder is the newest results folder of run under dir.
func newestFolder(dir, run string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("results: %w", err)
	}
	newest := ""
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), run+"-") && e.Name() > newest {
			newest = e.Name()
		}
	}
	if newest == "" {
		return "", fmt.Errorf("grid run left no results folder %s-* in %s", run, dir)
	}
	return filepath.Join(dir, newest), nil
}

func readSummary(path string) (*results.Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s results.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// writeScenario writes a Sec. 6.3 scenario's instance (as grid simulate
// builds it, seed 1) as a topology and a jobs file.
func writeScenario(dir, name string, workers int) (topoFile, jobsFile string, err error) {
	i := slices.IndexFunc(solver.PaperScenarios(), func(s solver.Scenario) bool { return s.Name == name })
	if i < 0 {
		return "", "", fmt.Errorf("no scenario %q", name)
	}
	t, jobs, err := solver.PaperScenarios()[i].Build(workers, 1)
	if err != nil {
		return "", "", err
	}
	t.Name = name
	data, err := topo.Marshal(t)
	if err != nil {
		return "", "", err
	}
	topoFile, jobsFile = filepath.Join(dir, name+".yaml"), filepath.Join(dir, name+"-jobs.yaml")
	if err := os.WriteFile(topoFile, data, 0o644); err != nil {
		return "", "", err
	}
	var b strings.Builder
	b.WriteString("jobs:\n")
	for _, j := range jobs {
		fmt.Fprintf(&b, "  - name: %s\n    ps: %s\n    workers: [%s]\n", j.Name, j.PS, strings.Join(j.Workers, ", "))
	}
	return topoFile, jobsFile, os.WriteFile(jobsFile, []byte(b.String()), 0o644)
}
