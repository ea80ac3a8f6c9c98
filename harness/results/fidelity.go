package results

import (
	"fmt"
	"io"
	"math"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/grid-ina/grid/harness/gradproto"
)

// MinFidelity and MaxFidelity bound the measured/predicted slowest-worker
// rate of a faithful run: the emulation is meant to measure what the model
// predicts. Below, the emulation fell short (grid run fails); above, it
// let through more than the model allows, a capacity meter's burst or the
// sampling's error (grid run warns, grid reproduce fails).
const (
	MinFidelity = 0.9
	MaxFidelity = 1.02
)

// Windows are iftop's averaging windows, which each worker's sending rate
// is also shown over.
var Windows = [3]time.Duration{2 * time.Second, 10 * time.Second, 40 * time.Second}

// minMeasured is the least stretch of steady sending a rate is measured
// over, and minSamples the fewest samples in it: below that the rate is
// the sampling's noise, and the run says it was not measured.
const (
	minMeasured = 500 * time.Millisecond
	minSamples  = 4
)

// MinFragments is the smallest gradient (fragments per worker) a sending
// rate is measured for: the workers' windows start small and grow by one
// per result, so a shorter gradient is all ramp and no steady rate.
const MinFragments = 256

// rampShare is the share of a worker's sending time, at its start and at
// its end, left out of its steady rate: windows growing from their
// initial size, and the last fragments' tail.
const rampShare = 0.1

// WorkerRate is one worker's sending rate on its egress link(s), as the
// paper measured it with iftop: bits per second of whole frames (the
// veth's count, which is what the links are shaped by).
type WorkerRate struct {
	Host string `json:"host"`
	// BitsPerSecond is its steady rate, over its sending time without the
	// first and last tenth; 0 when that was too short to measure. It is
	// the rate of its gradient stream as the network carried it through:
	// a gradient frame for every result it received (see carriedBytes),
	// which in a steady state is its egress rate, without the gradients
	// a switch turned away and its window's growth over a short run.
	BitsPerSecond float64 `json:"bits_per_second"`
	// MeasuredSeconds is the time the steady rate is measured over.
	MeasuredSeconds float64 `json:"measured_seconds"`
	// Averages are iftop's 2 s, 10 s and 40 s averages at the worker's last
	// sample (over its whole sending time when that is shorter).
	Averages [3]float64 `json:"averages_2s_10s_40s_bits_per_second"`
}

// LinkUse is one direction of a link over an algorithm's run: its average
// rate against its emulated rate, and the packets it carried against what
// the plan predicts.
type LinkUse struct {
	From          string  `json:"from"`
	To            string  `json:"to"`
	BitsPerSecond float64 `json:"bits_per_second"`
	// CapacityBits is the direction's emulated rate (0: unshaped), and
	// Utilisation BitsPerSecond over it.
	CapacityBits float64 `json:"capacity_bits_per_second,omitempty"`
	Utilisation  float64 `json:"utilisation,omitempty"`
	// PredictedBits is the plan's load on the direction, as emulated (its
	// load times the scale); PredictedPackets the packets the plan puts on
	// it for the run's fragments, Packets those the link carried.
	PredictedBits    float64 `json:"predicted_bits_per_second"`
	PredictedPackets float64 `json:"predicted_packets"`
	Packets          uint64  `json:"packets"`
}

// LinkTolerance is how far a link direction's packets may stray from the
// plan's before the prediction counts as missing them: resends, retries
// after control packets and their answers add a few percent on a loaded
// machine, a stream the model forgot adds a whole stream.
const LinkTolerance = 0.1

// Off reports whether the link carried packets the plan does not account
// for, or lacks packets it predicts, beyond LinkTolerance and a handful of
// stray frames. extra is the gradients the workers sent beyond one per
// fragment (resends, retries after control packets): each crosses the
// links towards the PS once more (a switch passes a resend on), and the PS
// answers a duplicate with one result back to its worker, so a link
// direction may carry up to extra packets beyond the plan's. A stream the
// plan forgets adds a packet per fragment; it shows while the resends are
// fewer.
func (u *LinkUse) Off(extra int) bool {
	const stray = 8
	p, n := u.PredictedPackets, float64(u.Packets)
	return n > p*(1+LinkTolerance)+float64(extra)+stray || n < p*(1-LinkTolerance)-stray
}

// ExtraSends is the gradients a's workers sent beyond one per fragment.
func ExtraSends(a *AlgorithmRun, fragments int) int {
	extra := 0
	for _, j := range a.Jobs {
		for _, w := range j.Workers {
			extra += max(0, w.Sent-fragments)
		}
	}
	return extra
}

