package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/controller"
	"github.com/grid-ina/grid/harness/endpoint"
	"github.com/grid-ina/grid/harness/endpointhost"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/topo"
)

// psReadyLine, workerReadyLine and hostReadyLine start the lines `grid
// ps`, `grid worker` and `grid endpoint-host` print once their sockets are
// bound.
const (
	psReadyLine     = "grid ps: listening on "
	workerReadyLine = "grid worker: listening on "
	hostReadyLine   = "grid endpoint-host: listening"
)

// startTimeout bounds an endpoint's start until its ready line; the
// endpoint host gets hostStartPerEndpoint more per endpoint.
const (
	startTimeout         = 10 * time.Second
	hostStartPerEndpoint = 20 * time.Millisecond
)

// exitGrace is how long endpoints get beyond their own deadline before
// the runner stops them, and how long they get to write their report
// after SIGTERM.
const exitGrace = 5 * time.Second

// jobsRun is the endpoints' run of one plan.
type jobsRun struct {
	outcomes     []JobOutcome
	began, ended time.Time
}

// endpointFiles is one endpoint of a plan's jobs: its host, its job's spec
// file, where its report and log go, and the process that runs it.
type endpointFiles struct {
	job         int // index into the outcomes
	index       int // worker's member index; -1 for the PS
	host        string
	name        string // job1-ps, job1-worker0
	spec        string
	report, log string
	proc        *endpointProc
}

// noReport says that the endpoint's process ended without its report.
func (ep *endpointFiles) noReport() string {
	return fmt.Sprintf("exited without %s's report (its log: %s)", ep.name, ep.log)
}

// endpointProc is one started process: an endpoint (ProcessPerEndpoint)
// or the endpoint host running all of them.
type endpointProc struct {
	*controller.Process
	// workers is whether it runs workers, which get the start signal; a
	// process of PSs only is stopped once every worker has ended.
	workers bool
	// eps are the endpoints it runs.
	eps []*endpointFiles
}

