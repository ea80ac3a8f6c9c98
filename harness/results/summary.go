package results

import (
	"fmt"
	"time"
)

// SummarySchema is the version of summary.json's layout; it changes when a
// field changes meaning or goes away (new fields keep it).
const SummarySchema = 1

// Summary is summary.json: the experiment in numbers, for scripts and for
// comparing runs. results/README.md documents every field.
type Summary struct {
	Schema                 int    `json:"schema"`
	Name                   string `json:"name"`
	Run                    string `json:"run"`
	Topology               string `json:"topology"`
	Hosts                  int    `json:"hosts"`
	Switches               int    `json:"switches"`
	Links                  int    `json:"links"`
	FragmentsPerWorker     int    `json:"fragments_per_worker"`
	ValuesPerFragment      int    `json:"values_per_fragment"`
	Switch                 string `json:"switch,omitempty"`
	Compiler               string `json:"compiler,omitempty"`
	GradientBytesPerWorker int64  `json:"gradient_bytes_per_worker"`
	// Scale is the factor every rate of the model was emulated at, and
	// Rates every rate as the topology states it and as emulated.
	Scale      float64            `json:"scale"`
	Rates      []Rate             `json:"rates,omitempty"`
	Began      time.Time          `json:"began"`
	Ended      time.Time          `json:"ended"`
	Seconds    float64            `json:"seconds"`
	Status     Status             `json:"status"`
	Reason     string             `json:"reason,omitempty"`
	Verified   bool               `json:"verified"`
	Algorithms []AlgorithmSummary `json:"algorithms"`
	Files      []string           `json:"files"`
}

// AlgorithmSummary is one algorithm's run in summary.json.
type AlgorithmSummary struct {
	Algorithm             string         `json:"algorithm"`
	Refused               string         `json:"refused,omitempty"`
	Failed                string         `json:"failed,omitempty"`
	Began                 time.Time      `json:"began,omitzero"`
	Ended                 time.Time      `json:"ended,omitzero"`
	Seconds               float64        `json:"seconds"`
	Verified              bool           `json:"verified"`
	MeanCompletionSeconds float64        `json:"mean_completion_seconds"`
	MaxCompletionSeconds  float64        `json:"max_completion_seconds"`
	Jobs                  []JobSummary   `json:"jobs"`
	Traffic               TrafficSummary `json:"traffic"`
	// Fidelity is the measured slowest-worker sending rate against the
	// plan's prediction; absent for a plan that did not run.
	Fidelity  *Fidelity `json:"fidelity,omitempty"`
	CPU       *CPU      `json:"cpu,omitempty"`
	Disturbed []string  `json:"disturbed,omitempty"`
}

// JobSummary is one job in summary.json.
type JobSummary struct {
	Name                    string   `json:"name"`
	ID                      uint16   `json:"id"`
	PS                      string   `json:"ps"`
	Workers                 int      `json:"workers"`
	CompletionSeconds       float64  `json:"completion_seconds"`
	Verified                bool     `json:"verified"`
	MinWorkerGoodputBitsSec float64  `json:"min_worker_goodput_bits_per_second"`
	Sent                    int      `json:"sent"`
	Resent                  int      `json:"resent"`
	Controls                int      `json:"controls"`
	Failures                []string `json:"failures,omitempty"`
	// SwitchEvents sums the job's aggregation events over all switches,
	// by event name (Experiment.Events).
	SwitchEvents map[string]uint64 `json:"switch_events,omitempty"`
}

// TrafficSummary is an algorithm's traffic in summary.json, from its first
// to its last monitor sample.
type TrafficSummary struct {
	Samples          int               `json:"samples"`
	Seconds          float64           `json:"seconds"`
	Bytes            uint64            `json:"bytes"`
	Packets          uint64            `json:"packets"`
	BusiestLink      string            `json:"busiest_link,omitempty"`
	BusiestLinkBytes uint64            `json:"busiest_link_bytes"`
	PSIngressBytes   map[string]uint64 `json:"ps_ingress_bytes,omitempty"`
}

// Summary is what summary.json will say of e (without its list of files).
func (e *Experiment) Summary() *Summary {
	return summarize(e, e.traffic(), nil)
}

// traffic reads every algorithm's samples once for all that derives from
// them.
func (e *Experiment) traffic() []linkTraffic {
	traffic := make([]linkTraffic, len(e.Algorithms))
	for i := range e.Algorithms {
		traffic[i] = relativeTraffic(e.Links, e.Algorithms[i].Traffic)
	}
	return traffic
}

// LowFidelity says, per algorithm whose measured fidelity is below
// MinFidelity, by how much; empty when none is.
func (s *Summary) LowFidelity() []string {
	return s.fidelityOutside((*Fidelity).Low, "want at least", MinFidelity)
}

// HighFidelity says, per algorithm whose measured fidelity is above
// MaxFidelity, by how much; empty when none is.
func (s *Summary) HighFidelity() []string {
	out := s.fidelityOutside((*Fidelity).High, "want at most", MaxFidelity)
	k := 0
	for _, a := range s.Algorithms {
		if a.Fidelity.High() {
			out[k] += "; " + a.Fidelity.Excess()
			k++
		}
	}
	return out
}