// Fidelity compares an algorithm's measured slowest-worker sending rate with
// the rate its plan predicts, at the emulation's scale.
type Fidelity struct {
	// Scale is the factor every rate was emulated at; the *Gbps fields are
	// scaled back to the topology's units (rate / Scale).
	Scale float64 `json:"scale"`
	// PredictedBits is the plan's lambda as emulated (lambda * Scale),
	// PredictedGbps as the plan states it.
	PredictedBits float64 `json:"predicted_lambda_bits_per_second"`
	PredictedGbps float64 `json:"predicted_lambda_gbps"`
	// SlowestWorker is the worker with the lowest steady rate, and
	// MeasuredBits its rate (MeasuredGbps scaled back).
	SlowestWorker string  `json:"slowest_worker,omitempty"`
	MeasuredBits  float64 `json:"measured_bits_per_second"`
	MeasuredGbps  float64 `json:"measured_gbps"`
	// Ratio is MeasuredBits / PredictedBits; absent when a rate could not
	// be measured (Unmeasured says why).
	Ratio      *float64 `json:"fidelity,omitempty"`
	Unmeasured string   `json:"unmeasured,omitempty"`
	// Workers are every worker's rates; Links every link direction that
	// carried traffic, busiest (by utilisation) first.
	Workers []WorkerRate `json:"workers"`
	Links   []LinkUse    `json:"links,omitempty"`
	// LinksOff name the link directions whose packets stray from the
	// plan's prediction by more than LinkTolerance and what ExtraSends,
	// the gradients sent beyond one per fragment, explain.
	LinksOff   []string `json:"links_off_prediction,omitempty"`
	ExtraSends int      `json:"extra_sends"`
	// MeterBurstShare is the most a capacity meter's burst can add to a
	// rate it binds over the slowest worker's steady part: its burst over
	// its rate times that time, for the meter where that is most. A
	// fidelity above MaxFidelity by no more than it is the burst's.
	MeterBurstShare float64 `json:"meter_burst_share,omitempty"`
}

// Low reports whether the fidelity was measured and is below MinFidelity.
func (f *Fidelity) Low() bool { return f != nil && f.Ratio != nil && *f.Ratio < MinFidelity }

// High reports whether the fidelity was measured and is above MaxFidelity.
func (f *Fidelity) High() bool { return f != nil && f.Ratio != nil && *f.Ratio > MaxFidelity }

// Excess says what can make a run measure above its lambda: a capacity
// meter's burst when the excess is within what it can add (and the band),
// else the sampling.
func (f *Fidelity) Excess() string {
	if share := f.MeterBurstShare; share > 0 && f.Ratio != nil && *f.Ratio <= MaxFidelity+share {
		return fmt.Sprintf("a capacity meter's burst can add %.1f%% over this run's steady part (more fragments shrink it)", 100*share)
	}
	return "the sampling errs, more over a shorter run"
}

// Flag is the fidelity's verdict outside [MinFidelity, MaxFidelity]:
// "LOW" or "HIGH", or "" inside it (or unmeasured).
func (f *Fidelity) Flag() string {
	switch {
	case f.Low():
		return "LOW"
	case f.High():
		return "HIGH"
	}
	return ""
}

// scale is the emulation scale; an unset one is 1.
func (e *Experiment) scale() float64 {
	if e.Scale <= 0 {
		return 1
	}
	return e.Scale
}

// hostSeries is one host's cumulative counts over its links, per sample
// time, oldest first: what it sent (out) and what it received (in). The
// times are every sample's, shared by all hosts.
type hostSeries struct {
	times   []time.Time
	out, in []Count
}

