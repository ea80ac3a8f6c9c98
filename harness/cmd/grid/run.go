package main

// grid run: the whole experiment (harness/runner): solve the routing plans,
// build the topology, load the aggregator into a P4 switch per switch,
// install the plan, run the jobs' workers and PS with real gradients, count
// the traffic, write the results, tear everything down.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/controller"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/p4test"
	"github.com/grid-ina/grid/harness/results"
	"github.com/grid-ina/grid/harness/runner"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// algoAll is the --algo value that runs every algorithm's plan.
const algoAll = "all"

func init() {
	register(&cli.Command{
		Name:  "run",
		Usage: "run an experiment: real gradients through P4 switches on an emulated topology, with results",
		Description: "run loads a topology (the paper's 3-switch testbed by default) and its training jobs, estimates\n" +
			"what the experiment will take of this machine (refusing, unless --force, one it cannot hold),\n" +
			"solves the chosen algorithm's plan and runs it for real: it builds the topology\n" +
			"as network namespaces, starts an embedded P4 switch (grid switch) per switch, loads the GRID\n" +
			"aggregator (--program) into each over P4Runtime and installs the plan; then each job's PS and\n" +
			"workers (grid ps, grid worker) send --fragments gradient fragments per worker through the\n" +
			"switches, which aggregate where the plan says, and check every sum exactly. With --algo all\n" +
			"every algorithm's plan runs in turn on the same fabric (a worker split over several nodes sends\n" +
			"each fragment to one of them in the plan's shares; a plan the data plane cannot follow is\n" +
			"reported and skipped). A table shows per plan and\n" +
			"job whether the sums were exact, the slowest worker's time and goodput, resends, control\n" +
			"packets and the bytes that reached the PS; link traffic is sampled all along. A plan whose\n" +
			"figures were disturbed (other load on the machine, a CPU-bound run, many resends) is marked\n" +
			"DISTURBED with the reason, here and in summary.json.\n\n" +
			"The results folder results/RUN-TIME/ (see results/README.md) gets summary.json, traffic.csv,\n" +
			"jobs.csv, the switches' counters (switches.csv, aggregation.csv), plots (PNG), the plan, the\n" +
			"comparison, a drawing of the topology, and logs/ with the switches' logs and the endpoints'\n" +
			"specs, reports and logs. Everything is torn down at the end, also on Ctrl-C. Exits non-zero\n" +
			"when a sum is wrong or a job did not finish. Needs root.\n\n" +
			"Every rate of the model (links, switch capacities C_s, PS ingress) is emulated times one factor,\n" +
			"--scale: by default the largest at which the plans stay within an eighth of what this machine's\n" +
			"emulated network forwards (grid calibrate), so rates are bound by the emulated links and the\n" +
			"switches' capacity meters, not by the CPU. The run prints every rate as emulated and scaled back,\n" +
			"and per algorithm the slowest worker's measured sending rate against the plan's lambda\n" +
			"(fidelity); below 0.9 it says FIDELITY LOW and exits non-zero, above 1.02 FIDELITY HIGH.\n\n" +
			"Example:\n   sudo grid run\n   sudo grid run --algo all --fragments 256\n" +
			"   sudo grid run --algo all --fragments 1024 --scale 0.0002\n" +
			"   sudo grid run --topo topologies/paper-fig1.yaml --jobs workloads/jobs/fig1-two-jobs.yaml --keep",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "topo", Value: "topologies/testbed.yaml", Usage: "topology `FILE` (the default is in the grid tree, from any directory)"},
			&cli.StringFlag{Name: "jobs", Usage: "jobs `FILE`; default: one job with the topology's PS and all its workers"},
			&cli.StringFlag{Name: "algo", Value: solver.DefaultAlgorithm, Usage: "routing `ALGO` whose plan runs, a comma-separated list of them, or \"all\""},
			&cli.StringFlag{Name: "program", Value: "p4/aggregator/aggregator.p4", Usage: "the aggregator's P4 `FILE`"},
			&cli.IntFlag{Name: "fragments", Value: runner.DefaultFragments, Usage: "gradient fragments each worker sends (`N`)"},
			&cli.IntFlag{Name: "values", Value: gradproto.DefaultValues, Usage: "int32 values per packet, 32 or 64 (`N`)"},
			&cli.Uint64Flag{Name: "seed", Value: runner.DefaultSeed, Usage: "`SEED` of the gradients"},
			&cli.DurationFlag{Name: "timeout", DefaultText: "derived from the first windows' work, 100ms to 1s",
				Usage: "workers' initial retransmission timeout (`DURATION`), until they measure round trips"},
			&cli.DurationFlag{Name: "deadline", DefaultText: "derived from the work: fragments, workers, hops, the PS's link rate",
				Usage: "longest a plan's jobs may run once started (`DURATION`)"},
			&cli.StringFlag{Name: "name", Usage: "run name (default: from the topology file)"},
			&cli.StringFlag{Name: "results", Value: "results", Usage: "`DIR` that receives the run's folder (the default is the grid tree's results/)"},
			&cli.StringFlag{Name: "scale", Value: scaleAuto, Usage: "emulate every rate of the model (links, switch capacities, PS ingress) times `FACTOR` (0.001 runs 100Gbps links at 100Mbps), or \"auto\": the largest factor at which the plans stay within an eighth of what this machine's emulated network forwards (grid calibrate; measured once and kept in " + runner.CalibrationFile + ")"},
			&cli.StringFlag{Name: "link-rate", Usage: "shape every link to `RATE` (e.g. 20Mbps) instead of the topology's rates (an override that flattens unequal rates; the scale is then 1 unless --scale says otherwise)"},
			&cli.StringFlag{Name: "backend", Value: backendGrid, Usage: "the switches: grid (grid switch) or bmv2 (real simple_switch_grpc, one per switch; no per-port delay or loss)"},
			&cli.StringFlag{Name: "compiler", Value: compilerGrid, Usage: "the aggregator's compiler: grid (grid p4c) or p4c (p4c-bm2-ss on PATH)"},
			&cli.BoolFlag{Name: "keep", Usage: "leave the topology and its switches up (remove them later with 'grid down RUN')"},
			&cli.BoolFlag{Name: "force", Usage: "run even when the estimate says this machine cannot hold the experiment"},
			&cli.BoolFlag{Name: "nodes", Usage: "list every node and interface of the fabric once it is built, not just how many there are ('grid ls RUN' lists them while it runs)"},
		},
		Action: runExperiment,
	})
}

