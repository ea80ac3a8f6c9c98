package p4test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/grid-ina/grid/harness/stf"
)

// SuiteCase is one STF file of a program's regression suite.
type SuiteCase struct {
	Name string // file name without .stf
	Path string
	// Defines are the preprocessor definitions of the file's "# build:"
	// lines (stf.ReadBuild), which its program is compiled with.
	Defines map[string]string
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

// LoadSuite lists the STF files in dir, by name, with their build
// definitions.
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
		defines, err := stf.ReadBuild(p)
		if err != nil {
			return nil, err
		}
		cases = append(cases, SuiteCase{Name: strings.TrimSuffix(filepath.Base(p), ".stf"), Path: p, Defines: defines})
	}
	return cases, nil
}

// RunSuite runs the cases on a kind of target, each on a fresh switch: the
// engine in this process, or a switch process (grid switch,
// simple_switch_grpc) on veth ports driven over P4Runtime, configured by
// cfg. The program at programPath is compiled once per set of definitions
// the cases need, by the compiler that goes with the target (p4c-bm2-ss
// for bmv2). The STF files are the same for every target.
func RunSuite(ctx context.Context, kind TargetKind, cfg RemoteConfig, programPath string, cases []SuiteCase) []SuiteResult {
	type build struct {
		prog Program
		err  error
	}
	builds := map[string]build{}
	out := make([]SuiteResult, len(cases))
	for i, c := range cases {
		key := definesKey(c.Defines)
		b, done := builds[key]
		if !done {
			b.prog, b.err = CompileFor(ctx, kind, programPath, CompileOptions{Defines: c.Defines})
			if b.err != nil {
				b.err = fmt.Errorf("compile %s: %w", programPath, b.err)
			}
			builds[key] = b
		}
		out[i] = SuiteResult{Case: c, Err: b.err}
	}
	// bmv2's cases mostly wait (its grace after each packet, its Thrift
	// CLI), so two run at once, each on its own switch and namespace.
	parallel := 1
	if kind == Bmv2 {
		parallel = 2
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for i := range work {
				r := &out[i]
				var cmds []stf.Command
				if cmds, r.Err = stf.ParseFile(r.Case.Path); r.Err == nil {
					r.Result, r.Err = RunSTF(ctx, kind, cfg, builds[definesKey(r.Case.Defines)].prog, cmds, stf.Options{})
				}
			}
		})
	}
	for i := range out {
		if out[i].Err == nil {
			work <- i
		}
	}
	close(work)
	wg.Wait()
	return out
}

// definesKey is a set of definitions as canonical text.
func definesKey(defines map[string]string) string {
	var key strings.Builder
	for _, name := range slices.Sorted(maps.Keys(defines)) {
		fmt.Fprintf(&key, "%s=%s ", name, defines[name])
	}
	return key.String()
}
