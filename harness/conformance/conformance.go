// Package conformance runs p4c's v1model STF test programs on the embedded
// engine and reports, per program, whether its packet test passes and why
// not. It is the tool that finds bugs in the engine (mode "reference": the
// JSON real p4c produced) and in the embedded compiler (mode "ours").
//
// The corpus directory (by default <repo>/../shared/p4c-conformance) holds
// programs/NAME.p4 with NAME.stf and, optionally, reference/NAME.json and
// reference/verdicts.txt ("NAME pass" or "NAME compile-error", ... : what
// real p4c and bmv2 made of each program).
package conformance

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/stf"
)

// Mode says where a program's bmv2 JSON comes from.
type Mode string

// Modes.
const (
	// Ours compiles NAME.p4 with the embedded compiler.
	Ours Mode = "ours"
	// Reference loads reference/NAME.json, produced by real p4c.
	Reference Mode = "reference"
)

// Stage is where a program's test stopped.
type Stage string

// Stages, in the order a test goes through them.
const (
	StageCompile Stage = "compile" // our compiler rejected the program
	StageLoad    Stage = "load"    // the engine rejected the JSON
	StageSTF     Stage = "stf"     // the STF file does not parse
	StageRun     Stage = "run"     // a command failed, a check failed or packets differ
	StageCrash   Stage = "crash"   // a panic, caught
	StageTimeout Stage = "timeout" // the program did not finish in time
	StagePass    Stage = "pass"
)

// DefaultTimeout bounds one program when Options.Timeout is 0. Programs
// take milliseconds; only a hang comes near it.
const DefaultTimeout = 20 * time.Second

// CompileFunc compiles a P4 file to bmv2 JSON (the embedded compiler).
type CompileFunc func(p4File string) ([]byte, error)

// Options configure a run.
type Options struct {
	Dir  string // the corpus directory, holding programs/ and reference/
	Mode Mode
	// Run, when set, selects the programs whose name it matches.
	Run *regexp.Regexp
	// Compile is the compiler for mode Ours.
	Compile CompileFunc
	// Timeout bounds one program (compile, load and test); 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Parallel is how many programs run at once; 0 means GOMAXPROCS.
	Parallel int
}

// Verdict is the outcome for one program.
type Verdict struct {
	Name  string
	Stage Stage
	// Reason is one line: why the test failed ("" when it passed).
	Reason string
	// Detail is the full account: the STF runner's report with byte diffs,
	// or the whole compiler or loader error.
	Detail string
	// Reference is what real p4c and bmv2 made of the program according to
	// verdicts.txt ("pass", "compile-error", ...); "" when unknown.
	Reference string
	// ReferenceJSONPasses is set in mode Ours when our JSON loads or runs
	// wrongly but real p4c's JSON of the same program passes on the
	// engine: the bug is in the compiler, not the engine.
	ReferenceJSONPasses bool
	// Warnings counts commands the switch rejected and false counter
	// checks, which do not fail a test (Detail lists them).
	Warnings int
	Duration time.Duration
}

// Passed reports whether the program's test passed.
func (v Verdict) Passed() bool { return v.Stage == StagePass }

// Regression reports whether real bmv2 passes the test but we do not.
func (v Verdict) Regression() bool { return !v.Passed() && v.Reference == "pass" }

// Report is the outcome of a whole run, sorted by program name.
type Report struct {
	Mode     Mode
	Verdicts []Verdict
	Duration time.Duration
}

// Passed counts the programs whose test passed.
func (r *Report) Passed() int {
	n := 0
	for _, v := range r.Verdicts {
		if v.Passed() {
			n++
		}
	}
	return n
}

// Regressions lists the programs that pass on real bmv2 and fail here.
func (r *Report) Regressions() []Verdict {
	var out []Verdict
	for _, v := range r.Verdicts {
		if v.Regression() {
			out = append(out, v)
		}
	}
	return out
}

