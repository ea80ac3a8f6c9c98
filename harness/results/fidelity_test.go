package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rateExperiment: workers h1 and h2 send to the PS h9 through s1 for 4 s,
// h1 at 3 Mbit/s and h2 at h2Bits, sampled every 100 ms, each getting a
// result for every gradient; the plan predicts lambda 3 Gbps, emulated at
// scale 0.001.
func rateExperiment(h2Bits float64, seconds float64) *Experiment {
	return meteredExperiment(h2Bits, seconds, 0, 0)
}

// frameBytes and controlBytes are a gradient's and a control packet's
// frames at experiment()'s 32 values.
const (
	controlBytes = 62
	frameBytes   = controlBytes + 4*32
)

// meteredExperiment is rateExperiment where h1 also sends turnedAway
// gradient frames per second that a switch answers with control packets,
// and h2's window runs growth fragments further ahead of its results by
// the end.
func meteredExperiment(h2Bits, seconds, turnedAway, growth float64) *Experiment {
	e := experiment()
	e.Scale, e.Fragments = 0.001, 1024
	e.Links[0].RateBits, e.Links[1].RateBits, e.Links[2].RateBits = 3e6, 3e6, 9e6
	a := &e.Algorithms[0]
	a.PredictedLambdaGbps = 3
	start := at(1000)
	end := start.Add(time.Duration(seconds * float64(time.Second)))
	for _, w := range a.Jobs[0].Workers {
		w.Start, w.Done, w.End = start, end, end
	}
	a.Began, a.Ended = start, end
	a.Traffic = nil
	frames := func(bits, dt float64) uint64 { return uint64(bits * dt / 8 / frameBytes) }
	for t := start; !t.After(end); t = t.Add(100 * time.Millisecond) {
		dt := t.Sub(start).Seconds()
		h1, h2 := frames(3e6, dt), frames(h2Bits, dt)
		away := uint64(turnedAway * dt)
		ahead := uint64(growth * dt / seconds)
		// h1 and h2 are the B ends of links 0 and 1: their egress is B to
		// A, their results (and control packets) A to B.
		a.Traffic = append(a.Traffic,
			LinkSample{Time: t, Link: 0, BA: Count{Bytes: (h1 + away) * frameBytes, Packets: h1 + away},
				AB: Count{Bytes: h1*frameBytes + away*controlBytes, Packets: h1 + away}},
			LinkSample{Time: t, Link: 1, BA: Count{Bytes: (h2 + ahead) * frameBytes, Packets: h2 + ahead},
				AB: Count{Bytes: h2 * frameBytes, Packets: h2}},
			LinkSample{Time: t, Link: 2, AB: Count{Bytes: (h1 + h2) * frameBytes, Packets: h1 + h2}})
	}
	return e
}

// TestAWorkersSteadyRateLeavesOutGradientsTurnedAwayAndItsWindowsGrowth:
// h1's switch turns away as many gradients as it passes (a capacity meter
// answering each with a control packet, which h1 retries), and h2's window
// grows 56 fragments ahead of its results over a 4 s run. Both carry 3
// Mbit/s through the network, their lambda; their egress says 6 Mbit/s and
// 3.2 Mbit/s, which is what iftop's averages show.
func TestAWorkersSteadyRateLeavesOutGradientsTurnedAwayAndItsWindowsGrowth(t *testing.T) {
	share := 3e6 / 8 / frameBytes
	f := meteredExperiment(3e6, 4, share, 56).Summary().Algorithms[0].Fidelity
	if f == nil || f.Ratio == nil {
		t.Fatalf("no fidelity measured: %+v", f)
	}
	for _, w := range f.Workers {
		if w.BitsPerSecond < 0.99*3e6 || w.BitsPerSecond > 1.01*3e6 {
			t.Errorf("%s's steady rate %.0f bit/s, want its 3e6 carried through", w.Host, w.BitsPerSecond)
		}
	}
	if r := *f.Ratio; r < 0.99 || r > 1.01 {
		t.Errorf("fidelity %.3f, want 1", r)
	}
	if avg := f.Workers[0].Averages[1]; avg < 5.9e6 || avg > 6.1e6 {
		t.Errorf("h1's iftop average %.0f bit/s, want its whole egress, 6e6", avg)
	}
	if avg, least := f.Workers[1].Averages[1], 3e6+0.9*56*8*frameBytes/4; avg < least {
		t.Errorf("h2's iftop average %.0f bit/s, want its egress with the window's growth, above %.0f", avg, least)
	}
}

