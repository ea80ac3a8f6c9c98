package runner

import (
	"github.com/grid-ina/grid/harness/internal/cputime"
	"github.com/grid-ina/grid/harness/results"
)

// Results is the experiment as harness/results writes it: the folder name
// under the results root and further files (plan, comparison, drawings)
// as results.Experiment takes them.
func (e *Experiment) Results(name string, files map[string][]byte) *results.Experiment {
	r := &results.Experiment{
		Name: name, Run: e.Run, Topology: e.Topology.Name,
		Hosts: len(e.Topology.Hosts()), Switches: len(e.Topology.Switches()),
		Fragments: e.Fragments, Values: e.Values,
		Began: e.Began, Ended: e.Ended, Files: files,
	}
	for _, o := range e.Outcomes {
		// Every plan ran on the same fabric, so the monitors list the same
		// links; a refused plan has none.
		if r.Links == nil {
			r.Links = o.Links
		}
		a := results.AlgorithmRun{Algorithm: o.Algorithm, Refused: o.Refused, Began: o.Began, Ended: o.Ended, Traffic: o.Traffic,
			Switches: o.Switches, CPU: cpuRecord(o.CPU), Disturbed: o.Disturbed}
		for _, j := range o.Jobs {
			a.Jobs = append(a.Jobs, results.Job{Name: j.Name, ID: j.ID, PS: j.PS, Workers: j.Workers})
		}
		r.Algorithms = append(r.Algorithms, a)
	}
	return r
}

// cpuRecord is the CPU share as results records it; nil when it was not
// measured.
func cpuRecord(sh cputime.Share) *results.CPU {
	if sh.Wall <= 0 {
		return nil
	}
	c := &results.CPU{Cores: sh.Cores, Run: sh.TreeCores(), Others: sh.OthersCores()}
	if sh.PressureKnown {
		stalled := sh.StalledFraction()
		c.Stalled = &stalled
	}
	return c
}
