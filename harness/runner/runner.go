// Package runner runs whole experiments on the emulated testbed: for a
// topology and the routing plans of its training jobs it builds the
// topology as network namespaces (harness/fabric), starts a `grid switch`
// per switch and installs each plan over P4Runtime (harness/controller),
// starts the jobs' parameter servers and workers (`grid ps`, `grid worker`,
// harness/endpoint) in their hosts' namespaces, which send real gradients
// through the switches and verify every sum, counts the traffic on every
// link (harness/monitor), and collects the endpoints' reports and the
// switches' counters. Plans run one after another on the same fabric, the
// switches reloaded in between. Everything is torn down at the end, also on
// error or when ctx is cancelled (Ctrl-C), unless Config.Keep; a run that
// stops short still returns what it learned (the plans that ran, the
// failed plan's finished jobs and traffic), so its evidence can be kept.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/controller"
	"github.com/grid-ina/grid/harness/endpoint"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/internal/cputime"
	"github.com/grid-ina/grid/harness/monitor"
	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/results"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
)

// Defaults of Config.
const (
	DefaultFragments = 64
	DefaultSeed      = 1
	DefaultInterval  = 100 * time.Millisecond
)

// maxLinkSamples is how many link samples per second the monitor takes by
// default: every sample reads every namespace's counters, and each link's
// becomes a row of traffic.csv held in memory until the results are
// written.
const maxLinkSamples = 2000

// SampleInterval is the monitor's default interval for a fabric of links
// links: DefaultInterval, or longer in steps of it so that it takes at most
// maxLinkSamples link samples a second, and never above a second, which
// still gives iftop's 2 s average and the fidelity's steady rate samples to
// measure (leaf-spine-60's 1400 links: 700 ms, a tenth of the samples,
// files and memory of 100 ms).
func SampleInterval(links int) time.Duration {
	need := time.Duration(links) * time.Second / maxLinkSamples
	steps := max(1, (need+DefaultInterval-1)/DefaultInterval)
	return min(steps*DefaultInterval, time.Second)
}

// runSamples is how many samples a plan's expected sending time gets at
// least: the fidelity's steady rate needs 4 in its middle 80%, and more
// make its median steadier.
const runSamples = 40

// sampleInterval is the monitor's interval for plan p: cfg.Interval when
// given, else SampleInterval of the fabric, but short enough that the
// plan's expected sending time (its fragments at its lambda, scaled) gets
// runSamples samples, and never below DefaultInterval. A Sec. 6.3 scenario
// on leaf-spine-60's 1400 links sends for 3 s: at 700 ms its steady part
// had 3 samples, too few to measure.
func sampleInterval(cfg *Config, p *solver.Plan) time.Duration {
	if cfg.Interval > 0 {
		return cfg.Interval
	}
	interval := SampleInterval(len(cfg.Topology.Links))
	if p.LambdaGbps > 0 && cfg.Scale > 0 {
		expected := seconds(float64(cfg.Fragments) * frameBits(cfg.Values) / (p.LambdaGbps * 1e9 * cfg.Scale))
		interval = min(interval, max(DefaultInterval, (expected/runSamples).Truncate(DefaultInterval)))
	}
	return interval
}

// DefaultWindow is the workers' window when Config.Window is zero.
var DefaultWindow = endpoint.Window{Initial: 8, Max: 64}

