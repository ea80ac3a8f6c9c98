package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/controller"
	"github.com/grid-ina/grid/harness/endpoint"
)

// psReadyLine and workerReadyLine start the lines `grid ps` and `grid
// worker` print once their socket is bound.
const (
	psReadyLine     = "grid ps: listening on "
	workerReadyLine = "grid worker: listening on "
)

// startTimeout bounds an endpoint's start until its ready line.
const startTimeout = 10 * time.Second

// exitGrace is how long endpoints get beyond their own deadline before
// the runner stops them, and how long they get to write their report
// after SIGTERM.
const exitGrace = 5 * time.Second

// jobsRun is the endpoints' run of one plan.
type jobsRun struct {
	outcomes     []JobOutcome
	began, ended time.Time
}

// endpointProc is one started endpoint and where its report goes.
type endpointProc struct {
	*controller.Process
	report string
	job    int // index into the outcomes
	index  int // worker's member index; -1 for the PS
}

// runJobs writes each job's spec into dir, starts its PS and then its
// workers in their hosts' namespaces, waits until all have exited (at most
// the deadline plus exitGrace; then they are stopped) and reads their
// reports. The run is returned also with an error: every endpoint is
// stopped first, and the jobs whose PS and workers all left a report are
// kept as finished.
func runJobs(ctx context.Context, cfg *Config, run string, d *aggregator.Deployment, dir string) (jr *jobsRun, err error) {
	jr = &jobsRun{}
	if err := distinctHosts(d); err != nil {
		return jr, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return jr, fmt.Errorf("endpoint files: %w", err)
	}
	outcomes := make([]JobOutcome, len(d.Jobs))
	var procs []*endpointProc
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
		readReports(procs, outcomes)
		for _, o := range outcomes {
			if o.finished() {
				jr.outcomes = append(jr.outcomes, o)
			}
		}
	}()
	specs := make([]string, len(d.Jobs))
	timeout, deadline, startWait := budget(cfg, d)
	slog.Info("endpoint budget", "initial_timeout", timeout, "deadline", deadline, "start_wait", startWait)
	for i, jd := range d.Jobs {
		outcomes[i] = JobOutcome{Name: jd.Name, ID: jd.Plan.Job, Workers: make([]*endpoint.Report, len(jd.Workers))}
		spec := endpoint.Spec{
			Job:       endpoint.JobFromPlan(jd.Plan, jd.PS, jd.Workers),
			Fragments: cfg.Fragments, Seed: cfg.Seed, Window: cfg.Window,
			Timeout: endpoint.Duration(timeout), Deadline: endpoint.Duration(deadline),
			// Workers start together on SIGUSR1, so none waits for one
			// that is still being launched (and resends meanwhile).
			Start: endpoint.StartSignal, StartWait: endpoint.Duration(startWait),
		}
		if err := spec.Validate(); err != nil {
			return jr, fmt.Errorf("job %s: endpoint spec: %w", jd.Name, err)
		}
		specs[i] = filepath.Join(dir, fmt.Sprintf("job%d.json", jd.Plan.Job))
		if err := writeJSON(specs[i], &spec); err != nil {
			return jr, fmt.Errorf("job %s: %w", jd.Name, err)
		}
		report := filepath.Join(dir, fmt.Sprintf("job%d-ps.report.json", jd.Plan.Job))
		argv := []string{cfg.Binary, "ps", "--spec", specs[i], "--report", report}
		p, err := controller.StartProcess(run, jd.PS, "ps", argv, filepath.Join(dir, fmt.Sprintf("job%d-ps.log", jd.Plan.Job)), false)
		if err != nil {
			return jr, fmt.Errorf("job %s: %w", jd.Name, err)
		}
		procs = append(procs, &endpointProc{Process: p, report: report, job: i, index: -1})
	}
	// Workers start once the PSs listen, so their first fragments find
	// the port open.
	for _, p := range procs {
		if err := p.WaitLine(ctx, psReadyLine, startTimeout); err != nil {
			return jr, fmt.Errorf("job %s: %w", d.Jobs[p.job].Name, err)
		}
	}
	for i, jd := range d.Jobs {
		for w, host := range jd.Workers {
			name := fmt.Sprintf("job%d-worker%d", jd.Plan.Job, w)
			report := filepath.Join(dir, name+".report.json")
			argv := []string{cfg.Binary, "worker", "--spec", specs[i], "--index", strconv.Itoa(w), "--report", report}
			p, err := controller.StartProcess(run, host, "worker", argv, filepath.Join(dir, name+".log"), false)
			if err != nil {
				return jr, fmt.Errorf("job %s: %w", jd.Name, err)
			}
			procs = append(procs, &endpointProc{Process: p, report: report, job: i, index: w})
		}
	}
	for _, p := range procs {
		if p.index >= 0 {
			if err := p.WaitLine(ctx, workerReadyLine, startTimeout); err != nil {
				return jr, fmt.Errorf("job %s: %w", d.Jobs[p.job].Name, err)
			}
		}
	}
	jr.began = time.Now()
	for _, p := range procs {
		if p.index >= 0 {
			if err := p.Signal(syscall.SIGUSR1); err != nil {
				return jr, fmt.Errorf("job %s: start: %w", d.Jobs[p.job].Name, err)
			}
		}
	}
	slog.Info("endpoints started", "jobs", len(d.Jobs), "processes", len(procs), "fragments", cfg.Fragments, "values", cfg.Values)

	wait, cancel := context.WithTimeout(ctx, deadline+exitGrace)
	defer cancel()
	// An endpoint that exits without a report (killed, crashed) leaves its
	// job unable to finish: the run fails at once rather than at the
	// deadline, which may be far.
	lost := make(chan *endpointProc, len(procs))
	for _, p := range procs {
		go func() {
			<-p.Exited()
			if _, err := os.Stat(p.report); err != nil {
				lost <- p
			}
		}()
	}
	// Workers first: once all have exited, nobody needs the PSs' answers
	// to late resends, so their lingering is cut short (a complete PS
	// exits verified on SIGTERM).
	for _, workers := range []bool{true, false} {
		for _, p := range procs {
			if (p.index >= 0) != workers {
				continue
			}
			if !workers {
				p.Signal(syscall.SIGTERM) // one that exited already is waited for below
			}
			select {
			case <-p.Exited():
			case l := <-lost:
				return jr, fmt.Errorf("job %s: %w", d.Jobs[l.job].Name, l.ExitError("exited without a report"))
			case <-wait.Done():
				if err := ctx.Err(); err != nil {
					return jr, fmt.Errorf("waiting for the endpoints: %w", err)
				}
				slog.Warn("endpoint still runs past its deadline; stopping it", "node", p.Node, "role", p.Role)
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
	errs = append(errs, readReports(procs, outcomes)...)
	procs = nil
	if err := errors.Join(errs...); err != nil {
		return jr, err
	}
	jr.outcomes = outcomes
	return jr, nil
}

// readReports fills the outcomes with the reports the endpoints left and
// returns an error for each that left none.
func readReports(procs []*endpointProc, outcomes []JobOutcome) []error {
	var errs []error
	for _, p := range procs {
		r, err := readReport(p.report)
		if err != nil {
			errs = append(errs, fmt.Errorf("job %s: %w", outcomes[p.job].Name, p.ExitError("left no report: "+err.Error())))
			continue
		}
		if p.index < 0 {
			outcomes[p.job].PS = r
		} else {
			outcomes[p.job].Workers[p.index] = r
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

// budget is the endpoints' initial retransmission timeout, deadline and
// start wait: cfg's where given, else derived from the plan's work on the
// topology as emulated. The initial timeout is at least the longest wait
// in an emulated link's queue (QueueWait): on a link scaled down to a few
// Mbit/s the first windows queue longer than the work alone suggests.
func budget(cfg *Config, d *aggregator.Deployment) (timeout, deadline, startWait time.Duration) {
	t := cfg.emulated
	if t == nil {
		t = cfg.Topology
	}
	w := planWork(t, d, cfg.Fragments, cfg.Values, cfg.Window.Initial)
	timeout, deadline = cfg.Timeout, cfg.Deadline
	if timeout == 0 {
		timeout = max(w.initialTimeout(), QueueWait(t))
	}
	if deadline == 0 {
		deadline = w.deadline()
	}
	return timeout, deadline, w.startWait()
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