func TestFidelityIsTheSlowestWorkersEgressRateOverThePrediction(t *testing.T) {
	s := rateExperiment(2.85e6, 4).Summary()
	f := s.Algorithms[0].Fidelity
	if f == nil || f.Ratio == nil {
		t.Fatalf("no fidelity measured: %+v", f)
	}
	if f.SlowestWorker != "h2" || *f.Ratio < 0.949 || *f.Ratio > 0.951 {
		t.Errorf("fidelity %v of %s, want 0.95 of h2", *f.Ratio, f.SlowestWorker)
	}
	if f.PredictedBits != 3e6 || f.MeasuredGbps < 2.84 || f.MeasuredGbps > 2.86 {
		t.Errorf("predicted %g bit/s emulated, measured %g Gbps scaled back; want 3e6 and 2.85", f.PredictedBits, f.MeasuredGbps)
	}
	// iftop's 2 s average at the end of a steady run is the same rate;
	// its 10 s and 40 s averages cover the whole 4 s.
	for i, avg := range f.Workers[0].Averages {
		if avg < 2.99e6 || avg > 3.01e6 {
			t.Errorf("h1's %v average %g bit/s, want 3e6", Windows[i], avg)
		}
	}
	if f.Low() || len(s.LowFidelity()) != 0 {
		t.Errorf("0.95 counted as low: %v", s.LowFidelity())
	}
	if l := f.Links[0]; (l.From != "h1:eth0" && l.To != "h1:eth0") || l.Utilisation < 0.99 {
		t.Errorf("busiest link %+v, want h1's egress or its results, full", l)
	}
	if l := f.Links[len(f.Links)-1]; l.From != "s1:p3" || l.Utilisation < 0.64 || l.Utilisation > 0.66 {
		t.Errorf("least used link %+v, want s1:p3 to the PS at 5.85 of 9 Mbit/s", l)
	}
}