// Run tests every selected program of the corpus.
func Run(opts Options) (*Report, error) {
	if opts.Mode != Ours && opts.Mode != Reference {
		return nil, fmt.Errorf("mode %q: use %q or %q", opts.Mode, Ours, Reference)
	}
	if opts.Mode == Ours && opts.Compile == nil {
		return nil, errors.New("mode ours needs the embedded compiler")
	}
	names, err := Programs(opts.Dir)
	if err != nil {
		return nil, err
	}
	if opts.Run != nil {
		var sel []string
		for _, n := range names {
			if opts.Run.MatchString(n) {
				sel = append(sel, n)
			}
		}
		names = sel
	}
	reference, err := readVerdicts(filepath.Join(opts.Dir, "reference", "verdicts.txt"))
	if err != nil {
		return nil, err
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Parallel <= 0 {
		opts.Parallel = runtime.GOMAXPROCS(0)
	}
	start := time.Now()
	report := &Report{Mode: opts.Mode, Verdicts: make([]Verdict, len(names))}
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < opts.Parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				v := runWithTimeout(opts, names[i])
				v.Reference = reference[names[i]]
				report.Verdicts[i] = v
			}
		}()
	}
	for i := range names {
		work <- i
	}
	close(work)
	wg.Wait()
	report.Duration = time.Since(start)
	return report, nil
}

// Programs lists the corpus's programs: every programs/NAME.p4 that has a
// NAME.stf (the include-only helper files have none).
func Programs(dir string) ([]string, error) {
	stfs, err := filepath.Glob(filepath.Join(dir, "programs", "*.stf"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range stfs {
		name := strings.TrimSuffix(filepath.Base(s), ".stf")
		if _, err := os.Stat(filepath.Join(dir, "programs", name+".p4")); err == nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no programs/NAME.p4 with NAME.stf in %s", dir)
	}
	sort.Strings(names)
	return names, nil
}

// readVerdicts reads "NAME VERDICT" lines; a missing file means no
// reference verdicts.
func readVerdicts(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"NAME VERDICT\", got %q", path, line, sc.Text())
		}
		out[fields[0]] = fields[1]
	}
	return out, sc.Err()
}

// runWithTimeout runs one program in its own goroutine so that a program
// that never finishes (a parser loop the engine does not bound, say) costs
// the timeout, not the whole run. The goroutine of a timed-out program is
// abandoned.
func runWithTimeout(opts Options, name string) Verdict {
	start := time.Now()
	done := make(chan Verdict, 1)
	go func() { done <- runOne(opts, name) }()
	select {
	case v := <-done:
		v.Duration = time.Since(start)
		return v
	case <-time.After(opts.Timeout):
		return Verdict{Name: name, Stage: StageTimeout, Reason: fmt.Sprintf("did not finish in %v", opts.Timeout), Duration: time.Since(start)}
	}
}

func runOne(opts Options, name string) (v Verdict) {
	v.Name = name
	defer func() {
		if p := recover(); p != nil {
			v.Stage = StageCrash
			v.Reason = fmt.Sprintf("panic: %v", p)
			v.Detail = string(debug.Stack())
		}
	}()
	prog := filepath.Join(opts.Dir, "programs", name+".p4")
	var programJSON []byte
	var err error
	switch opts.Mode {
	case Ours:
		programJSON, err = opts.Compile(prog)
		if err != nil {
			// Diagnostics name the file by the path given; the program's
			// name already says which file it is.
			msg := strings.ReplaceAll(err.Error(), filepath.Join(opts.Dir, "programs")+string(filepath.Separator), "")
			return failed(v, StageCompile, msg)
		}
	case Reference:
		programJSON, err = os.ReadFile(filepath.Join(opts.Dir, "reference", name+".json"))
		if err != nil {
			return failed(v, StageLoad, fmt.Sprintf("no reference JSON: %v", err))
		}
	}
	cmds, err := stf.ParseFile(filepath.Join(opts.Dir, "programs", name+".stf"))
	if err != nil {
		return failed(v, StageSTF, err.Error())
	}
	v = runSTF(v, programJSON, cmds)
	if opts.Mode == Ours && !v.Passed() {
		if ref, err := os.ReadFile(filepath.Join(opts.Dir, "reference", name+".json")); err == nil {
			v.ReferenceJSONPasses = runSTF(Verdict{}, ref, cmds).Passed()
		}
	}
	return v
}

