package runner

import (
	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/controller"
	"github.com/grid-ina/grid/harness/endpoint"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/internal/cputime"
	"github.com/grid-ina/grid/harness/monitor"
	"github.com/grid-ina/grid/harness/results"
)

// Results is the experiment as harness/results writes it: the folder name
// under the results root and further files (plan, comparison, drawings)
// as results.Experiment takes them. What was measured becomes plain
// records here, so results depends on none of the measuring packages.
func (e *Experiment) Results(name string, files map[string][]byte) *results.Experiment {
	r := &results.Experiment{
		Name: name, Run: e.Run, Topology: e.Topology.Name,
		Hosts: len(e.Topology.Hosts()), Switches: len(e.Topology.Switches()),
		Fragments: e.Fragments, Values: e.Values, Scale: e.Scale, Rates: e.Rates,
		Began: e.Began, Ended: e.Ended, Files: files,
	}
	for ev := range gradproto.NumEvents {
		r.Events = append(r.Events, ev.String())
	}
	for _, o := range e.Outcomes {
		// Every plan ran on the same fabric, so the monitors list the same
		// links; a refused plan has none.
		if r.Links == nil && o.Links != nil {
			r.Links = LinkRecords(o.Links)
		}
		a := results.AlgorithmRun{Algorithm: o.Algorithm, Refused: o.Refused, Failed: o.Failed, Began: o.Began, Ended: o.Ended, PredictedLambdaGbps: o.lambda(), PredictedLinks: o.predictedLinks(),
			Traffic: o.Traffic, Switches: switchRecords(o.Switches), Meters: meterRecords(o.Deployment), CPU: cpuRecord(o.CPU), Disturbed: o.Disturbed}
		for _, j := range o.Jobs {
			job := results.Job{Name: j.Name, ID: j.ID, PS: endpointRecord(j.PS)}
			for _, w := range j.Workers {
				job.Workers = append(job.Workers, endpointRecord(w))
			}
			a.Jobs = append(a.Jobs, job)
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

// LinkRecords are the monitor's links as results records.
func LinkRecords(links []monitor.LinkInfo) []results.Link {
	out := make([]results.Link, len(links))
	for i, l := range links {
		out[i] = results.Link{A: l.A, B: l.B, NodeA: l.NodeA, NodeB: l.NodeB, RateBits: l.RateBits}
	}
	return out
}

// SampleRecords are the monitor's link samples as results records.
func SampleRecords(samples []monitor.LinkSample) []results.LinkSample {
	if samples == nil {
		return nil
	}
	out := make([]results.LinkSample, len(samples))
	for i, s := range samples {
		out[i] = results.LinkSample{Time: s.Time, Link: s.Link,
			AB: results.Count{Bytes: s.AB.Bytes, Packets: s.AB.Packets}, BA: results.Count{Bytes: s.BA.Bytes, Packets: s.BA.Packets}}
	}
	return out
}

func endpointRecord(r *endpoint.Report) *results.Endpoint {
	if r == nil {
		return nil
	}
	e := &results.Endpoint{Role: r.Role, Job: r.Job, Index: r.Index, Host: r.Host, IP: r.IP,
		Fragments: r.Fragments, Completed: r.Completed, Sent: r.Sent, Retries: r.Retries, Resent: r.Resent, Controls: r.Controls,
		Verified: r.Verified, Start: r.Start, Done: r.Done, End: r.End, Seconds: r.Seconds, GoodputBitsPerSec: r.GoodputBitsPerSec}
	if err := r.Failure(); err != nil {
		e.Failure = err.Error()
	}
	return e
}

func switchRecords(cs []controller.Counters) []results.SwitchCounters {
	var out []results.SwitchCounters
	for _, c := range cs {
		sc := results.SwitchCounters{Switch: c.Switch, Jobs: map[uint16][]uint64{}}
		for _, p := range c.Ports {
			sc.Ports = append(sc.Ports, results.PortCount{Port: p.Port,
				Rx: results.Count{Bytes: p.Rx.Bytes, Packets: p.Rx.Packets}, Tx: results.Count{Bytes: p.Tx.Bytes, Packets: p.Tx.Packets}})
		}
		for job, stats := range c.Jobs {
			sc.Jobs[job] = append([]uint64(nil), stats[:]...)
		}
		out = append(out, sc)
	}
	return out
}

// meterRecords are the capacity meters of d's switches that meter an
// aggregation.
func meterRecords(d *aggregator.Deployment) []results.Meter {
	if d == nil {
		return nil
	}
	var out []results.Meter
	for _, s := range d.Switches {
		if c := s.Config.Capacity; c != nil && len(s.Config.Aggregations) > 0 {
			out = append(out, results.Meter{Switch: s.Name, PacketsPerSecond: c.PacketsPerSecond, Burst: c.Burst})
		}
	}
	return out
}

// lambda is the slowest worker's rate the outcome's plan predicts, Gbps.
func (o *Outcome) lambda() float64 {
	if o.Plan == nil {
		return 0
	}
	return o.Plan.LambdaGbps
}

// predictedLinks are the outcome's plan's per-link-direction predictions.
func (o *Outcome) predictedLinks() []results.PredictedLink {
	if o.Plan == nil {
		return nil
	}
	var out []results.PredictedLink
	for _, l := range o.Plan.Links {
		p := results.PredictedLink{From: l.From, To: l.To, Bits: l.LoadGbps * 1e9}
		for _, k := range l.Packets {
			p.PacketsPerFragment += k.Gradients + float64(k.PartialSums+k.Results)
		}
		out = append(out, p)
	}
	return out
}