func TestFidelityBelowTheThresholdIsReportedLow(t *testing.T) {
	e := rateExperiment(2.4e6, 4)
	s := e.Summary()
	if low := s.LowFidelity(); len(low) != 1 || !strings.Contains(low[0], "grid-paths") || !strings.Contains(low[0], "0.800") {
		t.Fatalf("low fidelity %q, want grid-paths at 0.800", low)
	}
	dir, err := Write(t.TempDir(), e)
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(filepath.Join(dir, "fidelity.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(table), "LOW") {
		t.Errorf("fidelity.txt does not flag the low ratio:\n%s", table)
	}
	if _, err := os.Stat(filepath.Join(dir, "sending-rate.png")); err != nil {
		t.Errorf("no sending-rate plot: %v", err)
	}
}

func TestARunTooShortToMeasureHasNoFidelityAndSaysWhy(t *testing.T) {
	f := rateExperiment(1e6, 0.3).Summary().Algorithms[0].Fidelity
	if f.Ratio != nil || !strings.Contains(f.Unmeasured, "needs") {
		t.Errorf("a 0.3 s run measured: ratio %v, unmeasured %q", f.Ratio, f.Unmeasured)
	}
	if f.Low() {
		t.Error("an unmeasured fidelity counts as low")
	}
}

func TestAGradientTooSmallForASteadyRateHasNoFidelity(t *testing.T) {
	e := rateExperiment(1e6, 4)
	e.Fragments = 64
	f := e.Summary().Algorithms[0].Fidelity
	if f.Ratio != nil || !strings.Contains(f.Unmeasured, "64 fragments per worker") {
		t.Errorf("a 64-fragment run measured: ratio %v, unmeasured %q", f.Ratio, f.Unmeasured)
	}
}

// TestAStreamThePlanDoesNotCountPutsItsLinkOffThePrediction: the plan
// predicts one result per fragment on the PS's link and gradients on the
// workers' links, but the link to h2 also carried the results (a multicast
// copy the model left uncounted): that link, and only it, is off.
func TestAStreamThePlanDoesNotCountPutsItsLinkOffThePrediction(t *testing.T) {
	e := rateExperiment(3e6, 4)
	a := &e.Algorithms[0]
	frag := float64(e.Fragments)
	for i := range a.Traffic {
		s := &a.Traffic[i]
		done := s.Time.Sub(a.Began).Seconds() / 4 // the share of the run behind the sample
		switch s.Link {
		case 0:
			s.BA.Packets = uint64(frag * done)
			s.AB = Count{} // this plan sends h1 no results
		case 1:
			s.BA.Packets = uint64(frag * done)
			s.AB = Count{Bytes: s.BA.Bytes, Packets: s.BA.Packets} // results to h2, uncounted
		case 2:
			s.AB.Packets = uint64(2 * frag * done)
		}
	}
	a.PredictedLinks = []PredictedLink{
		{From: "h1:eth0", To: "s1:p1", Bits: 3e9, PacketsPerFragment: 1},
		{From: "h2:eth0", To: "s1:p2", Bits: 3e9, PacketsPerFragment: 1},
		{From: "s1:p3", To: "h9:eth0", Bits: 6e9, PacketsPerFragment: 2},
	}
	f := e.Summary().Algorithms[0].Fidelity
	if len(f.LinksOff) != 1 || !strings.HasPrefix(f.LinksOff[0], "s1:p2->h2:eth0 carried") {
		t.Fatalf("links off the prediction %q, want s1:p2->h2:eth0 alone", f.LinksOff)
	}
	var b strings.Builder
	WriteFidelity(&b, e.Summary())
	if !strings.Contains(b.String(), "3 of 4, off: s1:p2->h2:eth0") {
		t.Errorf("the table does not show the link off:\n%s", b.String())
	}
}

func TestFidelityAboveTheBandIsReportedHigh(t *testing.T) {
	e := rateExperiment(3e6, 4)
	e.Algorithms[0].PredictedLambdaGbps = 2.8 // 3 Mbit/s measured is 1.071 of it
	s := e.Summary()
	if high := s.HighFidelity(); len(high) != 1 || !strings.Contains(high[0], "1.071") || !strings.Contains(high[0], "at most 1.02") {
		t.Fatalf("high fidelity %q, want grid-paths at 1.071", high)
	}
	if low := s.LowFidelity(); len(low) != 0 {
		t.Errorf("1.071 counted as low: %q", low)
	}
	if f := s.Algorithms[0].Fidelity; f.Flag() != "HIGH" {
		t.Errorf("flag %q, want HIGH", f.Flag())
	}
	var b strings.Builder
	if err := WriteFidelity(&b, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "1.071  HIGH (above 1.02)") {
		t.Errorf("the table does not flag 1.071 HIGH:\n%s", b.String())
	}
	if high := s.HighFidelity(); !strings.Contains(high[0], "the sampling errs") {
		t.Errorf("without capacity meters the excess is put down to %q, want the sampling", high[0])
	}
	// A meter passing 1000 fragments a second with a burst of 400 can add
	// 400 over h1's 3.2 s steady part: 12.5%, which 7.1% is within.
	e.Algorithms[0].Meters = []Meter{{Switch: "s1", PacketsPerSecond: 1000, Burst: 400}}
	if high := e.Summary().HighFidelity(); len(high) != 1 || !strings.Contains(high[0], "a capacity meter's burst can add 12.5%") {
		t.Errorf("high fidelity %q, want it put down to the meter's burst of 12.5%%", high)
	}
	// Inside the band, neither.
	e.Algorithms[0].PredictedLambdaGbps = 3
	if f := e.Summary().Algorithms[0].Fidelity; f.Flag() != "" {
		t.Errorf("1.0 flagged %q", f.Flag())
	}
}

// TestASampleReadLateDoesNotMoveTheSteadyRate: on a starved CPU the
// monitor stamps a sample when it starts reading and may finish reading a
// link half a second later. h1's sample at the end of its steady part
// (3.6 s of a 4 s run) holds the counts of 4.05 s: the rate between the
// first and last samples would be 1.14 of the truth, the steady rate stays
// within 2% of it.
func TestASampleReadLateDoesNotMoveTheSteadyRate(t *testing.T) {
	e := rateExperiment(3e6, 4)
	a := &e.Algorithms[0]
	late := a.Began.Add(3600 * time.Millisecond)
	run := 4.05 // seconds of sending the late sample holds
	frames := uint64(3e6 * run / 8 / frameBytes)
	for i := range a.Traffic {
		if s := &a.Traffic[i]; s.Link == 0 && s.Time.Equal(late) {
			s.BA = Count{Bytes: frames * frameBytes, Packets: frames}
			s.AB = s.BA
		}
	}
	f := e.Summary().Algorithms[0].Fidelity
	if f == nil || f.Ratio == nil {
		t.Fatalf("no fidelity measured: %+v", f)
	}
	if r := f.Workers[0].BitsPerSecond; r < 0.98*3e6 || r > 1.02*3e6 {
		t.Errorf("h1's steady rate %.0f bit/s with one sample read late, want 3e6 within 2%%", r)
	}
	if f.High() {
		t.Errorf("fidelity %.3f flagged high by one late sample", *f.Ratio)
	}
}