// The switch back ends and compilers of grid run.
const (
	backendGrid  = "grid"
	backendBmv2  = "bmv2"
	compilerGrid = "grid"
	compilerP4c  = "p4c"
)

// switchDescription and compilerDescription say in the results what ran
// the switches and compiled their program, and what differs on bmv2.
var (
	switchDescription = map[string]string{
		backendGrid: "grid switch",
		backendBmv2: "bmv2 simple_switch_grpc (no per-port delay or loss: links the kernel could not impair ran without)",
	}
	compilerDescription = map[string]string{compilerGrid: "grid p4c", compilerP4c: "p4c-bm2-ss"}
)

// runBackend is the controller's back end for --backend.
func runBackend(name string) controller.Backend {
	if name == backendBmv2 {
		return controller.Bmv2{}
	}
	return nil
}

// compileAggregator compiles the aggregator with grid's compiler or with
// p4c-bm2-ss; either JSON runs on either back end.
func compileAggregator(ctx context.Context, compiler, program string, b aggregator.Build) (*p4c.Result, error) {
	if compiler != compilerP4c {
		return aggregator.Compile(program, b)
	}
	out, err := p4test.CompileWithP4c(ctx, program, p4test.CompileOptions{Defines: b.Defines()})
	if err != nil {
		return nil, err
	}
	j, err := bmv2json.Parse(out.JSON)
	if err != nil {
		return nil, fmt.Errorf("p4c-bm2-ss's JSON for %s: %w", program, err)
	}
	return &p4c.Result{Name: strings.TrimSuffix(filepath.Base(program), ".p4"), JSON: out.JSON, Program: j, P4Info: out.P4Info}, nil
}

