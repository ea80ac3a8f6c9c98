// Package results writes an experiment's results folder: summary.json,
// traffic.csv, jobs.csv, PNG plots (gonum.org/v1/plot) and any files the
// runner adds (its plan, comparison, topology drawing). The folder is built
// under a hidden temporary name beside its final one and renamed into place
// when complete, so a results folder that exists is whole; on any error
// nothing is left. results/README.md documents the files.
package results

import (
	"fmt"
	"os"
	"regexp"
	"time"
)

// Experiment is what the runner fills: one fabric run on which one or more
// algorithms' plans ran one after another.
type Experiment struct {
	// Name is the folder's name under the results root, e.g. "ft4-20261130T120000Z".
	Name string
	// Run is the fabric run's name; Topology the topology's name.
	Run      string
	Topology string
	// Hosts and Switches count the topology's nodes.
	Hosts, Switches int
	// Fragments and Values are each worker's gradient: Fragments packets of
	// Values int32 values.
	Fragments, Values int
	// Scale is the factor every rate of the model was emulated at (0
	// means 1); rates are shown as emulated and scaled back by it.
	Scale float64
	// Rates are every rate of the model, as the topology states it and as
	// emulated.
	Rates []Rate
	// Switch is what ran the switches ("grid switch", or "bmv2" with what
	// differs) and Compiler what compiled their program; "" when unknown.
	Switch, Compiler string
	// Began and Ended bound the whole experiment; times in the CSV files
	// count from Began.
	Began, Ended time.Time
	// Status is how the experiment ended: StatusComplete ("" means it),
	// StatusFailed or StatusInterrupted; Reason says why it stopped short.
	Status Status
	Reason string
	// Links are the fabric's links; LinkSample.Link indexes them.
	Links []Link
	// Events name the switches' aggregation events, the columns of
	// SwitchCounters.Jobs (gradproto.Event names).
	Events []string
	// Algorithms are the plans run, in order.
	Algorithms []AlgorithmRun
	// Files are further files written as given, e.g. "plan.json"; a name
	// must be a plain file name, and one the writer makes itself is an error.
	Files map[string][]byte
	// Dirs are directories copied in, by the subfolder name they get (e.g.
	// "endpoints" for the endpoints' specs, reports and logs): regular files
	// and subdirectories, recursively; anything else in them is an error.
	Dirs map[string]string
}

// Status is how an experiment ended.
type Status string

const (
	StatusComplete    Status = "complete"
	StatusFailed      Status = "failed"      // an error stopped it (a switch or endpoint that failed), or a job did not verify
	StatusInterrupted Status = "interrupted" // Ctrl-C or SIGTERM stopped it
)

// AlgorithmRun is one algorithm's plan run on the fabric.
type AlgorithmRun struct {
	// Algorithm names the solver algorithm ("grid-paths", "atp", ...).
	Algorithm string
	// Refused says why the plan could not be deployed; nothing ran then,
	// and Jobs and Traffic are empty.
	Refused string
	// Failed says why the plan's run stopped short; Jobs holds the jobs
	// that finished, Traffic what was sampled until then.
	Failed string
	// PredictedLambdaGbps is the slowest worker's sending rate the plan
	// predicts, in the topology's units (0: none to compare with).
	PredictedLambdaGbps float64
	// PredictedLinks are the plan's per-link-direction predictions.
	PredictedLinks []PredictedLink
	// Began is when the endpoints were started, Ended when the last exited.
	Began, Ended time.Time
	Jobs         []Job
	// Traffic is every link's cumulative counts sampled over this run,
	// oldest first; totals are written counting from its first sample.
	Traffic []LinkSample
	// Switches are every switch's P4 counters after the jobs ended:
	// port_rx/port_tx per port and the jobs' aggregation events.
	Switches []SwitchCounters
	// Meters are the switches' capacity meters as the plan configured them.
	Meters []Meter
	// CPU is how the machine's CPU was shared while the jobs ran (nil when
	// it could not be read).
	CPU *CPU
	// Disturbed says why the run's timings and rates are not the emulated
	// network's alone; empty when nothing disturbed them.
	Disturbed []string
}