func (s *Summary) fidelityOutside(outside func(*Fidelity) bool, want string, bound float64) []string {
	var out []string
	for _, a := range s.Algorithms {
		if outside(a.Fidelity) {
			out = append(out, fmt.Sprintf("%s: slowest worker %s sent %s, %.3f of the predicted %s (%s %.2f)",
				a.Algorithm, a.Fidelity.SlowestWorker, BitRate(a.Fidelity.MeasuredBits), *a.Fidelity.Ratio, BitRate(a.Fidelity.PredictedBits), want, bound))
		}
	}
	return out
}

func summarize(e *Experiment, traffic []linkTraffic, files []string) *Summary {
	s := &Summary{
		Schema: SummarySchema, Name: e.Name, Run: e.Run, Topology: e.Topology,
		Hosts: e.Hosts, Switches: e.Switches, Links: len(e.Links),
		FragmentsPerWorker: e.Fragments, ValuesPerFragment: e.Values, Switch: e.Switch, Compiler: e.Compiler,
		GradientBytesPerWorker: int64(e.Fragments) * int64(e.Values) * 4, Scale: e.scale(), Rates: e.Rates,
		Began: e.Began, Ended: e.Ended, Seconds: e.Ended.Sub(e.Began).Seconds(),
		Status: e.Status, Reason: e.Reason,
		Verified: e.Status == "" || e.Status == StatusComplete, Algorithms: make([]AlgorithmSummary, 0, len(e.Algorithms)), Files: files,
	}
	if s.Status == "" {
		s.Status = StatusComplete
	}
	for i, a := range e.Algorithms {
		as := AlgorithmSummary{Algorithm: a.Algorithm, Refused: a.Refused, Failed: a.Failed, Began: a.Began, Ended: a.Ended,
			Verified: a.Refused == "" && a.Failed == "" && len(a.Jobs) > 0, Jobs: make([]JobSummary, 0, len(a.Jobs)),
			CPU: a.CPU, Disturbed: a.Disturbed}
		if !a.Began.IsZero() && a.Ended.After(a.Began) {
			as.Seconds = a.Ended.Sub(a.Began).Seconds()
		}
		for _, j := range a.Jobs {
			c := j.Completion()
			js := JobSummary{Name: j.Name, ID: j.ID, PS: j.PS.Host, Workers: len(j.Workers),
				CompletionSeconds: c.Seconds, Verified: c.Verified, Failures: jobFailures(&j)}
			for k, w := range j.Workers {
				if k == 0 || w.GoodputBitsPerSec < js.MinWorkerGoodputBitsSec {
					js.MinWorkerGoodputBitsSec = w.GoodputBitsPerSec
				}
				js.Sent += w.Sent
				js.Resent += w.Resent
				js.Controls += w.Controls
			}
			js.SwitchEvents = switchEvents(e.Events, a.Switches, j.ID)
			as.Verified = as.Verified && c.Verified
			as.MeanCompletionSeconds += c.Seconds / float64(len(a.Jobs))
			as.MaxCompletionSeconds = max(as.MaxCompletionSeconds, c.Seconds)
			as.Jobs = append(as.Jobs, js)
		}
		as.Traffic = summarizeTraffic(e, a, traffic[i])
		as.Fidelity = fidelity(e, &e.Algorithms[i], &traffic[i])
		// A refused plan ran nothing, so it fails nothing.
		if a.Refused == "" {
			s.Verified = s.Verified && as.Verified
		}
		s.Algorithms = append(s.Algorithms, as)
	}
	return s
}

func switchEvents(events []string, switches []SwitchCounters, job uint16) map[string]uint64 {
	var sum map[string]uint64
	for _, sw := range switches {
		stats, ok := sw.Jobs[job]
		if !ok {
			continue
		}
		if sum == nil {
			sum = map[string]uint64{}
		}
		for ev, name := range events {
			var n uint64 // an event the switch did not report counts 0
			if ev < len(stats) {
				n = stats[ev]
			}
			sum[name] += n
		}
	}
	return sum
}

func summarizeTraffic(e *Experiment, a AlgorithmRun, t linkTraffic) TrafficSummary {
	var ts TrafficSummary
	ts.Samples = len(t.times)
	if len(t.times) > 0 {
		ts.Seconds = t.times[len(t.times)-1].Sub(t.start).Seconds()
	}
	for _, s := range t.last {
		if s.Link < 0 {
			continue
		}
		total := s.AB.Bytes + s.BA.Bytes
		ts.Bytes += total
		ts.Packets += s.AB.Packets + s.BA.Packets
		if total > ts.BusiestLinkBytes {
			l := e.Links[s.Link]
			ts.BusiestLink, ts.BusiestLinkBytes = l.A+" - "+l.B, total
		}
	}
	for _, j := range a.Jobs {
		if ts.PSIngressBytes == nil {
			ts.PSIngressBytes = map[string]uint64{}
		}
		ts.PSIngressBytes[j.PS.Host] = ingress(e.Links, t.last, j.PS.Host)
	}
	return ts
}

// ingress sums the bytes sent towards host over its links in samples (one
// per link, Link -1 for none).
func ingress(links []Link, samples []LinkSample, host string) uint64 {
	var sum uint64
	for _, s := range samples {
		if s.Link < 0 {
			continue
		}
		switch host {
		case links[s.Link].NodeA:
			sum += s.BA.Bytes
		case links[s.Link].NodeB:
			sum += s.AB.Bytes
		}
	}
	return sum
}
