package monitor

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/topo"
)

// Made-up samples: two links, link 0 = interfaces 0 (A) and 1 (B), link 1 =
// interfaces 2 (A) and 3 (B), one sample a second.

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func twoLinks(keep int) *account {
	links := []LinkInfo{{Index: 0, A: "s1:p1", B: "h1:eth0"}, {Index: 1, A: "s1:p2", B: "h2:eth0"}}
	return newAccount(links, []ends{{0, 1}, {2, 3}}, keep)
}

// sampleAt builds the sample at second sec: link 0's A sends 1000 B/s in
// 10 packets all along (the B end receives all but one packet of 100 B
// in total), link 1's B sends 10000 B in one packet during second burst only.
func sampleAt(sec, burst int) Sample {
	c := make([]Counters, 4)
	n := uint64(sec)
	c[0].TxBytes, c[0].TxPackets = 1000*n, 10*n
	c[1].RxBytes, c[1].RxPackets = 1000*n, 10*n
	if sec > 0 {
		c[1].RxBytes, c[1].RxPackets = 1000*n-100, 10*n-1
	}
	if sec >= burst {
		c[3].TxBytes, c[3].TxPackets = 10000, 1
		c[2].RxBytes, c[2].RxPackets = 10000, 1
	}
	return Sample{Time: t0.Add(time.Duration(sec) * time.Second), Counters: c}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func TestRatesAverageOverTwoTenAndFortySecondsAndPeakIsTheBusiestInterval(t *testing.T) {
	a := twoLinks(0)
	for sec := 0; sec <= 60; sec++ {
		a.add(sampleAt(sec, 60))
	}
	s := a.snapshot(time.Second)
	if s.Samples != 61 || !s.Since.Equal(t0) || !s.Time.Equal(t0.Add(60*time.Second)) {
		t.Fatalf("snapshot covers %d samples from %v to %v", s.Samples, s.Since, s.Time)
	}
	steady := s.Links[0].AB
	if steady.Sent != (Totals{60000, 600}) || steady.Received != (Totals{59900, 599}) {
		t.Errorf("link 0 A to B sent %+v received %+v, want {60000 600} and {59900 599}", steady.Sent, steady.Received)
	}
	for w, r := range steady.Rates {
		if !near(r, 1000) {
			t.Errorf("steady link: rate over %v = %v B/s, want 1000", Windows[w], r)
		}
	}
	if !near(steady.Peak, 1000) {
		t.Errorf("steady link peak %v, want 1000", steady.Peak)
	}
	burst := s.Links[1].BA
	want := [3]float64{10000.0 / 2, 10000.0 / 10, 10000.0 / 40}
	for w := range want {
		if !near(burst.Rates[w], want[w]) {
			t.Errorf("burst over the last second: rate over %v = %v B/s, want %v", Windows[w], burst.Rates[w], want[w])
		}
	}
	if !near(burst.Peak, 10000) || burst.Sent != (Totals{10000, 1}) {
		t.Errorf("burst: peak %v total %+v, want 10000 and {10000 1}", burst.Peak, burst.Sent)
	}
	if s.Links[0].BA != (Direction{}) || s.Links[1].AB.Sent != (Totals{}) {
		t.Errorf("silent directions counted traffic: %+v, %+v", s.Links[0].BA, s.Links[1].AB)
	}
}

func TestRatesOfAYoungRunAverageOverTheTimeSinceTheFirstSample(t *testing.T) {
	a := twoLinks(0)
	for sec := 0; sec <= 4; sec++ {
		a.add(sampleAt(sec, 4))
	}
	burst := a.snapshot(time.Second).Links[1].BA
	// 2 s window full; 10 s and 40 s windows only have 4 s of history.
	want := [3]float64{5000, 2500, 2500}
	for w := range want {
		if !near(burst.Rates[w], want[w]) {
			t.Errorf("rate over %v = %v, want %v", Windows[w], burst.Rates[w], want[w])
		}
	}
}

func TestTimerJitterDoesNotStretchTheWindow(t *testing.T) {
	a := twoLinks(0)
	for sec := 0; sec <= 3; sec++ {
		s := sampleAt(sec, 10)
		if sec == 3 {
			s.Time = s.Time.Add(-20 * time.Millisecond) // the last tick came early
		}
		a.add(s)
	}
	got := a.snapshot(time.Second).Links[0].AB.Rates[0]
	// Base is the sample at 1 s (1.98 s back), not the one at 0 s.
	if want := 2000 / 1.98; !near(got, want) {
		t.Errorf("2 s rate = %v, want %v", got, want)
	}
}

func TestKeepBoundsTheSamplesButTotalsCountFromTheFirst(t *testing.T) {
	a := twoLinks(5)
	for sec := 0; sec <= 20; sec++ {
		a.add(sampleAt(sec, 100))
	}
	if len(a.recent) != 5 {
		t.Fatalf("kept %d samples, want 5", len(a.recent))
	}
	s := a.snapshot(time.Second)
	if s.Links[0].AB.Sent.Bytes != 20000 || s.Samples != 21 {
		t.Errorf("total %d bytes over %d samples, want 20000 over 21", s.Links[0].AB.Sent.Bytes, s.Samples)
	}
	if !near(s.Links[0].AB.Rates[2], 1000) {
		t.Errorf("40 s rate from 4 s of kept samples = %v, want 1000", s.Links[0].AB.Rates[2])
	}
	ls := a.linkSamples()
	if len(ls) != 10 || ls[0].Link != 0 || ls[1].Link != 1 || ls[0].AB.Bytes != 16000 || ls[9].BA.Bytes != 0 {
		t.Errorf("link samples = %+v", ls)
	}
}

func TestSnapshotBeforeAnySampleHasLinksAndNoTraffic(t *testing.T) {
	s := twoLinks(0).snapshot(time.Second)
	if len(s.Links) != 2 || s.Links[1].A != "s1:p2" || s.Samples != 0 || s.Links[0].AB != (Direction{}) {
		t.Errorf("empty snapshot = %+v", s)
	}
}

func TestNewRefusesNegativeOptionsAndLinksWithoutInterfaces(t *testing.T) {
	st := &fabric.State{Run: "x", Nodes: []fabric.Node{{Name: "h1", Kind: topo.KindHost, Interfaces: []fabric.Interface{{Name: "eth0"}}}},
		Links: []fabric.Link{{A: topo.Endpoint{Node: "s1", Port: 1}, B: topo.Endpoint{Node: "h1"}, IfA: "gs1p1", IfB: "eth0"}}}
	if _, err := New(st, Options{Interval: -time.Second}); err == nil || !strings.Contains(err.Error(), "negative option") {
		t.Errorf("negative interval: %v", err)
	}
	_, err := New(st, Options{})
	if err == nil || !strings.Contains(err.Error(), `monitor run "x": links[0] (s1:p1-h1:eth0).if_a: node s1 has no interface gs1p1`) {
		t.Errorf("link to a missing interface: %v", err)
	}
}
