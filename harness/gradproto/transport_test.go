package gradproto

import (
	"testing"
	"time"
)

const ms = time.Millisecond

func TestRTOIsInitialUntilTheFirstSampleThenSRTTPlusFourRTTVAR(t *testing.T) {
	r := NewRTO(100*ms, ms, 2*time.Second)
	if got := r.Timeout(); got != 100*ms {
		t.Fatalf("before any sample: %v, want the initial 100ms", got)
	}
	// RFC 6298 2.2: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR.
	r.Sample(10 * ms)
	if r.SRTT() != 10*ms || r.Timeout() != 30*ms {
		t.Fatalf("after 10ms: SRTT %v RTO %v, want 10ms and 30ms", r.SRTT(), r.Timeout())
	}
	// 2.3: RTTVAR = 3/4·5ms + 1/4·|10-2|ms = 5.75ms, SRTT = 7/8·10 + 1/8·2 = 9ms.
	r.Sample(2 * ms)
	if r.SRTT() != 9*ms || r.Timeout() != 9*ms+4*5750*time.Microsecond {
		t.Fatalf("after 2ms: SRTT %v RTO %v, want 9ms and 32ms", r.SRTT(), r.Timeout())
	}
	// Steady samples shrink RTTVAR until the floor holds the RTO.
	for range 200 {
		r.Sample(100 * time.Microsecond)
	}
	if r.Timeout() != ms {
		t.Fatalf("after many 100µs samples: RTO %v, want the 1ms floor", r.Timeout())
	}
}

func TestRTOBacksOffExponentiallyToTheCapAndASampleEndsIt(t *testing.T) {
	r := NewRTO(10*ms, ms, 100*ms)
	want := []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 100 * ms, 100 * ms}
	for i, w := range want {
		if got := r.Timeout(); got != w {
			t.Fatalf("after %d timeouts: %v, want %v", i, got, w)
		}
		r.Backoff()
	}
	if r.BackedOff() > 5 {
		t.Errorf("back-off counted %d doublings past the cap", r.BackedOff())
	}
	r.Sample(4 * ms)
	if r.Timeout() != 12*ms || r.BackedOff() != 0 {
		t.Fatalf("a sample after back-off: RTO %v (doubled %d), want 12ms from the estimate", r.Timeout(), r.BackedOff())
	}
}

func TestRTOAboveTheCapFollowsTheRoundTripsAndDoesNotBackOff(t *testing.T) {
	r := NewRTO(100*ms, 10*ms, time.Second)
	// Round trips of 3 s (a queue on a link scaled down to kbit/s): a
	// timeout capped at 1 s would resend every fragment spuriously.
	r.Sample(3 * time.Second)
	if got := r.Timeout(); got != 9*time.Second {
		t.Fatalf("after a 3s round trip: %v, want SRTT + 4 RTTVAR = 9s", got)
	}
	r.Backoff()
	if got := r.Timeout(); got != 9*time.Second || r.BackedOff() != 0 {
		t.Fatalf("backed off above the cap: %v (doubled %d)", got, r.BackedOff())
	}
}

func TestRTOKeepsInitialWithinItsBounds(t *testing.T) {
	r := NewRTO(50*ms, 80*ms, 20*ms)
	if r.Min != 50*ms || r.Max != 50*ms || r.Timeout() != 50*ms {
		t.Fatalf("bounds %v..%v timeout %v, want all 50ms", r.Min, r.Max, r.Timeout())
	}
}

func TestCongestionWindowSlowStartsThenGrowsByOnePerWindow(t *testing.T) {
	w := NewCongestionWindow(2, 64)
	for range 6 {
		w.Grow()
	}
	if w.Size != 8 {
		t.Fatalf("slow start: %v after 6 results from 2, want 8", w.Size)
	}
	if !w.Congestion(0, 10) || w.Size != 4 || w.Threshold != 4 {
		t.Fatalf("after a signal: size %v threshold %v, want 4 and 4", w.Size, w.Threshold)
	}
	// Above the threshold a window's worth of results adds one.
	for range 4 {
		w.Grow()
	}
	if w.Size < 4.9 || w.Size > 5.01 {
		t.Fatalf("congestion avoidance: %v after 4 results at 4, want about 5", w.Size)
	}
	for range 10000 {
		w.Grow()
	}
	if w.Size != 64 {
		t.Fatalf("grew to %v, want the cap 64", w.Size)
	}
}

func TestCongestionWindowHalvesOncePerWindowOfData(t *testing.T) {
	w := NewCongestionWindow(32, 64)
	// Transmissions 0..31 are in flight; several of them collide or time
	// out: one episode, one halving.
	if !w.Congestion(3, 32) || w.Size != 16 {
		t.Fatalf("first signal: size %v, want 16", w.Size)
	}
	for _, seq := range []uint64{0, 5, 31} {
		if w.Congestion(seq, 40) {
			t.Fatalf("signal about transmission %d, sent before the decrease, halved again to %v", seq, w.Size)
		}
	}
	// A transmission sent after the decrease is a new episode.
	if !w.Congestion(32, 50) || w.Size != 8 {
		t.Fatalf("new episode: size %v, want 8", w.Size)
	}
	for seq := uint64(50); seq < 60; seq++ {
		w.Congestion(seq, seq+1)
	}
	if w.Size != 1 || w.Decreases != 12 {
		t.Fatalf("after repeated episodes: size %v decreases %d, want the floor 1 and 12", w.Size, w.Decreases)
	}
}

func TestCongestionWindowUndoesASpuriousDecreaseOnce(t *testing.T) {
	w := NewCongestionWindow(8, 64)
	if w.Undo() {
		t.Fatal("undid a decrease that never happened")
	}
	w.Congestion(0, 8)
	w.Grow() // results meanwhile do not stop the undo
	if !w.Undo() || w.Size != 8 || w.Threshold != 64 || w.Decreases != 0 {
		t.Fatalf("after undo: size %v threshold %v decreases %d, want 8, 64, 0", w.Size, w.Threshold, w.Decreases)
	}
	if w.Undo() {
		t.Fatal("undid the same decrease twice")
	}
}