// hostsSeries builds every host's series in one pass over the samples
// (a run of 500 hosts has millions of them), and lists the distinct
// sample times.
func hostsSeries(links []Link, samples []LinkSample) (map[string]*hostSeries, []time.Time) {
	// The monitor's samples come in time order; others are sorted.
	ordered := sort.SliceIsSorted(samples, func(i, j int) bool { return samples[i].Time.Before(samples[j].Time) })
	var order []int32
	if !ordered {
		order = make([]int32, len(samples))
		for i := range order {
			order[i] = int32(i)
		}
		sort.SliceStable(order, func(i, j int) bool { return samples[order[i]].Time.Before(samples[order[j]].Time) })
	}
	at := func(k int) *LinkSample {
		if ordered {
			return &samples[k]
		}
		return &samples[order[k]]
	}
	var times []time.Time
	for k := range samples {
		if t := at(k).Time; len(times) == 0 || !times[len(times)-1].Equal(t) {
			times = append(times, t)
		}
	}
	by := map[string]*hostSeries{}
	// seen marks the times a host was sampled at; a time it missed keeps
	// its previous counts.
	seen := map[string][]bool{}
	add := func(host string, i int, out, in Count) {
		h := by[host]
		if h == nil {
			h = &hostSeries{times: times, out: make([]Count, len(times)), in: make([]Count, len(times))}
			by[host], seen[host] = h, make([]bool, len(times))
		}
		seen[host][i] = true
		h.out[i].Bytes += out.Bytes
		h.out[i].Packets += out.Packets
		h.in[i].Bytes += in.Bytes
		h.in[i].Packets += in.Packets
	}
	i := -1
	for k := range samples {
		s := at(k)
		if i < 0 || !times[i].Equal(s.Time) {
			i++
		}
		l := links[s.Link]
		add(l.NodeA, i, s.AB, s.BA)
		add(l.NodeB, i, s.BA, s.AB)
	}
	for host, h := range by {
		for i := 1; i < len(times); i++ {
			if !seen[host][i] {
				h.out[i], h.in[i] = h.out[i-1], h.in[i-1]
			}
		}
	}
	return by, times
}

// sentBytes is the series' cumulative bytes sent.
func (h *hostSeries) sentBytes() []float64 {
	out := make([]float64, len(h.out))
	for i, c := range h.out {
		out[i] = float64(c.Bytes)
	}
	return out
}

// carriedBytes is the series' gradient stream as the network carried it
// through: by each sample, a gradient frame of frameBytes for every result
// the host received. Each result completes one of its fragments; the
// control packets that answer a gradient a switch turned away (its
// capacity meter, or a collision) carry the header alone, controlBytes,
// and are not counted. In a steady state this is the rate the host sends
// at; over a run of seconds its egress also holds the gradients turned
// away (a worker whose every excess fragment is answered and retried sends
// several times its share) and its window's growth (a worker that does
// not bind runs further ahead of its results as its window grows to its
// maximum).
func (h *hostSeries) carriedBytes(frameBytes, controlBytes int) []float64 {
	out := make([]float64, len(h.in))
	if frameBytes <= controlBytes {
		return h.sentBytes()
	}
	for i, c := range h.in {
		n := (float64(c.Bytes) - float64(controlBytes)*float64(c.Packets)) / float64(frameBytes-controlBytes)
		out[i] = min(max(n, 0), float64(c.Packets)) * float64(frameBytes)
		if i > 0 {
			out[i] = max(out[i], out[i-1])
		}
	}
	return out
}

