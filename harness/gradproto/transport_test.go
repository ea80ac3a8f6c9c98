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

func TestRTOIsCappedAtMaxEvenWhenRoundTripsAreLonger(t *testing.T) {
	r := NewRTO(100*ms, 10*ms, 2*time.Second)
	// Round trips of 3 s: fragments waited for other workers' resends,
	// whose timeouts would grow with this one's.
	r.Sample(3 * time.Second)
	if got := r.Timeout(); got != 2*time.Second {
		t.Fatalf("after a 3s round trip: %v, want the cap 2s, not SRTT + 4 RTTVAR = 9s", got)
	}
	r.Backoff()
	if got := r.Timeout(); got != 2*time.Second || r.BackedOff() != 0 {
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

func TestRTOIsAtLeastTwiceTheSmoothedRoundTrip(t *testing.T) {
	r := NewRTO(time.Second, 10*ms, time.Second)
	for range 50 {
		r.Sample(100 * ms) // steady round trips: RTTVAR decays towards 0
	}
	if got := r.Timeout(); got < 200*ms || got > 210*ms {
		t.Fatalf("steady 100ms round trips: timeout %v, want about 200ms (twice SRTT), not SRTT + 4·RTTVAR ≈ 100ms", got)
	}
}

func TestQueueEstimateCountsTheWindowsFragmentsWaitingOncePerRoundTrip(t *testing.T) {
	q := &QueueEstimate{Floor: 5 * ms}
	// Transmissions 0..9 in flight; the first result sets the base and
	// ends the first round.
	if this, least, round := q.Sample(50*ms, 0, 10, 10); this != 0 || least != 0 || !round {
		t.Fatalf("first sample: %v, %v, round %v; want no queue, a round", this, least, round)
	}
	// Results of transmissions sent before the estimate: no new round,
	// but each says what it saw.
	this, _, round := q.Sample(100*ms, 5, 10, 10)
	if round || this != 5 {
		t.Fatalf("100ms against a 50ms base with 10 in flight: %v queued, round %v; want 5, no round", this, round)
	}
	q.Sample(75*ms, 9, 10, 10)
	// The first result of a transmission sent after the estimate ends the
	// round with the round's shortest: 75ms, so a third of 12 wait.
	if _, least, round := q.Sample(150*ms, 10, 22, 12); !round || least != 4 {
		t.Fatalf("round's estimate %v (round %v), want 12 × 25/75 = 4", least, round)
	}
	// Waiting within the floor is no queue.
	q.Sample(53*ms, 22, 30, 8)
	if _, least, round := q.Sample(54*ms, 30, 40, 8); !round || least != 0 {
		t.Fatalf("3-4ms above the base with a 5ms floor: %v queued, want 0", least)
	}
	if q.Base() != 50*ms {
		t.Fatalf("base %v, want the shortest round trip 50ms", q.Base())
	}
}

func TestCongestionWindowLeavesSlowStartOnceAFragmentQueues(t *testing.T) {
	w := NewCongestionWindow(8, 64)
	w.Queued(0.5)
	w.Grow()
	if w.Size != 9 || !w.SlowStart() {
		t.Fatalf("half a fragment queued: size %v slow start %v, want 9 and still slow start", w.Size, w.SlowStart())
	}
	// 3 of 9 queued: the path holds 6 without queueing; one more.
	w.Queued(3)
	if w.Size != 7 || w.SlowStart() {
		t.Fatalf("3 of 9 queued: size %v slow start %v, want 7 and slow start over", w.Size, w.SlowStart())
	}
}

func TestCongestionWindowHoldsBetweenAlphaAndBetaAndShrinksAbove(t *testing.T) {
	w := NewCongestionWindow(8, 64)
	w.Threshold = 8 // congestion avoidance
	w.Queued(1)     // below alpha: grows by one per window of results
	for range 8 {
		w.Grow()
	}
	if w.Size < 8.9 || w.Size > 9.01 {
		t.Fatalf("1 queued (alpha 2): %v after a window of results, want about 9", w.Size)
	}
	w.Queued(3) // between alpha and beta: holds
	before := w.Size
	for range 20 {
		w.Grow()
	}
	if w.Size != before {
		t.Fatalf("3 queued (alpha 2, beta 4): grew from %v to %v, want it held", before, w.Size)
	}
	w.Queued(6) // above beta: one less per round trip
	if w.Size != before-1 {
		t.Fatalf("6 queued (beta 4): %v, want %v", w.Size, before-1)
	}
}

func TestCongestionWindowGoesBelowOneFragmentOnlyForQueues(t *testing.T) {
	w := NewCongestionWindow(1, 64)
	w.Threshold, w.Beta, w.Alpha = 1, 0.5, 0.25
	w.Queued(1) // one fragment queued, beta half of one
	if w.Size != 0.75 || w.Room() != 1 {
		t.Fatalf("1 queued, beta 0.5: size %v room %d, want 0.75 and one fragment (paced)", w.Size, w.Room())
	}
	for range 100 {
		w.Queued(1)
	}
	if w.Size != MinSize {
		t.Fatalf("shrank to %v, want the floor %v", w.Size, MinSize)
	}
	// A control packet halves windows above one fragment to one at least,
	// and leaves one below it where it is.
	if w.Congestion(0, 1); w.Size != MinSize {
		t.Fatalf("a signal moved a window of %v to %v", MinSize, w.Size)
	}
	w.Queued(0) // no queue: grows by a quarter per result below one
	w.Grow()
	if w.Size != MinSize*1.25 {
		t.Fatalf("grew to %v, want %v", w.Size, MinSize*1.25)
	}
	w.Size = 3
	w.Congestion(5, 6)
	w.Congestion(6, 7)
	if w.Size != 1 {
		t.Fatalf("halving from 3 twice: %v, want the floor of one fragment", w.Size)
	}
}