// runSTF runs the test on one bmv2 JSON and fills in the verdict.
// Tests run in stf's Compat mode: commands the switch rejects and false
// counter checks are warnings, as with p4c's bmv2stf.py.
func runSTF(v Verdict, programJSON []byte, cmds []stf.Command) Verdict {
	result, err := stf.Run(programJSON, cmds, stf.Options{Compat: true})
	if err != nil {
		return failed(v, StageLoad, err.Error())
	}
	v.Warnings = len(result.Warnings)
	if !result.Passed() {
		var b strings.Builder
		result.Report(&b)
		v = failed(v, StageRun, result.Summary())
		v.Detail = b.String()
		for _, f := range result.Failures {
			if f.Kind == stf.Crashed {
				v.Stage = StageCrash
			}
		}
		return v
	}
	v.Stage = StagePass
	if v.Warnings > 0 {
		var b strings.Builder
		result.Report(&b)
		v.Detail = b.String()
	}
	return v
}

// failed fills in a failure whose reason is the first line of msg.
func failed(v Verdict, stage Stage, msg string) Verdict {
	v.Stage = stage
	first, _, _ := strings.Cut(msg, "\n")
	v.Reason = first
	v.Detail = msg
	return v
}

// Write prints one line per program, then the totals and the programs real
// bmv2 passes that fail here. With verbose, failures come with their full
// detail (byte diffs, whole error lists).
func (r *Report) Write(w io.Writer, verbose bool) {
	width := 0
	for _, v := range r.Verdicts {
		width = max(width, len(v.Name))
	}
	for _, v := range r.Verdicts {
		status := "PASS"
		if !v.Passed() {
			status = "FAIL"
		}
		line := fmt.Sprintf("%s  %-*s", status, width, v.Name)
		if v.Passed() && v.Warnings > 0 {
			line += fmt.Sprintf("  (%d warning(s))", v.Warnings)
		}
		if !v.Passed() {
			line += fmt.Sprintf("  %s: %s", v.Stage, v.Reason)
			if v.Reference != "" && v.Reference != "pass" {
				line += fmt.Sprintf(" (real p4c/bmv2: %s)", v.Reference)
			}
			if v.ReferenceJSONPasses {
				line += " [real p4c's JSON passes: a compiler bug]"
			}
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
		if verbose && v.Detail != "" && v.Detail != v.Reason {
			for _, l := range strings.Split(strings.TrimRight(v.Detail, "\n"), "\n") {
				fmt.Fprintf(w, "      %s\n", l)
			}
		}
	}
	fmt.Fprintf(w, "\n%d of %d pass (JSON: %s, %.1fs)\n", r.Passed(), len(r.Verdicts), r.Mode, r.Duration.Seconds())
	stages := map[Stage]int{}
	for _, v := range r.Verdicts {
		if !v.Passed() {
			stages[v.Stage]++
		}
	}
	if len(stages) > 0 {
		var parts []string
		for _, s := range []Stage{StageCompile, StageLoad, StageSTF, StageRun, StageCrash, StageTimeout} {
			if stages[s] > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", s, stages[s]))
			}
		}
		fmt.Fprintf(w, "failures by stage: %s\n", strings.Join(parts, ", "))
	}
	if regs := r.Regressions(); len(regs) > 0 {
		names := make([]string, len(regs))
		for i, v := range regs {
			names[i] = v.Name
		}
		fmt.Fprintf(w, "%d pass on real bmv2 but fail here: %s\n", len(regs), strings.Join(names, " "))
	}
}

// DefaultDir is <repo>/../shared/p4c-conformance, the repository being the
// directory holding go.mod at or above the working directory.
func DefaultDir() (string, error) {
	corpus, err := repo.Shared("p4c-conformance", "programs")
	if err != nil {
		return "", fmt.Errorf("no conformance corpus: %w", err)
	}
	return filepath.Dir(corpus), nil
}