// within is the first and last of the samples inside [from, to]; -1 for
// both when none is.
func within(times []time.Time, from, to time.Time) (first, last int) {
	first, last = -1, -1
	for i, t := range times {
		if t.Before(from) || t.After(to) {
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
	}
	return first, last
}

// rateBetween is the bits per second between the first and last samples
// inside [from, to], with the time it spans and the samples used.
func rateBetween(times []time.Time, bytes []float64, from, to time.Time) (bits float64, span time.Duration, n int) {
	first, last := within(times, from, to)
	if first < 0 || last <= first {
		return 0, 0, max(0, last-first+1)
	}
	span = times[last].Sub(times[first])
	return (bytes[last] - bytes[first]) * 8 / span.Seconds(), span, last - first + 1
}

// steadyRate is the bits per second of the samples inside [from, to],
// with the time they span and how many there are: the median of the rates
// between each sample of the first half and the one half the samples
// later. Each of those spans half the stretch, and a sample read late
// moves one of them, not the median: the monitor stamps a sample when it
// starts reading, and on a starved CPU a read can finish a second later
// with counters of then (Geryon's rate on the testbed, with other work on
// 1.6 of the 2 cores, measured 1.118 of its lambda between the first and
// last samples, 1.017 as the median).
func steadyRate(times []time.Time, bytes []float64, from, to time.Time) (bits float64, span time.Duration, n int) {
	first, last := within(times, from, to)
	if first < 0 || last <= first {
		return 0, 0, max(0, last-first+1)
	}
	n, span = last-first+1, times[last].Sub(times[first])
	half := n / 2
	var rates []float64
	for i := first; i+half <= last; i++ {
		if dt := times[i+half].Sub(times[i]).Seconds(); dt > 0 {
			rates = append(rates, (bytes[i+half]-bytes[i])*8/dt)
		}
	}
	if len(rates) == 0 {
		return 0, span, n
	}
	sort.Float64s(rates)
	m := len(rates)
	if m%2 == 1 {
		return rates[m/2], span, n
	}
	return (rates[m/2-1] + rates[m/2]) / 2, span, n
}

// workerRate measures w's sending rate from its series: iftop's averages
// of everything it sent, and the steady rate of its gradient stream as the
// network carried it through (frames of frameBytes, controls of
// controlBytes).
func workerRate(h *hostSeries, w *Endpoint, frameBytes, controlBytes int) (WorkerRate, string) {
	r := WorkerRate{Host: w.Host}
	end := w.Done
	if end.IsZero() {
		end = w.End
	}
	if h == nil {
		h = &hostSeries{}
	}
	times, bytes := h.times, h.sentBytes()
	active := end.Sub(w.Start)
	for i, win := range Windows {
		from := end.Add(-win)
		if from.Before(w.Start) {
			from = w.Start
		}
		r.Averages[i], _, _ = rateBetween(times, bytes, from, end)
	}
	ramp := time.Duration(float64(active) * rampShare)
	bits, span, n := steadyRate(times, h.carriedBytes(frameBytes, controlBytes), w.Start.Add(ramp), end.Add(-ramp))
	if span < minMeasured || n < minSamples {
		return r, fmt.Sprintf("%s sent for %.2f s, %d samples in its steady part: a rate needs %v and %d samples (send more fragments, or emulate slower with a smaller scale)",
			w.Host, active.Seconds(), n, minMeasured, minSamples)
	}
	r.BitsPerSecond, r.MeasuredSeconds = bits, span.Seconds()
	return r, ""
}

// fidelity measures algorithm a's workers and links against its plan's
// prediction; nil when it has no prediction or ran nothing.
func fidelity(e *Experiment, a *AlgorithmRun, t *linkTraffic) *Fidelity {
	if a.Refused != "" || len(a.Jobs) == 0 || a.PredictedLambdaGbps <= 0 {
		return nil
	}
	scale := e.scale()
	f := &Fidelity{Scale: scale, PredictedGbps: a.PredictedLambdaGbps, PredictedBits: a.PredictedLambdaGbps * 1e9 * scale}
	if e.Fragments < MinFragments {
		f.Unmeasured = fmt.Sprintf("%d fragments per worker: a steady sending rate needs at least %d (the windows' ramp)", e.Fragments, MinFragments)
	}
	slowest := math.Inf(1)
	control := gradproto.FrameOverhead + gradproto.HeaderLen
	frame := control + 4*e.Values
	for _, j := range a.Jobs {
		for _, w := range j.Workers {
			r, why := workerRate(t.hosts[w.Host], w, frame, control)
			f.Workers = append(f.Workers, r)
			if why != "" {
				if f.Unmeasured == "" {
					f.Unmeasured = why
				}
				continue
			}
			if r.BitsPerSecond < slowest {
				slowest, f.SlowestWorker = r.BitsPerSecond, w.Host
			}
		}
	}
	if f.Unmeasured == "" && f.SlowestWorker != "" {
		f.MeasuredBits, f.MeasuredGbps = slowest, slowest/scale/1e9
		ratio := slowest / f.PredictedBits
		f.Ratio = &ratio
		for _, w := range f.Workers {
			if w.Host != f.SlowestWorker || w.MeasuredSeconds <= 0 {
				continue
			}
			for _, m := range a.Meters {
				if m.PacketsPerSecond > 0 {
					f.MeterBurstShare = max(f.MeterBurstShare, float64(m.Burst)/(m.PacketsPerSecond*w.MeasuredSeconds))
				}
			}
		}
	}
	f.Links = linkUses(e.Links, a, scale, e.Fragments)
	f.ExtraSends = ExtraSends(a, e.Fragments)
	for _, l := range f.Links {
		if len(a.PredictedLinks) > 0 && l.Off(f.ExtraSends) {
			f.LinksOff = append(f.LinksOff, fmt.Sprintf("%s->%s carried %d packets, the plan predicts %.0f", l.From, l.To, l.Packets, l.PredictedPackets))
		}
	}
	return f
}

// linkUses is every link direction's average rate and packets over the
// algorithm's run, beside the plan's predictions for fragments fragments.
func linkUses(links []Link, a *AlgorithmRun, scale float64, fragments int) []LinkUse {
	if !a.Ended.After(a.Began) || len(a.Traffic) == 0 {
		return nil
	}
	predicted := map[[2]string]PredictedLink{}
	for _, p := range a.PredictedLinks {
		predicted[[2]string{p.From, p.To}] = p
	}
	first := map[int]LinkSample{}
	last := map[int]LinkSample{}
	for _, s := range a.Traffic {
		if _, ok := first[s.Link]; !ok || s.Time.Before(first[s.Link].Time) {
			first[s.Link] = s
		}
		if s.Time.After(last[s.Link].Time) {
			last[s.Link] = s
		}
	}
	var out []LinkUse
	for i, l := range links {
		a0, a1 := first[i], last[i]
		dt := a1.Time.Sub(a0.Time).Seconds()
		if dt <= 0 {
			continue
		}
		for _, d := range []struct {
			from, to       string
			bytes, packets uint64
		}{{l.A, l.B, a1.AB.Bytes - a0.AB.Bytes, a1.AB.Packets - a0.AB.Packets}, {l.B, l.A, a1.BA.Bytes - a0.BA.Bytes, a1.BA.Packets - a0.BA.Packets}} {
			p, hasPrediction := predicted[[2]string{d.from, d.to}]
			if d.bytes == 0 && !hasPrediction {
				continue
			}
			u := LinkUse{From: d.from, To: d.to, BitsPerSecond: float64(d.bytes) * 8 / dt, CapacityBits: l.RateBits,
				PredictedBits: p.Bits * scale, PredictedPackets: p.PacketsPerFragment * float64(fragments), Packets: d.packets}
			if l.RateBits > 0 {
				u.Utilisation = u.BitsPerSecond / l.RateBits
			}
			out = append(out, u)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Utilisation != out[j].Utilisation {
			return out[i].Utilisation > out[j].Utilisation
		}
		return out[i].BitsPerSecond > out[j].BitsPerSecond
	})
	return out
}

// WriteFidelity prints the fidelity table of a summary: per algorithm the
// predicted lambda and the measured slowest-worker rate, both as emulated
// and scaled back to the topology's units, their ratio, and the busiest
// link's utilisation; a ratio below MinFidelity is flagged LOW, one above
// MaxFidelity HIGH.
func WriteFidelity(out io.Writer, s *Summary) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ALGORITHM\tSCALE\tPREDICTED\tMEASURED (slowest worker)\tFIDELITY\tBUSIEST LINK\tLINKS AS PREDICTED")
	for _, a := range s.Algorithms {
		f := a.Fidelity
		if f == nil {
			continue
		}
		ratio := "not measured: " + f.Unmeasured
		if f.Ratio != nil {
			ratio = fmt.Sprintf("%.3f", *f.Ratio)
			switch {
			case f.Low():
				ratio += fmt.Sprintf("  LOW (below %.2f)", MinFidelity)
			case f.High():
				ratio += fmt.Sprintf("  HIGH (above %.2f)", MaxFidelity)
			}
		}
		busiest := "-"
		if len(f.Links) > 0 && f.Links[0].Utilisation > 0 {
			l := f.Links[0]
			busiest = fmt.Sprintf("%s->%s %.0f%%", l.From, l.To, 100*l.Utilisation)
		}
		links := "-"
		if len(f.Links) > 0 {
			links = fmt.Sprintf("%d of %d", len(f.Links)-len(f.LinksOff), len(f.Links))
			if len(f.LinksOff) > 0 {
				links += ", off: " + f.LinksOff[0]
			}
		}
		fmt.Fprintf(w, "%s\t%g\t%s (%.4g Gbps)\t%s (%.4g Gbps) %s\t%s\t%s\t%s\n", a.Algorithm, f.Scale,
			BitRate(f.PredictedBits), f.PredictedGbps, BitRate(f.MeasuredBits), f.MeasuredGbps, f.SlowestWorker, ratio, busiest, links)
	}
	return w.Flush()
}

// BitRate writes bits per second with a readable unit.
func BitRate(bits float64) string {
	switch {
	case bits >= 1e12:
		return fmt.Sprintf("%.3g Tbit/s", bits/1e12)
	case bits >= 1e9:
		return fmt.Sprintf("%.3g Gbit/s", bits/1e9)
	case bits >= 1e6:
		return fmt.Sprintf("%.3g Mbit/s", bits/1e6)
	}
	return fmt.Sprintf("%.3g kbit/s", bits/1e3)
}

// WriteRates prints the emulation's rates grouped: each distinct rate of
// each kind, as the topology states it and as emulated, with how many
// links or nodes have it.
func WriteRates(out io.Writer, scale float64, rates []Rate) error {
	type key struct {
		kind string
		bits float64
	}
	count := map[key]int{}
	var order []key
	emulated := map[key]float64{}
	for _, r := range rates {
		k := key{r.Kind, r.TopologyBits}
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
		emulated[k] = r.EmulatedBits
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "RATE (scale %g)\tTOPOLOGY\tEMULATED\tHOW MANY\n", scale)
	for _, k := range order {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\n", k.kind, BitRate(k.bits), BitRate(emulated[k]), count[k])
	}
	return w.Flush()
}
