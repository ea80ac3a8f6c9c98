package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/controller"
	"github.com/grid-ina/grid/harness/controller/controllertest"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/p4test/targettest"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// The experiments build real namespaces and processes and need root (CI
// runs the tests as root); they skip otherwise. Runs are named "gr" plus
// the test's process id and a counter, and must be gone when Run returns.

func TestMain(m *testing.M) { targettest.Main(m) }

var runs struct {
	sync.Mutex
	n int
}

func runName() string {
	runs.Lock()
	defer runs.Unlock()
	runs.n++
	return fmt.Sprintf("gr%d-%d", os.Getpid(), runs.n)
}

// runOK runs the experiment, checks it left nothing behind and failed
// nowhere, and returns it.
func runOK(t *testing.T, cfg Config) *Experiment {
	t.Helper()
	exp, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkGone(t, exp.Run, cfg.Binary)
	if err := exp.Failure(); err != nil {
		t.Fatal(err)
	}
	return exp
}

// testConfig is an experiment of the testbed's default job with algos'
// plans, 64 fragments of 32 values per worker.
func testConfig(t testing.TB, algos ...string) Config {
	t.Helper()
	controllertest.NeedFabric(t)
	tp := topo.Testbed()
	// A roomy retransmission timeout: on a loaded CI machine spurious
	// resends would blur the traffic the tests compare; nothing is lost
	// here, so nothing waits for it.
	cfg := Config{Topology: tp, Program: controllertest.Program(t), Binary: targettest.GridBinary(t), Name: runName(),
		Fragments: 64, Timeout: 500 * time.Millisecond}
	for _, a := range algos {
		cfg.Plans = append(cfg.Plans, controllertest.Solve(t, tp, a))
	}
	return cfg
}