// CPU is how the machine's CPU was shared while an algorithm's jobs ran,
// in cores averaged over that time.
type CPU struct {
	// Cores is how many the machine has.
	Cores int `json:"cores"`
	// Run is what the run's own processes (switches, endpoints, the
	// runner) used, Others what every other process on the machine used.
	Run    float64 `json:"run_cores"`
	Others float64 `json:"other_cores"`
	// Stalled is the share of the time some runnable task waited for a CPU
	// (the kernel's CPU pressure); absent where the kernel has no PSI.
	Stalled *float64 `json:"stalled_fraction,omitempty"`
}

// Job is one training job's endpoint reports.
type Job struct {
	Name    string
	ID      uint16
	PS      *Endpoint
	Workers []*Endpoint // in member order
}

// Completion is a job's completion: from its first worker's start to its
// last worker's last result; Verified when the PS and every worker verified
// every sum. An unfinished worker counts with its end time, which is then
// its deadline or when it was stopped, not a completion: Finished says
// whether every worker got its last result.
type Completion struct {
	Start, End time.Time
	Seconds    float64
	Verified   bool
	Finished   bool
}

// Completion computes the job's completion from its reports.
func (j *Job) Completion() Completion {
	var c Completion
	c.Verified = j.PS != nil && j.PS.Verified && len(j.Workers) > 0
	c.Finished = len(j.Workers) > 0
	for _, w := range j.Workers {
		last := w.Done
		if last.IsZero() {
			last = w.End
			c.Finished = false
		}
		if c.Start.IsZero() || w.Start.Before(c.Start) {
			c.Start = w.Start
		}
		if last.After(c.End) {
			c.End = last
		}
		c.Verified = c.Verified && w.Verified
	}
	if c.End.After(c.Start) {
		c.Seconds = c.End.Sub(c.Start).Seconds()
	}
	return c
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// check rejects an experiment the files could not represent, naming the field.
func (e *Experiment) check() error {
	if !plainName.MatchString(e.Name) {
		return fmt.Errorf("results: name %q: want letters, digits and . _ + - (not first), no path", e.Name)
	}
	switch e.Status {
	case "", StatusComplete, StatusFailed, StatusInterrupted:
	default:
		return fmt.Errorf("results %s: status %q: want %s, %s or %s", e.Name, e.Status, StatusComplete, StatusFailed, StatusInterrupted)
	}
	if e.Began.IsZero() {
		return fmt.Errorf("results %s: began: not set (the CSV times count from it)", e.Name)
	}
	seen := map[string]bool{}
	for i, a := range e.Algorithms {
		if !plainName.MatchString(a.Algorithm) {
			return fmt.Errorf("results: algorithms[%d].algorithm %q: want letters, digits and . _ + - (it names plot files)", i, a.Algorithm)
		}
		if seen[a.Algorithm] {
			return fmt.Errorf("results: algorithms[%d].algorithm %q appears twice", i, a.Algorithm)
		}
		seen[a.Algorithm] = true
		for j, job := range a.Jobs {
			if job.PS == nil {
				return fmt.Errorf("results: algorithms[%d] (%s).jobs[%d] (%s): no PS report", i, a.Algorithm, j, job.Name)
			}
			for k, w := range job.Workers {
				if w == nil {
					return fmt.Errorf("results: algorithms[%d] (%s).jobs[%d] (%s).workers[%d]: no report", i, a.Algorithm, j, job.Name, k)
				}
			}
		}
		for k, s := range a.Traffic {
			if s.Link < 0 || s.Link >= len(e.Links) {
				return fmt.Errorf("results: algorithms[%d] (%s).traffic[%d].link %d: the experiment has %d links", i, a.Algorithm, k, s.Link, len(e.Links))
			}
		}
	}
	for name := range e.Files {
		if !plainName.MatchString(name) {
			return fmt.Errorf("results: files[%q]: want a plain file name", name)
		}
	}
	for name, src := range e.Dirs {
		if !plainName.MatchString(name) {
			return fmt.Errorf("results: dirs[%q]: want a plain folder name", name)
		}
		if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
			return fmt.Errorf("results: dirs[%q]: %s is not a directory", name, src)
		}
	}
	return nil
}