// runJobs writes each job's spec into dir, starts the endpoints (one
// `grid endpoint-host` for all, in their hosts' namespaces; or, with
// Config.ProcessPerEndpoint, each PS and then each worker as its own
// process there), starts the workers together, waits until all have
// exited (at most the deadline plus exitGrace; then they are stopped) and
// reads their reports. The run is returned also with an error: every
// endpoint is stopped first, and the jobs whose PS and workers all left a
// report are kept as finished.
func runJobs(ctx context.Context, cfg *Config, st *fabric.State, d *aggregator.Deployment, dir string) (jr *jobsRun, err error) {
	jr = &jobsRun{}
	if err := distinctHosts(d); err != nil {
		return jr, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return jr, fmt.Errorf("endpoint files: %w", err)
	}
	outcomes := make([]JobOutcome, len(d.Jobs))
	var procs []*endpointProc
	var eps []*endpointFiles
	defer func() {
		if err == nil {
			return
		}
		// Ends whatever still runs and keeps the jobs that finished.
		for _, p := range procs {
			p.Stop(exitGrace)
		}
		if jr.ended.IsZero() {
			jr.ended = time.Now()
		}
		readReports(eps, outcomes)
		for _, o := range outcomes {
			if o.finished() {
				jr.outcomes = append(jr.outcomes, o)
			}
		}
	}()
	b := budget(cfg, d)
	slog.Info("endpoint budget", "initial_timeout", b.timeout, "min_timeout", b.minTimeout, "max_timeout", b.maxTimeout, "deadline", b.deadline, "start_wait", b.startWait)
	for i, jd := range d.Jobs {
		outcomes[i] = JobOutcome{Name: jd.Name, ID: jd.Plan.Job, Workers: make([]*endpoint.Report, len(jd.Workers))}
		win := jobWindow(cfg.Window, emulatedOf(cfg), d, &jd, cfg.Values)
		slog.Info("worker window", "job", jd.Name, "initial", win.Initial, "max", win.Max, "queued_alpha", win.Alpha, "queued_beta", win.Beta)
		spec := endpoint.Spec{
			Job:       endpoint.JobFromPlan(jd.Plan, jd.PS, jd.Workers),
			Fragments: cfg.Fragments, Seed: cfg.Seed, Window: win,
			Timeout: endpoint.Duration(b.timeout), MinTimeout: endpoint.Duration(b.minTimeout), MaxTimeout: endpoint.Duration(b.maxTimeout),
			Deadline: endpoint.Duration(b.deadline),
			// The PS answers late resends until its workers have ended
			// (then it is stopped): one that left on its own after the
			// last result could leave a worker whose copy was lost
			// resending to nobody until the deadline.
			Linger: endpoint.Duration(b.deadline),
			// Workers start together on SIGUSR1, so none waits for one
			// that is still being launched (and resends meanwhile).
			Start: endpoint.StartSignal, StartWait: endpoint.Duration(b.startWait),
		}
		if err := spec.Validate(); err != nil {
			return jr, fmt.Errorf("job %s: endpoint spec: %w", jd.Name, err)
		}
		specPath := filepath.Join(dir, fmt.Sprintf("job%d.json", jd.Plan.Job))
		if err := writeJSON(specPath, &spec); err != nil {
			return jr, fmt.Errorf("job %s: %w", jd.Name, err)
		}
		add := func(index int, host, name string) {
			eps = append(eps, &endpointFiles{job: i, index: index, host: host, name: name, spec: specPath,
				report: filepath.Join(dir, name+".report.json"), log: filepath.Join(dir, name+".log")})
		}
		add(-1, jd.PS, fmt.Sprintf("job%d-ps", jd.Plan.Job))
		for w, host := range jd.Workers {
			add(w, host, fmt.Sprintf("job%d-worker%d", jd.Plan.Job, w))
		}
	}
	launched := time.Now()
	if cfg.ProcessPerEndpoint {
		procs, err = startEach(ctx, cfg, st.Run, eps, d)
	} else {
		procs, err = startHost(ctx, cfg, st, eps, dir)
	}
	if err != nil {
		return jr, err
	}
	jr.began = time.Now()
	for _, p := range procs {
		if p.workers {
			if err := p.Signal(syscall.SIGUSR1); err != nil {
				return jr, fmt.Errorf("start the workers: %w", err)
			}
		}
	}
	slog.Info("endpoints started", "jobs", len(d.Jobs), "endpoints", len(eps), "processes", len(procs),
		"ready_after", jr.began.Sub(launched).Round(time.Millisecond), "fragments", cfg.Fragments, "values", cfg.Values)

	wait, cancel := context.WithTimeout(ctx, b.deadline+exitGrace)
	defer cancel()
	// An endpoint that exits without a report (killed, crashed) leaves its
	// job unable to finish: the run fails at once rather than at the
	// deadline, which may be far.
	lost := make(chan *endpointFiles, len(procs))
	for _, p := range procs {
		go func() {
			<-p.Exited()
			for _, ep := range p.eps {
				if _, err := os.Stat(ep.report); err != nil {
					lost <- ep
					return
				}
			}
		}()
	}
	// Workers first: once all have exited, nobody needs the PSs' answers
	// to late resends, so their lingering is cut short (a complete PS
	// exits verified on SIGTERM; the endpoint host stops its PSs itself).
	for _, workers := range []bool{true, false} {
		for _, p := range procs {
			if p.workers != workers {
				continue
			}
			if !workers {
				p.Signal(syscall.SIGTERM) // one that exited already is waited for below
			}
			select {
			case <-p.Exited():
			case l := <-lost:
				return jr, fmt.Errorf("job %s: %w", d.Jobs[l.job].Name, l.proc.ExitError(l.noReport()))
			case <-wait.Done():
				if err := ctx.Err(); err != nil {
					return jr, fmt.Errorf("waiting for the endpoints: %w", err)
				}
				slog.Warn("endpoints still run past their deadline; stopping them", "node", p.Node, "role", p.Role)
				p.Stop(exitGrace)
			}
		}
	}
	jr.ended = time.Now()
	var errs []error
	for _, p := range procs {
		if err := p.Stop(exitGrace); err != nil { // forgets the process in the run's state
			errs = append(errs, err)
		}
	}
	errs = append(errs, readReports(eps, outcomes)...)
	procs = nil
	if err := errors.Join(errs...); err != nil {
		return jr, err
	}
	jr.outcomes = outcomes
	return jr, nil
}

// startHost starts one `grid endpoint-host` running every endpoint, each
// socket in its host's namespace, and waits until all are bound.
func startHost(ctx context.Context, cfg *Config, st *fabric.State, eps []*endpointFiles, dir string) ([]*endpointProc, error) {
	spec := &endpointhost.Spec{}
	for _, ep := range eps {
		node := st.Node(ep.host)
		if node == nil {
			return nil, fmt.Errorf("endpoint %s: host %s is not in run %s", ep.name, ep.host, st.Run)
		}
		role := endpoint.RoleWorker
		if ep.index < 0 {
			role = endpoint.RolePS
		}
		spec.Endpoints = append(spec.Endpoints, endpointhost.Endpoint{Name: ep.name, Namespace: node.NamespacePath(),
			Spec: ep.spec, Role: role, Index: max(ep.index, 0), Report: ep.report, Log: ep.log})
	}
	specPath := filepath.Join(dir, "endpoints.json")
	if err := spec.Write(specPath); err != nil {
		return nil, fmt.Errorf("endpoint host: %w", err)
	}
	argv := []string{cfg.Binary, "endpoint-host", specPath}
	p, err := controller.StartProcess(st.Run, "", "endpoint-host", argv, filepath.Join(dir, "endpoint-host.log"), false)
	if err != nil {
		return nil, err
	}
	proc := &endpointProc{Process: p, workers: true, eps: eps}
	for _, ep := range eps {
		ep.proc = proc
	}
	procs := []*endpointProc{proc}
	return procs, p.WaitLine(ctx, hostReadyLine, startTimeout+time.Duration(len(eps))*hostStartPerEndpoint)
}