// checkGone fails unless nothing of run is left: no state, no namespace,
// no process running bin (the tests run one at a time).
func checkGone(t *testing.T, run, bin string) {
	t.Helper()
	if _, err := fabric.LoadState(run); err == nil {
		t.Errorf("run %s still has its state", run)
	}
	entries, _ := os.ReadDir(fabric.NetnsDir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), run+"-") {
			t.Errorf("namespace %s is left", e.Name())
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.HasPrefix(string(b), bin+"\x00") {
			t.Errorf("process %s is left: %q", filepath.Base(filepath.Dir(p)), strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}

// TestTestbedExperimentVerifiesEverySumAndAggregatesInTheNetwork runs
// grid-paths' and Geryon's plans on the paper's testbed one after the other:
// every worker and the PS verify every sum, exactly the switches the plan
// names aggregate (none under Geryon), so less traffic reaches the PS with
// GRID; afterwards nothing of the run is left.
func TestTestbedExperimentVerifiesEverySumAndAggregatesInTheNetwork(t *testing.T) {
	cfg := testConfig(t, solver.AlgoGRIDPaths, solver.AlgoGeryon)
	exp := runOK(t, cfg)
	if len(exp.Outcomes) != 2 {
		t.Fatalf("%d outcomes, want 2", len(exp.Outcomes))
	}
	psBytes := map[string]uint64{}
	for _, o := range exp.Outcomes {
		if o.Refused != "" {
			t.Fatalf("%s refused: %s", o.Algorithm, o.Refused)
		}
		j := o.Jobs[0]
		if j.PS == nil || len(j.Workers) != 8 {
			t.Fatalf("%s: PS report %v, %d worker reports, want 8", o.Algorithm, j.PS != nil, len(j.Workers))
		}
		for _, r := range append(j.Workers, j.PS) {
			if r.Completed != cfg.Fragments || r.Checked == 0 {
				t.Errorf("%s: %s %s completed %d of %d fragments, checked %d", o.Algorithm, r.Role, r.Host, r.Completed, cfg.Fragments, r.Checked)
			}
		}
		aggregating := map[string]bool{}
		for _, s := range o.Deployment.Switches {
			aggregating[s.Name] = len(s.Config.Aggregations) > 0
		}
		for _, c := range o.Switches {
			emitted := c.Jobs[j.ID][gradproto.EvEmitted]
			if aggregating[c.Switch] != (emitted > 0) {
				t.Errorf("%s: switch %s sent %d partial sums; the plan has it aggregate: %v", o.Algorithm, c.Switch, emitted, aggregating[c.Switch])
			}
		}
		for _, l := range o.Snapshot.Links {
			switch {
			case l.NodeA == "ps":
				psBytes[o.Algorithm] += l.BA.Sent.Bytes
			case l.NodeB == "ps":
				psBytes[o.Algorithm] += l.AB.Sent.Bytes
			}
		}
		// Nothing but GRID datagrams reaches the PS (no ARP, no IPv6), so
		// the link's bytes are the PS's datagrams: exactly so when no
		// worker had to resend (nothing was lost, also not at the socket).
		var resent int
		for _, r := range j.Workers {
			resent += r.Resent
		}
		frame := uint64(gradproto.FrameOverhead + gradproto.HeaderLen + 4*32)
		if got := uint64(j.PS.Direct+j.PS.Aggregated+j.PS.Ignored) * frame; resent == 0 && psBytes[o.Algorithm] != got {
			t.Errorf("%s: the monitor counted %d bytes into the PS, the PS received %d datagrams (%d bytes)", o.Algorithm,
				psBytes[o.Algorithm], j.PS.Direct+j.PS.Aggregated+j.PS.Ignored, got)
		}
		if len(o.Traffic) == 0 || len(o.Links) != len(cfg.Topology.Links) {
			t.Errorf("%s: %d traffic samples of %d links, want samples of all %d", o.Algorithm, len(o.Traffic), len(o.Links), len(cfg.Topology.Links))
		}
	}
	// Geryon: every worker's every fragment reaches the PS; GRID: about one
	// partial sum per aggregating switch and fragment (more if workers
	// resent), so less.
	minGeryon := uint64(8 * cfg.Fragments * (gradproto.FrameOverhead + gradproto.HeaderLen + 4*32))
	if psBytes[solver.AlgoGeryon] < minGeryon || psBytes[solver.AlgoGRIDPaths] >= psBytes[solver.AlgoGeryon] {
		t.Errorf("bytes into the PS: grid-paths %d, geryon %d (at least %d); want grid-paths below geryon",
			psBytes[solver.AlgoGRIDPaths], psBytes[solver.AlgoGeryon], minGeryon)
	}
}

func TestAPlanTheDataPlaneCannotFollowIsReportedNotRun(t *testing.T) {
	cfg := testConfig(t, solver.AlgoSwitchML)
	// A fan-in that disagrees with the workers' shares, as ATP's plans
	// have had: the switch would wait for a worker that never comes.
	cfg.Plans[0].Switches[0].Aggregate[0].FanIn++
	exp, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkGone(t, exp.Run, cfg.Binary)
	o := exp.Outcomes[0]
	if o.Refused == "" || o.Jobs != nil {
		t.Fatalf("refused %q, %d jobs ran; want it refused with a reason and nothing run", o.Refused, len(o.Jobs))
	}
	if !strings.Contains(o.Refused, "fan_in 3 for job job1") {
		t.Errorf("refused for %q, want the bad fan-in named", o.Refused)
	}
	if err := exp.Failure(); err != nil {
		t.Errorf("a refused plan counts as a failure: %v", err)
	}
}

func TestASwitchThatFailsToStartIsNamedAndTheRunRemoved(t *testing.T) {
	cfg := testConfig(t, solver.AlgoGRIDPaths)
	fake := filepath.Join(t.TempDir(), "grid")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"cannot open port\" >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.Binary = fake
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "cannot open port") {
		t.Fatalf("got %v, want the switch's failure with its output", err)
	}
	checkGone(t, cfg.Name, fake)
}

func TestTwoJobsOnOneHostAreRefused(t *testing.T) {
	d := &aggregator.Deployment{Jobs: []aggregator.JobDeployment{
		{Name: "a", PS: "ps", Workers: []string{"w1", "w2"}},
		{Name: "b", PS: "ps2", Workers: []string{"w3", "w2"}},
	}}
	err := distinctHosts(d)
	if err == nil || err.Error() != "host w2 is an endpoint of job a and of job b: one endpoint per host (each binds UDP port 18258)" {
		t.Errorf("got %v", err)
	}
}

// TestCancellingAnExperimentRemovesEverything cancels a job that would run
// for minutes (Ctrl-C in grid run) once its endpoints send.
func TestCancellingAnExperimentRemovesEverything(t *testing.T) {
	cfg := testConfig(t, solver.AlgoGRIDPaths)
	cfg.Fragments = 10_000_000
	cfg.Deadline = 10 * time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.OnUp = func(st *fabric.State) {
		// Cancel once the endpoint host runs, its workers soon sending.
		go func() {
			for ctx.Err() == nil {
				procs := 0
				if s, err := fabric.LoadState(st.Run); err == nil {
					for _, p := range s.Processes {
						if p.Role == "endpoint-host" {
							procs++
						}
					}
				}
				if procs == 1 {
					time.Sleep(200 * time.Millisecond)
					cancel()
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	began := time.Now()
	exp, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the cancellation", err)
	}
	// What it learned is returned with the error: the plan cut short, why,
	// and the traffic sampled until then.
	if exp == nil || len(exp.Outcomes) != 1 || exp.Outcomes[0].Failed == "" || len(exp.Outcomes[0].Traffic) == 0 || exp.Ended.Before(exp.Began) {
		t.Errorf("the cancelled experiment kept %+v", exp)
	}
	if d := time.Since(began); d > 20*time.Second {
		t.Errorf("Run took %v to return after cancellation", d)
	}
	checkGone(t, cfg.Name, cfg.Binary)
}

// TestKeptExperimentLeavesTheSwitchesRunningUntilDown keeps the fabric
// (grid run --keep): the switches outlive Run, recorded in the run's
// state, and fabric.Down stops them.
func TestKeptExperimentLeavesTheSwitchesRunningUntilDown(t *testing.T) {
	cfg := testConfig(t, solver.AlgoGRIDPaths)
	cfg.Keep = true
	t.Cleanup(func() { fabric.Clean(cfg.Name) })
	exp, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Failure(); err != nil {
		t.Fatal(err)
	}
	st, err := fabric.LoadState(exp.Run)
	if err != nil {
		t.Fatalf("the kept run: %v", err)
	}
	var hosts int
	for _, p := range st.Processes {
		if p.Role == "switch-host" && p.Alive() {
			hosts++
		} else {
			t.Errorf("process %d (%s in %s) recorded after Run", p.PID, p.Role, p.Node)
		}
	}
	if hosts != 1 {
		t.Errorf("%d switch hosts run after Run, want the one that runs the 3 switches", hosts)
	}
	if err := fabric.Down(exp.Run); err != nil {
		t.Fatal(err)
	}
	checkGone(t, exp.Run, cfg.Binary)
}

// TestTwoJobsWithTheirOwnPSsShareTheSwitches runs the paper's Fig. 1
// network with two jobs (workloads/jobs/fig1-two-jobs.yaml), each with its
// own PS, through the same switches: both verify every sum, and each
// switch counts each job's aggregations under its own job id.
func TestTwoJobsWithTheirOwnPSsShareTheSwitches(t *testing.T) {
	cfg := testConfig(t)
	root := repo.RootOrFail(t)
	tp, err := topo.Load(filepath.Join(root, "topologies", "paper-fig1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := workload.Load(filepath.Join(root, "workloads", "jobs", "fig1-two-jobs.yaml"), tp)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Topology = tp
	cfg.Plans = []*solver.Plan{controllertest.SolveJobs(t, tp, jobs, solver.AlgoGRIDPaths)}
	exp := runOK(t, cfg)
	o := exp.Outcomes[0]
	if len(o.Jobs) != 2 || o.Jobs[0].PS.Host == o.Jobs[1].PS.Host {
		t.Fatalf("jobs %+v, want two with their own PS", o.Jobs)
	}
	for _, j := range o.Jobs {
		var emitted uint64
		for _, c := range o.Switches {
			emitted += c.Jobs[j.ID][gradproto.EvEmitted]
		}
		var aggregations int
		for _, s := range o.Deployment.Switches {
			for _, a := range s.Config.Aggregations {
				if a.Job == j.ID {
					aggregations++
				}
			}
		}
		if want := uint64(aggregations * cfg.Fragments); emitted != want {
			t.Errorf("job %s: the switches sent %d partial sums, want %d (%d aggregating switches × %d fragments)", j.Name, emitted, want, aggregations, cfg.Fragments)
		}
	}
}

func TestConfigRefusesNegativeValuesAndBadNamesBeforeBuilding(t *testing.T) {
	tp := topo.Testbed()
	valid := func() Config {
		return Config{Topology: tp, Plans: []*solver.Plan{{Algorithm: "grid-paths", Topology: tp.Name}}, Program: &p4c.Result{}}
	}
	if cfg := valid(); cfg.Validate() != nil {
		err := cfg.Validate()
		t.Fatalf("zero values mean the defaults: %v", err)
	}
	for _, c := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Fragments = -5 }, "Fragments -5"},
		{func(c *Config) { c.Timeout = -time.Second }, "Timeout -1s"},
		{func(c *Config) { c.Deadline = -time.Millisecond }, "Deadline -1ms"},
		{func(c *Config) { c.Interval = -time.Millisecond }, "Interval -1ms"},
		{func(c *Config) { c.Values = 48 }, "Values 48"},
		{func(c *Config) { c.Name = "Upper" }, `Name: run name "Upper"`},
	} {
		cfg := valid()
		c.change(&cfg)
		name := cfg.Name
		exp, err := Run(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || exp != nil {
			t.Errorf("got %v (experiment %v), want %q", err, exp, c.want)
		}
		if name != "" {
			if _, err := fabric.LoadState(name); err == nil {
				t.Errorf("run %s was built", name)
			}
		}
	}
}

// TestDefaultExperimentOnRealBmv2GivesExactSums runs the default
// experiment (the testbed, grid-paths' plan) with a simple_switch_grpc per
// switch, loaded with grid's compilation of the aggregator and the plan
// over P4Runtime exactly as grid switch is: every worker and the PS check
// every sum, and the switches the plan has aggregate send partial sums.
func TestDefaultExperimentOnRealBmv2GivesExactSums(t *testing.T) {
	targettest.Bmv2OrSkip(t)
	cfg := testConfig(t, solver.AlgoGRIDPaths)
	cfg.Backend = controller.Bmv2{}
	exp := runOK(t, cfg)
	o := exp.Outcomes[0]
	j := o.Jobs[0]
	if j.PS == nil || len(j.Workers) != 8 {
		t.Fatalf("PS report %v, %d worker reports, want 8", j.PS != nil, len(j.Workers))
	}
	for _, r := range append(j.Workers, j.PS) {
		if r.Completed != cfg.Fragments || r.Checked == 0 {
			t.Errorf("%s %s completed %d of %d fragments, checked %d", r.Role, r.Host, r.Completed, cfg.Fragments, r.Checked)
		}
	}
	emitted := 0
	for _, c := range o.Switches {
		emitted += int(c.Jobs[j.ID][gradproto.EvEmitted])
	}
	if emitted == 0 {
		t.Error("no bmv2 switch sent a partial sum: the plan's aggregation did not happen in the network")
	}
}
