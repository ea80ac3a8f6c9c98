package aggregator

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/grid-ina/grid/harness/p4test"
	"github.com/grid-ina/grid/harness/stf"
)

// SuiteCase is one STF file of the regression suite.
type SuiteCase struct {
	Name  string // file name without .stf
	Path  string
	Build Build // from the file's "# build: NAME=VALUE ..." line
}

// SuiteResult is the outcome of one case.
type SuiteResult struct {
	Case   SuiteCase
	Result *stf.Result
	Err    error // compile, load or parse error
}

// Passed reports whether the case ran and every expectation held.
func (r SuiteResult) Passed() bool { return r.Err == nil && r.Result != nil && r.Result.Passed() }

// Report is a readable account of the outcome.
func (r SuiteResult) Report() string {
	if r.Err != nil {
		return fmt.Sprintf("%s: ERROR %v\n", r.Case.Name, r.Err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s: %s\n", r.Case.Name, r.Result.Summary())
	if !r.Result.Passed() {
		r.Result.Report(&b)
	}
	return b.String()
}

// LoadSuite lists the STF files in dir with their build parameters.
func LoadSuite(dir string) ([]SuiteCase, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.stf"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no .stf files in %s", dir)
	}
	sort.Strings(paths)
	var cases []SuiteCase
	for _, p := range paths {
		b, err := readBuild(p)
		if err != nil {
			return nil, err
		}
		cases = append(cases, SuiteCase{Name: strings.TrimSuffix(filepath.Base(p), ".stf"), Path: p, Build: b})
	}
	return cases, nil
}

// readBuild reads the "# build:" line of an STF file (stf.ReadBuild): the
// preprocessor definitions its program needs (GRID_UNITS=M, GRID_VALUES_64).
func readBuild(path string) (Build, error) {
	defines, err := stf.ReadBuild(path)
	if err != nil {
		return Build{}, err
	}
	var b Build
	for name, value := range defines {
		switch name {
		case "GRID_VALUES_64":
			b.Values = 64
		case "GRID_UNITS":
			n, err := strconv.Atoi(value)
			if err != nil || n <= 0 {
				return b, fmt.Errorf("%s: GRID_UNITS=%q is not a positive number", path, value)
			}
			b.Units = n
		default:
			return b, fmt.Errorf("%s: unknown build definition %q (GRID_UNITS, GRID_VALUES_64)", path, name)
		}
	}
	return b, nil
}

// RunSuite compiles the program at programPath once per build the cases
// need and runs every case on the embedded engine.
func RunSuite(programPath string, cases []SuiteCase) []SuiteResult {
	return RunSuiteOn(context.Background(), p4test.Engine, p4test.RemoteConfig{}, programPath, cases)
}

// RunSuiteOn runs the cases on a kind of target, each on a fresh switch:
// the engine in this process, or a switch process (grid switch,
// simple_switch_grpc) on veth ports driven over P4Runtime, configured by
// cfg. The program is compiled once per build the cases need, by the
// compiler that goes with the target (p4c-bm2-ss for bmv2). The STF files
// are the same for every target.
func RunSuiteOn(ctx context.Context, kind p4test.TargetKind, cfg p4test.RemoteConfig, programPath string, cases []SuiteCase) []SuiteResult {
	compiled := map[Build]p4test.Program{}
	compileErr := map[Build]error{}
	var out []SuiteResult
	for _, c := range cases {
		r := SuiteResult{Case: c}
		prog, done := compiled[c.Build]
		if !done && compileErr[c.Build] == nil {
			var err error
			if prog, err = compileFor(ctx, kind, programPath, c.Build); err != nil {
				compileErr[c.Build] = err
			} else {
				compiled[c.Build] = prog
			}
		}
		if err := compileErr[c.Build]; err != nil {
			r.Err = err
			out = append(out, r)
			continue
		}
		cmds, err := stf.ParseFile(c.Path)
		if err != nil {
			r.Err = err
			out = append(out, r)
			continue
		}
		r.Result, r.Err = p4test.RunSTF(ctx, kind, cfg, prog, cmds, stf.Options{})
		out = append(out, r)
	}
	return out
}

// compileFor compiles the aggregator with a build's parameters for a kind
// of target.
func compileFor(ctx context.Context, kind p4test.TargetKind, path string, b Build) (p4test.Program, error) {
	if err := b.check(); err != nil {
		return p4test.Program{}, err
	}
	prog, err := p4test.CompileFor(ctx, kind, path, p4test.CompileOptions{Defines: b.Defines()})
	if err != nil {
		return p4test.Program{}, fmt.Errorf("compile %s: %w", path, err)
	}
	return prog, nil
}