// checkRunFlags refuses flag values that could not run, naming the flag,
// before anything is read, solved or built.
func checkRunFlags(c *cli.Context) error {
	for _, flag := range []string{"topo", "program", "jobs"} {
		if f := pathFlag(c, flag); f != "" {
			if fi, err := os.Stat(f); err != nil {
				return fmt.Errorf("--%s: %w", flag, err)
			} else if fi.IsDir() {
				return fmt.Errorf("--%s %s: a directory, not a file", flag, f)
			}
		}
	}
	if res := pathFlag(c, "results"); res != "" {
		if fi, err := os.Stat(res); err == nil && !fi.IsDir() {
			return fmt.Errorf("--results %s: not a directory", res)
		}
	}
	if algo := c.String("algo"); algo != algoAll {
		for _, a := range strings.Split(algo, ",") {
			if !isAlgorithm(a) {
				return fmt.Errorf("--algo %q: unknown algorithm %q (one of %v, a list of them, or %s)", algo, a, solver.Algorithms(), algoAll)
			}
		}
	}
	if n := c.Int("fragments"); n < 1 {
		return fmt.Errorf("--fragments %d: each worker sends at least 1 fragment", n)
	}
	if v := c.Int("values"); v != 32 && v != 64 {
		return fmt.Errorf("--values %d: the aggregator carries 32 or 64 values per packet", v)
	}
	if c.Uint64("seed") == 0 {
		return errors.New("--seed 0: seeds start at 1")
	}
	for _, flag := range []string{"timeout", "deadline"} {
		// Unset, they are derived from the work.
		if d := c.Duration(flag); c.IsSet(flag) && d <= 0 {
			return fmt.Errorf("--%s %v: want a positive duration, e.g. 100ms or 30s", flag, d)
		}
	}
	if name := c.String("name"); name != "" {
		if err := fabric.CheckRunName(name); err != nil {
			return fmt.Errorf("--name: %w", err)
		}
	}
	if _, err := scaleFlag(c); err != nil {
		return err
	}
	if rate := c.String("link-rate"); rate != "" {
		bw, err := topo.ParseBandwidth(rate)
		if err == nil {
			err = topo.CheckLinkBandwidth(bw)
		}
		if err != nil {
			return fmt.Errorf("--link-rate: %w", err)
		}
	}
	if err := checkBackend("backend", c.String("backend")); err != nil {
		return err
	}
	return checkCompiler(c)
}

// checkBackend refuses a back end that is not grid or bmv2, or bmv2
// without simple_switch_grpc on PATH, naming the flag.
func checkBackend(flag, b string) error {
	switch b {
	case backendGrid:
	case backendBmv2:
		if _, err := exec.LookPath(controller.SimpleSwitchGRPC); err != nil {
			return fmt.Errorf("--%s bmv2: %w (scripts/setup.sh puts the p4tools bundle's bin/ on PATH)", flag, err)
		}
	default:
		return fmt.Errorf("--%s %q: want %s or %s", flag, b, backendGrid, backendBmv2)
	}
	return nil
}

// checkSwitchFlags checks grid up's --switches, --program and --compiler.
func checkSwitchFlags(c *cli.Context) error {
	if !c.IsSet("switches") {
		return nil
	}
	if err := checkBackend("switches", c.String("switches")); err != nil {
		return err
	}
	if _, err := os.Stat(pathFlag(c, "program")); err != nil {
		return fmt.Errorf("--program: %w", err)
	}
	return checkCompiler(c)
}

// checkCompiler refuses a --compiler that is not grid or p4c, or p4c
// without p4c-bm2-ss on PATH.
func checkCompiler(c *cli.Context) error {
	switch comp := c.String("compiler"); comp {
	case compilerGrid:
	case compilerP4c:
		if _, err := exec.LookPath(p4test.P4cCompiler); err != nil {
			return fmt.Errorf("--compiler p4c: %w (scripts/setup.sh puts the p4tools bundle's bin/ on PATH)", err)
		}
	default:
		return fmt.Errorf("--compiler %q: want %s or %s", comp, compilerGrid, compilerP4c)
	}
	return nil
}