// startEach starts every PS and then every worker as its own process in
// its host's namespace (`grid ps`, `grid worker`), waiting for each one's
// ready line: the PSs first, so the workers' first fragments find their
// ports open.
func startEach(ctx context.Context, cfg *Config, run string, eps []*endpointFiles, d *aggregator.Deployment) (procs []*endpointProc, err error) {
	for _, workers := range []bool{false, true} {
		var started []*endpointFiles
		for _, ep := range eps {
			if (ep.index >= 0) != workers {
				continue
			}
			role, argv := endpoint.RolePS, []string{cfg.Binary, "ps", "--spec", ep.spec, "--report", ep.report}
			if workers {
				role, argv = endpoint.RoleWorker, []string{cfg.Binary, "worker", "--spec", ep.spec, "--index", strconv.Itoa(ep.index), "--report", ep.report}
			}
			p, err := controller.StartProcess(run, ep.host, role, argv, ep.log, false)
			if err != nil {
				return procs, fmt.Errorf("job %s: %w", d.Jobs[ep.job].Name, err)
			}
			ep.proc = &endpointProc{Process: p, workers: workers, eps: []*endpointFiles{ep}}
			procs = append(procs, ep.proc)
			started = append(started, ep)
		}
		ready := psReadyLine
		if workers {
			ready = workerReadyLine
		}
		for _, ep := range started {
			if err := ep.proc.WaitLine(ctx, ready, startTimeout); err != nil {
				return procs, fmt.Errorf("job %s: %w", d.Jobs[ep.job].Name, err)
			}
		}
	}
	return procs, nil
}

// readReports fills the outcomes with the reports the endpoints left and
// returns an error for each that left none.
func readReports(eps []*endpointFiles, outcomes []JobOutcome) []error {
	var errs []error
	for _, ep := range eps {
		r, err := readReport(ep.report)
		if err != nil {
			if ep.proc != nil && errors.Is(err, fs.ErrNotExist) {
				err = ep.proc.ExitError(ep.noReport())
			}
			errs = append(errs, fmt.Errorf("job %s: %w", outcomes[ep.job].Name, err))
			continue
		}
		if ep.index < 0 {
			outcomes[ep.job].PS = r
		} else {
			outcomes[ep.job].Workers[ep.index] = r
		}
	}
	return errs
}

// finished reports whether the job's PS and every worker left a report.
func (j *JobOutcome) finished() bool {
	if j.PS == nil {
		return false
	}
	for _, w := range j.Workers {
		if w == nil {
			return false
		}
	}
	return true
}

// endpointBudget is the endpoints' time: the initial retransmission
// timeout and its floor, the deadline and the start wait.
type endpointBudget struct {
	timeout, minTimeout, maxTimeout, deadline, startWait time.Duration
}

// budget is the endpoints' time: cfg's where given, else derived from the
// plan's work on the topology as emulated. The initial timeout is at least
// the longest wait in an emulated link's queue (QueueWait): on a link
// scaled down to a few Mbit/s the first windows queue longer than the work
// alone suggests.
func budget(cfg *Config, d *aggregator.Deployment) endpointBudget {
	t := emulatedOf(cfg)
	w := planWork(t, d, cfg.Fragments, cfg.Values, cfg.Window.Initial)
	b := endpointBudget{timeout: cfg.Timeout, minTimeout: w.minTimeout(), maxTimeout: w.maxTimeout(QueueWait(t)),
		deadline: cfg.Deadline, startWait: w.startWait()}
	if b.timeout == 0 {
		b.timeout = max(w.initialTimeout(), QueueWait(t))
	}
	if b.deadline == 0 {
		b.deadline = w.deadline()
	}
	// An explicit initial timeout below the floor is the user's choice.
	b.minTimeout = min(b.minTimeout, b.timeout)
	return b
}

// emulatedOf is the topology as the fabric emulates it.
func emulatedOf(cfg *Config) *topo.Topology {
	if cfg.emulated != nil {
		return cfg.emulated
	}
	return cfg.Topology
}

// distinctHosts refuses deployments where a host has two endpoints: each
// endpoint binds its host's address on the GRID port.
func distinctHosts(d *aggregator.Deployment) error {
	seen := map[string]string{}
	for _, jd := range d.Jobs {
		for _, h := range append([]string{jd.PS}, jd.Workers...) {
			if other, dup := seen[h]; dup {
				return fmt.Errorf("host %s is an endpoint of job %s and of job %s: one endpoint per host (each binds UDP port 18258)", h, other, jd.Name)
			}
			seen[h] = jd.Name
		}
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func readReport(path string) (*endpoint.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r endpoint.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}