// Config is one experiment.
type Config struct {
	// Topology is what the fabric builds, at Scale; every plan is for it.
	Topology *topo.Topology
	// Scale multiplies every rate of the model as the fabric emulates it
	// (Emulated): link bandwidths, PS ingresses, and the switch capacities
	// C_s that every programmable switch's capacity meter enforces. 0
	// means 1, the topology's own rates.
	Scale float64
	// Plans are the routing plans to run, one after another on the same
	// fabric (grid run --algo all runs every algorithm's).
	Plans []*solver.Plan
	// Program is the compiled aggregator; its build's values per packet
	// must be Values.
	Program *p4c.Result
	// Values is N, int32 values per packet (32, or 64 for the GRID_VALUES_64
	// build); 0 means 32.
	Values int
	// Binary is the grid executable that runs switches, workers and PSs;
	// "" means os.Executable().
	Binary string
	// Backend runs the switches; nil means grid switch (controller.Bmv2
	// is real bmv2).
	Backend controller.Backend
	// Name is the fabric run's name; "" means fabric.DefaultRunName.
	Name string
	// Fragments is how many gradient fragments each worker sends (of
	// Values values each); 0 means DefaultFragments.
	Fragments int
	// Seed makes the gradients (endpoint.Gradient); 0 means DefaultSeed.
	Seed uint64
	// Window is the workers' AIMD window; zero means DefaultWindow.
	Window endpoint.Window
	// Timeout is the workers' initial retransmission timeout (they measure
	// round trips and adapt it); 0 derives it from the work of each plan:
	// the time the first windows take (100 ms to 1 s).
	Timeout time.Duration
	// Deadline bounds each plan's run of the endpoints from the start
	// signal; 0 derives it from the work of each plan (fragments, workers,
	// hops, the PS's link rate; see budget.go), so a large topology gets
	// the time it needs.
	Deadline time.Duration
	// ProcessPerEndpoint runs every worker and PS as its own process
	// (`grid worker`, `grid ps`) instead of all in one `grid endpoint-host`:
	// how runs launched their endpoints before the host, kept for
	// comparison (BenchmarkEndpointLaunch).
	ProcessPerEndpoint bool
	// Interval is the traffic monitor's sampling interval; 0 means
	// sampleInterval's for each plan.
	Interval time.Duration
	// WorkDir receives what the switches and endpoints leave: switches/
	// (each switch's log) and, per plan, N-ALGO/ (the jobs' endpoint specs,
	// reports and logs). "" means the run's state directory, which goes
	// with the run.
	WorkDir string
	// OnUp, when set, is called once the fabric is built (the CLI lists it).
	OnUp func(*fabric.State)
	// emulated is Topology as the fabric emulates it (Emulated at Scale).
	emulated *topo.Topology
	// Keep leaves the fabric and its switches up after the last plan
	// (remove them with fabric.Down, `grid down RUN`); the switches keep
	// the last plan.
	Keep bool
}

// Experiment is what Run did.
type Experiment struct {
	Run      string
	Topology *topo.Topology
	// Scale is the emulation scale every rate ran at (Config.Scale), and
	// Rates every rate of the model as the topology states it and as
	// emulated.
	Scale float64
	Rates []results.Rate
	// Fragments and Values are the gradient each worker sent.
	Fragments, Values int
	// Outcomes are the plans' runs, in Config.Plans order.
	Outcomes []*Outcome
	// Began is when the fabric build started, Ended when the last plan's
	// endpoints were done (teardown not included).
	Began, Ended time.Time
}

// Outcome is one plan's run.
type Outcome struct {
	Algorithm string
	Plan      *solver.Plan
	// Refused is why the plan could not be deployed (FromSolverPlan refused
	// it, e.g. a fan-in that disagrees with the workers' shares); nothing
	// ran then.
	Refused string
	// Deployment is the plan in the aggregator's terms.
	Deployment *aggregator.Deployment
	Jobs       []JobOutcome
	// Switches are every switch's counters after the jobs ended.
	Switches []controller.Counters
	// Links and Traffic are the monitor's per-link samples over the run:
	// every link's cumulative bytes and packets each way since the plan was
	// installed.
	Links   []monitor.LinkInfo
	Traffic []results.LinkSample
	// Snapshot is the monitor's last view: totals and rates per link.
	Snapshot monitor.Snapshot
	// Began is when the endpoints were started, Ended when the last exited.
	Began, Ended time.Time
	// CPU is how the machine's CPU was shared while the jobs ran: this
	// run's processes against everything else.
	CPU cputime.Share
	// Disturbed says why the outcome's timings and rates are not the
	// emulated network's alone (another load on the machine, a run bound
	// by CPU, resends after timeouts); empty when nothing disturbed them.
	Disturbed []string
	// Failed is why the plan's run stopped short (an endpoint or switch
	// that failed, an interruption); Jobs then holds only the jobs whose
	// PS and workers all left a report, and Traffic what was sampled.
	Failed string
}