func runExperiment(c *cli.Context) error {
	if err := checkRunFlags(c); err != nil {
		return err
	}
	algo := c.String("algo")
	topoFile, program, resultsDir := pathFlag(c, "topo"), pathFlag(c, "program"), pathFlag(c, "results")
	if err := fabric.CheckRoot(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	t, err := topo.Load(topoFile)
	if err != nil {
		return err
	}
	if rate := c.String("link-rate"); rate != "" {
		if err := setLinkRates(t, rate); err != nil {
			return err
		}
	}
	jobs, err := workload.Default(t)
	if f := c.String("jobs"); f != "" {
		jobs, err = workload.Load(f, t)
	}
	if err != nil {
		return err
	}
	runName := c.String("name")
	if runName == "" {
		runName = fabric.DefaultRunName(t)
	}
	if _, err := fabric.LoadState(runName); err == nil {
		return fmt.Errorf("run %q exists: remove it with 'grid down %s' or choose another --name", runName, runName)
	}
	values := c.Int("values")
	slog.Info("compiling the aggregator", "program", program, "values", values, "compiler", c.String("compiler"))
	prog, err := compileAggregator(ctx, c.String("compiler"), program, aggregator.Build{Values: values})
	if err != nil {
		return err
	}
	in, err := solver.NewInstance(t, jobs)
	if err != nil {
		return err
	}
	w := c.App.Writer
	algos := strings.Split(algo, ",")
	if algo == algoAll {
		algos = solver.Algorithms()
	}
	if err := estimateRun(c, t, jobs, len(algos)); err != nil {
		return err
	}
	// Only the algorithms that run are solved: an exact solve of a large
	// fabric can take minutes and is wasted on a table.
	slog.Info("solving routing plans", "topology", topoFile, "jobs", len(jobs), "algorithms", algos)
	var plans []*solver.Plan
	for _, a := range algos {
		p, err := solver.Solve(ctx, in, a, solver.Options{Seed: 1, LP: lp.Auto})
		if err != nil {
			return fmt.Errorf("solve %s: %w", a, err)
		}
		plans = append(plans, p)
	}
	run, kept := plans, plans[0]
	for _, p := range plans {
		if p.Algorithm == solver.DefaultAlgorithm {
			kept = p
		}
	}
	var comparison bytes.Buffer
	if err := solver.WriteComparison(&comparison, plans); err != nil {
		return err
	}
	fmt.Fprint(w, comparison.String())

	// The switches' and endpoints' logs, specs and reports go to the
	// results as logs/. The folder is named after the run, so that should
	// this process die without removing it, 'grid clean' does; with --keep
	// the switches keep logging there until 'grid down' removes it.
	work, err := fabric.TempDir(runName)
	if err != nil {
		return err
	}
	keptUp := false
	defer func() {
		if !keptUp {
			os.RemoveAll(work)
		}
	}()
	// grid run's own log goes with the others into the results' logs/.
	restoreLog, err := logAlsoTo(c, filepath.Join(work, "grid-run.log"))
	if err != nil {
		return err
	}
	defer restoreLog()
	scale, err := emulationScale(ctx, c, run, prog, values)
	if err != nil {
		return err
	}
	printPlanTimes(w, run, c.Int("fragments"), values, scale)
	cfg := runner.Config{
		Topology: t, Plans: run, Program: prog, Values: values, Name: runName, Backend: runBackend(c.String("backend")),
		Fragments: c.Int("fragments"), Seed: c.Uint64("seed"), Timeout: c.Duration("timeout"),
		Deadline: c.Duration("deadline"), Keep: c.Bool("keep"), WorkDir: work, Scale: scale,
		OnUp: func(st *fabric.State) {
			fmt.Fprintf(w, "\nbuilt in %v\n", time.Since(st.Created).Round(time.Millisecond))
			if !c.Bool("nodes") {
				summarizeRun(w, st)
				return
			}
			if err := listNodes(c, st); err != nil {
				slog.Warn("listing the run", "err", err)
			}
		},
	}
	began := time.Now()
	exp, runErr := runner.Run(ctx, cfg)
	if exp == nil {
		return runErr
	}
	status := results.StatusComplete
	reason := runErr
	switch {
	case runErr != nil && ctx.Err() != nil:
		// What was cut short says only "context canceled", once per switch
		// or endpoint at work: name the signal and where the run was.
		status = results.StatusInterrupted
		where, _, _ := strings.Cut(runErr.Error(), "\n")
		reason = fmt.Errorf("stopped by Ctrl-C or SIGTERM (%s)", where)
	case runErr != nil:
		status = results.StatusFailed
	case exp.Failure() != nil:
		// Every plan ran, but a job did not verify (a wrong sum, or its
		// deadline passed): the run failed all the same.
		status, reason = results.StatusFailed, exp.Failure()
	}
	if runErr == nil && c.Bool("keep") {
		keptUp = true
		fmt.Fprintf(w, "run %s kept up with its switches and the %s plan (remove it with 'grid down %s'); they log into %s\n",
			exp.Run, run[len(run)-1].Algorithm, exp.Run, filepath.Join(work, "switches"))
	} else {
		fmt.Fprintf(w, "run %s down\n", exp.Run)
	}
	fmt.Fprintln(w)
	if err := writeOutcomes(w, exp); err != nil {
		return err
	}
	writeDisturbances(w, exp)
	fmt.Fprintf(w, "wall time %v (build, switches, %d plan(s), teardown)\n", time.Since(began).Round(time.Millisecond), len(run))
	var planJSON bytes.Buffer
	if err := kept.WriteJSON(&planJSON); err != nil {
		return fmt.Errorf("results: plan: %w", err)
	}
	files := map[string][]byte{
		"plan.json":      planJSON.Bytes(),
		"comparison.txt": comparison.Bytes(),
		"topology.svg":   t.SVG(),
		"topology.dot":   t.DOT(),
	}
	name := exp.Run + "-" + time.Now().UTC().Format("20060102T150405Z")
	if status != results.StatusComplete {
		name += "-" + string(status)
	}
	r := exp.Results(name, files)
	r.Status = status
	r.Switch, r.Compiler = switchDescription[c.String("backend")], compilerDescription[c.String("compiler")]
	r.Dirs = map[string]string{"logs": work}
	// The logs the errors name move with the results: name their copies,
	// which outlive the work directory.
	relocate := func(s string) string {
		return strings.ReplaceAll(s, work, filepath.Join(resultsDir, name, "logs"))
	}
	if reason != nil {
		r.Reason = relocate(reason.Error())
	}
	for i := range r.Algorithms {
		r.Algorithms[i].Failed = relocate(r.Algorithms[i].Failed)
	}
	dir, err := results.Write(resultsDir, r)
	if err != nil {
		if runErr != nil {
			return errors.Join(runErr, err)
		}
		return err
	}
	if runErr != nil {
		what := "failed"
		if status == results.StatusInterrupted {
			what = "interrupted: everything built was removed"
		}
		return fmt.Errorf("%s\n%s; what it learned, every log and the reason are in %s (failure.txt, summary.json, logs/)", r.Reason, what, dir)
	}
	summary := r.Summary()
	fmt.Fprintln(w)
	if err := results.WriteRates(w, summary.Scale, summary.Rates); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := results.WriteFidelity(w, summary); err != nil {
		return err
	}
	fmt.Fprintf(w, "results in %s (summary, traffic, jobs and switch tables, plots, the %s plan, the comparison, the topology drawing, logs)\n", dir, kept.Algorithm)
	if err := exp.Failure(); err != nil {
		return err
	}
	return lowFidelity(w, summary)
}

// lowFidelity fails a run whose measured slowest-worker rate fell below
// results.MinFidelity of the prediction for any algorithm, saying so in
// capitals first: a run that does not measure what the model predicts must
// not pass quietly. A rate above results.MaxFidelity is said as loudly but
// does not fail the run (the sampling's error reaches a few percent);
// grid reproduce, which holds runs against the paper, fails it.
func lowFidelity(w io.Writer, s *results.Summary) error {
	for _, h := range s.HighFidelity() {
		fmt.Fprintf(w, "FIDELITY HIGH %s\n", h)
	}
	low := s.LowFidelity()
	if len(low) == 0 {
		return nil
	}
	for _, l := range low {
		fmt.Fprintf(w, "FIDELITY LOW %s\n", l)
	}
	return fmt.Errorf("fidelity below %.2f for %d algorithm(s): the emulation did not reach the rates the plans predict (see fidelity.txt; a smaller --scale leaves the machine more room)", results.MinFidelity, len(low))
}

func isAlgorithm(a string) bool {
	for _, b := range solver.Algorithms() {
		if a == b {
			return true
		}
	}
	return false
}

// writeOutcomes prints a line per plan: whether every sum was exact, how
// long the slowest worker took and its goodput, resends and collisions.
func writeOutcomes(out io.Writer, exp *runner.Experiment) error {
	fmt.Fprintf(out, "%d fragments of %d values per worker\n", exp.Fragments, exp.Values)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ALGORITHM\tJOB\tWORKERS\tSUMS\tSLOWEST\tGOODPUT\tRESENT\tCONTROLS\tINTO PS")
	for _, o := range exp.Outcomes {
		if o.Refused != "" {
			fmt.Fprintf(w, "%s\t-\t-\tnot run: %s\t\t\t\t\n", o.Algorithm, o.Refused)
			continue
		}
		if o.Failed != "" && len(o.Jobs) == 0 {
			fmt.Fprintf(w, "%s\t-\t-\tFAILED (no job finished)\t\t\t\t\n", o.Algorithm)
			continue
		}
		for _, j := range o.Jobs {
			sums := "exact"
			if err := j.Failure(); err != nil {
				sums = "FAILED"
			}
			var slowest float64
			var resent, controls int
			goodput := -1.0
			for _, r := range j.Workers {
				slowest = max(slowest, r.Seconds)
				resent += r.Resent
				controls += r.Controls
				if goodput < 0 || r.GoodputBitsPerSec < goodput {
					goodput = r.GoodputBitsPerSec
				}
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%.3f s\t%s\t%d\t%d\t%s\n", o.Algorithm, j.Name, len(j.Workers), sums, slowest, results.BitRate(goodput), resent, controls, bytesInto(o, j.PS.Host))
		}
	}
	return w.Flush()
}

// writeDisturbances says, per plan, why its figures are not the emulated
// network's alone, so nobody reads a disturbed run as a clean one.
func writeDisturbances(out io.Writer, exp *runner.Experiment) {
	for _, o := range exp.Outcomes {
		for _, why := range o.Disturbed {
			fmt.Fprintf(out, "DISTURBED %s: %s\n", o.Algorithm, why)
		}
	}
}

// estimateRun prints what the experiment will take of this machine and
// refuses, before anything is built, one the machine cannot hold (unless
// --force).
func estimateRun(c *cli.Context, t *topo.Topology, jobs []workload.Job, plans int) error {
	m, err := runner.ReadMachine()
	if err != nil {
		return err
	}
	e := runner.EstimateRun(t, jobs, runner.EstimateOptions{Fragments: c.Int("fragments"), Plans: plans, Machine: m,
		SwitchProcesses: c.String("backend") == backendBmv2})
	fmt.Fprintf(c.App.Writer, "estimate: %s\n", e)
	warnings, err := e.Check()
	for _, warn := range warnings {
		slog.Warn(warn)
	}
	if err != nil {
		if !c.Bool("force") {
			return fmt.Errorf("%s: %w", c.String("topo"), err)
		}
		slog.Warn("running anyway (--force)", "err", err)
	}
	return nil
}

// bytesInto is what the links into host carried during the outcome's run
// ("-" when the host is unknown).
func bytesInto(o *runner.Outcome, host string) string {
	var n uint64
	found := false
	for _, l := range o.Snapshot.Links {
		switch host {
		case l.NodeA:
			n += l.BA.Sent.Bytes
		case l.NodeB:
			n += l.AB.Sent.Bytes
		default:
			continue
		}
		found = true
	}
	if !found {
		return "-"
	}
	return fmt.Sprintf("%.1f kB", float64(n)/1e3)
}

// setLinkRates gives every link of t the rate given with --link-rate. The
// emulated hosts and switches forward far below a real testbed's 100 Gbps,
// so at the topology's own rates an experiment measures processing, not
// bandwidth; slower links bring back the paper's regime, where the PS's
// link is the bottleneck and in-network aggregation shortens the job.
func setLinkRates(t *topo.Topology, rate string) error {
	bw, err := topo.ParseBandwidth(rate)
	if err != nil {
		return fmt.Errorf("--link-rate: %w", err)
	}
	for _, l := range t.Links {
		l.Bandwidth = bw
	}
	slog.Info("every link shaped to --link-rate", "rate", rate, "links", len(t.Links))
	return nil
}
