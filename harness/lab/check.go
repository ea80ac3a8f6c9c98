package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/grid-ina/grid/harness/p4test"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// CheckSpec is a lab's check.json: what `grid lab check` verifies of a
// student's work. grid's own labs (p4/labs) have one; course folders do
// not.
type CheckSpec struct {
	// STF is the folder of STF packet tests run on the lab's program, on
	// grid's engine ("" for none).
	STF string `json:"stf"`
	// Solve, when set, solves the lab's topology and checks the plan.
	Solve *SolveCheck `json:"solve"`
}

// SolveCheck checks the routing plan of a topology the student edits.
type SolveCheck struct {
	Topology  string `json:"topology"`
	Algorithm string `json:"algorithm"`
	// MinLambdaGbps is the slowest worker's rate the plan must reach.
	MinLambdaGbps float64 `json:"min_lambda_gbps"`
	// AggregatesAt are switches the plan must aggregate at.
	AggregatesAt []string `json:"aggregates_at"`
}

// Check runs a lab's check on program (the lab's own program when "") and,
// for plan checks, on topology (the lab's when ""), and writes a line per
// test to out. It returns whether everything passed; the
// error is for a lab that cannot be checked at all.
func Check(ctx context.Context, dir, program, topology string, out io.Writer) (bool, error) {
	specPath := filepath.Join(dir, "check.json")
	data, err := os.ReadFile(specPath)
	if errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("%s: no check.json: grid lab check checks grid's own labs (p4/labs)", dir)
	}
	if err != nil {
		return false, err
	}
	var spec CheckSpec
	if err := strictUnmarshal(data, &spec); err != nil {
		return false, fmt.Errorf("%s: %w", specPath, err)
	}
	passed, total := 0, 0
	if spec.STF != "" {
		if program == "" {
			if program, err = labProgram(dir); err != nil {
				return false, err
			}
		}
		cases, err := p4test.LoadSuite(filepath.Join(dir, spec.STF))
		if err != nil {
			return false, err
		}
		for _, r := range p4test.RunSuite(ctx, p4test.Engine, p4test.RemoteConfig{}, program, cases) {
			total++
			if r.Passed() {
				passed++
				fmt.Fprintf(out, "PASS %s\n", r.Case.Name)
				continue
			}
			fmt.Fprintf(out, "FAIL %s", r.Report())
		}
	}
	if spec.Solve != nil {
		total++
		path := filepath.Join(dir, spec.Solve.Topology)
		if topology != "" {
			path = topology
		}
		msg, err := spec.Solve.run(ctx, path)
		if err != nil {
			fmt.Fprintf(out, "FAIL solve: %v\n", err)
		} else {
			passed++
			fmt.Fprintf(out, "PASS solve: %s\n", msg)
		}
	}
	fmt.Fprintf(out, "%d of %d checks pass\n", passed, total)
	return passed == total && total > 0, nil
}

// labProgram is the .p4 program of a lab folder: the Makefile's
// DEFAULT_PROG or the only one.
func labProgram(dir string) (string, error) {
	vars, err := makeVars(filepath.Join(dir, "Makefile"))
	if err != nil {
		return "", err
	}
	if p := vars["DEFAULT_PROG"]; p != "" {
		return filepath.Join(dir, p), nil
	}
	sources, _ := filepath.Glob(filepath.Join(dir, "*.p4"))
	if len(sources) != 1 {
		return "", fmt.Errorf("%s: %d .p4 programs: name one with --program", dir, len(sources))
	}
	return sources[0], nil
}

func (sc *SolveCheck) run(ctx context.Context, path string) (string, error) {
	t, err := topo.Load(path)
	if err != nil {
		return "", err
	}
	jobs, err := workload.Default(t)
	if err != nil {
		return "", err
	}
	in, err := solver.NewInstance(t, jobs)
	if err != nil {
		return "", err
	}
	plan, err := solver.Solve(ctx, in, sc.Algorithm, solver.Options{Seed: 1})
	if err != nil {
		return "", err
	}
	var at []string
	for _, j := range plan.Jobs {
		for _, a := range j.Aggregators {
			if !slices.Contains(at, a.Switch) {
				at = append(at, a.Switch)
			}
		}
	}
	for _, s := range sc.AggregatesAt {
		if !slices.Contains(at, s) {
			return "", fmt.Errorf("%s aggregates at %v, not at %s (lambda %.3g Gbps)", sc.Algorithm, at, s, plan.LambdaGbps)
		}
	}
	if plan.LambdaGbps < sc.MinLambdaGbps {
		return "", fmt.Errorf("%s: the slowest worker sends %.3g Gbps, want at least %.3g", sc.Algorithm, plan.LambdaGbps, sc.MinLambdaGbps)
	}
	return fmt.Sprintf("%s aggregates at %v; the slowest worker sends %.3g Gbps", sc.Algorithm, at, plan.LambdaGbps), nil
}