// JobOutcome is one job's endpoint reports.
type JobOutcome struct {
	Name    string
	ID      uint16
	PS      *endpoint.Report
	Workers []*endpoint.Report // in member order
}

// Failure is nil when the job's PS and every worker verified every sum,
// else what each that did not says.
func (j *JobOutcome) Failure() error {
	var errs []error
	for _, r := range append([]*endpoint.Report{j.PS}, j.Workers...) {
		if err := r.Failure(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", j.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Failure is nil when every job of the outcome verified (a refused plan is
// not a failure: it did not run).
func (o *Outcome) Failure() error {
	var errs []error
	for i := range o.Jobs {
		if err := o.Jobs[i].Failure(); err != nil {
			errs = append(errs, fmt.Errorf("%s plan: %w", o.Algorithm, err))
		}
	}
	return errors.Join(errs...)
}

// Failure is nil when every plan that ran verified.
func (e *Experiment) Failure() error {
	var errs []error
	for _, o := range e.Outcomes {
		errs = append(errs, o.Failure())
	}
	return errors.Join(errs...)
}

// Validate refuses a configuration that could not run, naming the field,
// before anything is built. Zero values mean the defaults; negative ones
// are errors.
func (cfg *Config) Validate() error {
	if cfg.Topology == nil {
		return errors.New("runner: no topology")
	}
	if len(cfg.Plans) == 0 {
		return errors.New("runner: no plan to run")
	}
	if cfg.Program == nil {
		return errors.New("runner: no compiled aggregator (Config.Program)")
	}
	if cfg.Values != 0 && cfg.Values != 32 && cfg.Values != 64 {
		return fmt.Errorf("runner: Values %d: the aggregator carries 32 or 64 values per packet", cfg.Values)
	}
	if cfg.Name != "" {
		if err := fabric.CheckRunName(cfg.Name); err != nil {
			return fmt.Errorf("runner: Name: %w", err)
		}
	}
	for _, f := range []struct {
		name  string
		value time.Duration
	}{{"Timeout", cfg.Timeout}, {"Deadline", cfg.Deadline}, {"Interval", cfg.Interval}} {
		if f.value < 0 {
			return fmt.Errorf("runner: %s %v: want a positive duration (0 for the default)", f.name, f.value)
		}
	}
	if cfg.Fragments < 0 {
		return fmt.Errorf("runner: Fragments %d: want a positive count (0 for the default)", cfg.Fragments)
	}
	for i, p := range cfg.Plans {
		if p.Topology != cfg.Topology.Name {
			return fmt.Errorf("runner: plan %d (%s) is for topology %q, not %q", i, p.Algorithm, p.Topology, cfg.Topology.Name)
		}
	}
	return nil
}

func (cfg *Config) defaults() error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Values == 0 {
		cfg.Values = 32
	}
	if cfg.Binary == "" {
		bin, err := os.Executable()
		if err != nil {
			return fmt.Errorf("runner: the grid executable: %w", err)
		}
		cfg.Binary = bin
	}
	if cfg.Fragments == 0 {
		cfg.Fragments = DefaultFragments
	}
	if cfg.Seed == 0 {
		cfg.Seed = DefaultSeed
	}
	if cfg.Window == (endpoint.Window{}) {
		cfg.Window = DefaultWindow
	}
	if cfg.Scale == 0 {
		cfg.Scale = 1
	}
	return nil
}

// Run runs the experiment. The error is for what kept it from running to
// its end (a fabric, switch or endpoint that failed, a cancelled ctx);
// whether the sums verified is in the outcomes (Experiment.Failure). Once
// the configuration is valid, the experiment is returned also with an
// error: the plans that ran, and the one that stopped short with its
// reason (Outcome.Failed), its finished jobs and its traffic so far.
// Everything is torn down before Run returns, unless Config.Keep and the
// experiment ran to its end.
func Run(ctx context.Context, cfg Config) (exp *Experiment, err error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	emulated, err := Emulated(cfg.Topology, cfg.Scale)
	if err != nil {
		return nil, err
	}
	cfg.emulated = emulated
	rates, err := Rates(cfg.Topology, cfg.Scale)
	if err != nil {
		return nil, err
	}
	exp = &Experiment{Run: cfg.Name, Topology: cfg.Topology, Scale: cfg.Scale, Rates: rates, Fragments: cfg.Fragments, Values: cfg.Values, Began: time.Now()}
	slog.Info("building the fabric", "topology", cfg.Topology.Name, "scale", cfg.Scale)
	// The run is this process's until the experiment ends: should it die
	// without tearing down, 'grid ls' shows the run dead. With Keep it is
	// let go once every plan ran.
	st, err := fabric.Up(ctx, emulated, fabric.Options{Name: cfg.Name, Owned: true})
	if err != nil {
		return exp.end(err)
	}
	exp.Run = st.Run
	keep := false
	defer func() {
		if keep {
			return
		}
		if derr := fabric.Down(st.Run); derr != nil {
			err = errors.Join(err, fmt.Errorf("tear down run %s: %w", st.Run, derr))
			return
		}
		slog.Info("run down", "run", st.Run)
	}()
	slog.Info("fabric up", "run", st.Run, "took", time.Since(exp.Began).Round(time.Millisecond))
	if cfg.OnUp != nil {
		cfg.OnUp(st)
	}

	dir := cfg.WorkDir
	if dir == "" {
		dir = filepath.Join(fabric.StateDir, st.Run)
	}
	ctl, err := controller.Start(ctx, st, controller.Options{Binary: cfg.Binary, Backend: cfg.Backend, Program: cfg.Program, Detach: cfg.Keep,
		LogDir: filepath.Join(dir, "switches")})
	if err != nil {
		return exp.end(err)
	}
	defer func() { err = errors.Join(err, ctl.Close()) }()

	for i, p := range cfg.Plans {
		if i > 0 {
			if err := drain(ctx, st, cfg.emulated); err != nil {
				return exp.end(fmt.Errorf("before the %s plan: %w", p.Algorithm, err))
			}
			if err := ctl.Reload(ctx); err != nil {
				return exp.end(fmt.Errorf("reload the switches before the %s plan: %w", p.Algorithm, err))
			}
		}
		o, err := runPlan(ctx, &cfg, st, ctl, p, filepath.Join(dir, fmt.Sprintf("%d-%s", i+1, p.Algorithm)))
		exp.Outcomes = append(exp.Outcomes, o)
		if err != nil {
			err = fmt.Errorf("%s plan: %w", p.Algorithm, err)
			o.Failed = err.Error()
			return exp.end(err)
		}
	}
	if cfg.Keep {
		if err := fabric.Disown(st.Run); err != nil {
			return exp.end(err)
		}
		keep = true
	}
	return exp.end(nil)
}

// end marks when the experiment's endpoints were done (teardown not
// included) and returns it with err.
func (e *Experiment) end(err error) (*Experiment, error) {
	e.Ended = time.Now()
	return e, err
}

// evidenceTimeout bounds what a plan that stopped short still reads from
// the switches, also when ctx was cancelled.
const evidenceTimeout = 5 * time.Second

// MeterJitter is the time of C_s a capacity meter lets through at once at
// least: what a loaded 2-core machine may stall a worker or a switch for.
// A meter's burst is the larger of that and the workers' initial window
// for every stream it aggregates, so that every first window passes at
// once. A meter starts full and passes its burst on top of C_s, so a run
// of seconds measures above its lambda by the burst over its length: a
// second of C_s let SwitchML's workers on the testbed (4 s) send 1.265 of
// their lambda; the windows let leaf-spine-60's (a spine's 23 streams at
// 66 fragments/s: 2.8 s) send 1.03 of it over 256 fragments, 1% over 1024.
// Less than MeterJitter answers the stalls with control packets (at 10 ms
// of C_s ATP's plan on the testbed reached 0.77 of its lambda, at 40-50 ms
// 0.96-0.98), and less than the first windows (2 fragments a stream) left
// leaf-spine-60's workers idle in back-offs for minutes.
const MeterJitter = 50 * time.Millisecond

// deployment is plan p in the aggregator's terms as the fabric emulates
// it: every programmable switch's capacity meter at its C_s times the
// emulation scale (burst: see MeterJitter), so the switch capacities the
// plan was solved for bind in the data plane as they do in the model.
func deployment(cfg *Config, p *solver.Plan) (*aggregator.Deployment, error) {
	window := cfg.Window
	if window == (endpoint.Window{}) {
		window = DefaultWindow
	}
	return aggregator.FromSolverPlan(cfg.Topology, p, aggregator.PlanOptions{Values: cfg.Values, CapacityScale: cfg.Scale,
		BurstPerStream: uint32(max(1, window.Initial)), BurstTime: MeterJitter})
}

// runPlan deploys one plan on the running switches and runs its jobs'
// endpoints; their files go to dir. The outcome is returned also with an
// error, holding what the plan's run got to: its finished jobs, the
// traffic sampled and the switches' counters.
func runPlan(ctx context.Context, cfg *Config, st *fabric.State, ctl *controller.Controller, p *solver.Plan, dir string) (*Outcome, error) {
	o := &Outcome{Algorithm: p.Algorithm, Plan: p}
	d, err := deployment(cfg, p)
	if err != nil {
		o.Refused = err.Error()
		slog.Warn("plan cannot be deployed; skipped", "algorithm", p.Algorithm, "reason", err)
		return o, nil
	}
	o.Deployment = d
	if err := ctl.Install(ctx, d); err != nil {
		return o, err
	}
	mon, err := monitor.New(st, monitor.Options{Interval: sampleInterval(cfg, p)})
	if err != nil {
		return o, err
	}
	defer mon.Close() // before the teardown: its sockets keep the namespaces
	mon.Start(ctx)
	before, cpuErr := cputime.Take(0)
	jobs, runErr := runJobs(ctx, cfg, st, d, dir)
	o.Jobs = jobs.outcomes
	o.Began, o.Ended = jobs.began, jobs.ended
	if after, err := cputime.Take(0); cpuErr == nil && err == nil {
		o.CPU = after.Since(before)
	} else {
		slog.Warn("CPU accounting unavailable; the outcome cannot say whether other load disturbed it", "err", errors.Join(cpuErr, err))
	}
	o.Disturbed = disturbances(o)
	for _, why := range o.Disturbed {
		slog.Warn("measurements disturbed", "algorithm", o.Algorithm, "why", why)
	}
	// The traffic and counters so far are evidence also of a run that
	// stopped short.
	var errs []error
	if err := mon.Sample(); err != nil {
		errs = append(errs, err)
	}
	if err := mon.Err(); err != nil && ctx.Err() == nil {
		errs = append(errs, err)
	}
	// As records at once: the monitor's flat samples of a 1400-link
	// fabric are hundreds of MB, and every plan's stay until the results
	// are written.
	o.Links, o.Traffic, o.Snapshot = mon.Links(), SampleRecords(mon.LinkSamples()), mon.Snapshot()

	ids := make([]uint16, len(d.Jobs))
	for i := range d.Jobs {
		ids[i] = d.Jobs[i].Plan.Job
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), evidenceTimeout)
	defer cancel()
	if o.Switches, err = ctl.ReadCounters(rctx, ids); err != nil {
		errs = append(errs, err)
	}
	if runErr != nil {
		if err := errors.Join(errs...); err != nil {
			slog.Warn("evidence of a plan that stopped short is incomplete", "algorithm", p.Algorithm, "err", err)
		}
		return o, runErr
	}
	return o, errors.Join(errs...)
}
