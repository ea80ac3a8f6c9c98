package gradproto

import (
	"math"
	"time"
)

// RTO is a worker's retransmission timeout, estimated from round-trip
// samples as TCP does it (RFC 6298): a smoothed round trip SRTT and its
// variation RTTVAR, RTO = SRTT + 4·RTTVAR, at least Min and at least twice
// SRTT: round trips that vary little (a window held below the queues'
// depth) make RTTVAR small, and a fragment's round trip also waits for the
// slowest of the workers aggregated with it, which one scheduling delay
// stretches well beyond four of its small deviations. Before the
// first sample it is Initial. Each consecutive timeout doubles it (Backoff,
// up to Max); the next sample starts from the estimate again. Callers
// follow Karn's rule: a fragment sent more than once gives no sample, since
// its result may answer any of its transmissions.
type RTO struct {
	Initial, Min, Max time.Duration

	srtt, rttvar time.Duration
	sampled      bool
	// backoff counts the timeouts since the last sample.
	backoff int
}

// NewRTO returns an estimator starting at initial, kept within [lo, hi]
// (hi below initial is raised to initial, lo above it lowered to it).
func NewRTO(initial, lo, hi time.Duration) *RTO {
	return &RTO{Initial: initial, Min: min(lo, initial), Max: max(hi, initial)}
}

// Sample adds a round trip measured on a fragment sent once, and ends any
// back-off.
func (r *RTO) Sample(rtt time.Duration) {
	if rtt < 0 {
		rtt = 0
	}
	if !r.sampled {
		r.srtt, r.rttvar, r.sampled = rtt, rtt/2, true
	} else {
		diff := r.srtt - rtt
		if diff < 0 {
			diff = -diff
		}
		r.rttvar = (3*r.rttvar + diff) / 4
		r.srtt = (7*r.srtt + rtt) / 8
	}
	r.backoff = 0
}

// Backoff doubles the timeout after a timeout, up to Max.
func (r *RTO) Backoff() {
	before := r.Timeout()
	r.backoff++
	if r.Timeout() == before {
		r.backoff--
	}
}

// Timeout is the current retransmission timeout, back-off included, at
// most Max. Max caps the estimate too: a fragment's round trip also waits
// for the slowest of the workers aggregated with it, so when loss makes
// the others recover slowly, the estimate grows with their timeouts, and
// theirs with it, until a lost result waits many seconds for its resend.
// Whoever sets Max knows the longest a round trip can honestly take (the
// runner: a fragment there and back through the deepest queue at its
// link's rate).
func (r *RTO) Timeout() time.Duration {
	base := r.Initial
	if r.sampled {
		base = max(r.srtt+max(4*r.rttvar, r.srtt), r.Min)
	}
	base = min(base, r.Max)
	for range r.backoff {
		if base >= r.Max/2 {
			return r.Max
		}
		base *= 2
	}
	return base
}

// SRTT is the smoothed round trip (0 before the first sample).
func (r *RTO) SRTT() time.Duration { return r.srtt }

// BackedOff is how many times the timeout was doubled since the last sample.
func (r *RTO) BackedOff() int { return r.backoff }

// CongestionWindow is a worker's window of fragments in flight, TCP's
// congestion control (RFC 5681) over fragments: it grows by one per result
// below the threshold (slow start) and by 1/size per result above it
// (additive increase), and halves, setting the threshold, on a congestion
// signal: a control packet (collision, over capacity, ECN CE) or a
// timeout. It reacts to at most one signal per window of data (RFC 3168):
// each transmission carries a sequence number, and a signal about a
// transmission sent before the last decrease is the same congestion
// episode, already answered.
//
// Growth also stops, and the window shrinks, when round trips say the
// worker's own fragments wait in queues (Queued, TCP Vegas's congestion
// avoidance): a loss-based window alone grows until a queue overflows, and
// on a link emulated at a few hundred kbit/s a full queue holds seconds of
// data, so round trips swing by seconds and timers fire for fragments that
// are only queued.
type CongestionWindow struct {
	Size, Threshold, Max float64
	// Alpha and Beta bound the fragments of the worker's window that may
	// wait in queues (Vegas's α and β): below Alpha it grows, above Beta
	// it shrinks by one per round trip.
	Alpha, Beta float64
	// queued is the last estimate given to Queued.
	queued float64
	// recover is the first sequence number sent after the last decrease.
	recover uint64
	// before is the size and threshold before the last decrease, for Undo.
	before    [2]float64
	undoable  bool
	Decreases int // halvings, less those undone
}

// Vegas's defaults for Alpha and Beta, in fragments.
const (
	DefaultAlpha = 2
	DefaultBeta  = 4
)

// NewCongestionWindow starts at initial fragments, never above max.
func NewCongestionWindow(initial, max int) *CongestionWindow {
	return &CongestionWindow{Size: float64(initial), Threshold: float64(max), Max: float64(max), Alpha: DefaultAlpha, Beta: DefaultBeta}
}

// MinSize is the smallest window: one fragment per 16 round trips.
const MinSize = 1.0 / 16

// Room is how many fragments the window allows in flight: one when it is
// below one fragment, and the worker then paces its sends a round trip
// over the size apart.
func (w *CongestionWindow) Room() int { return max(1, int(w.Size)) }

// Grow accounts for one result: unless the last estimate found Alpha or
// more of the worker's fragments queued, it adds one (slow start) or
// 1/size (additive increase: one per window of results); below one
// fragment a quarter of the size.
func (w *CongestionWindow) Grow() {
	switch {
	case w.queued >= w.Alpha:
		return
	case w.SlowStart():
		w.Size++
	case w.Size < 1:
		w.Size += w.Size / 4
	default:
		w.Size += 1 / w.Size
	}
	w.Size = math.Min(w.Size, w.Max)
}

// Queued takes an estimate of how many of the worker's fragments wait in
// queues (QueueEstimate): once per round trip, and in slow start after
// every result, since slow start doubles the window each round trip and a
// round late it has filled the queues twice over. Slow start ends once a
// fragment is queued, the window cut to what the path holds without
// queueing plus one; after it, above Beta the window shrinks by one, or
// by a quarter below two fragments, to MinSize at least. A Beta below one
// asks for windows below one: hundreds of workers whose fragments reach
// one PS each would otherwise queue more than its link holds.
func (w *CongestionWindow) Queued(q float64) {
	w.queued = q
	switch {
	case w.SlowStart() && q > 1:
		w.Size = math.Max(1, w.Size-q+1)
		w.Threshold = w.Size
	case !w.SlowStart() && q > w.Beta:
		w.Size = math.Max(MinSize, w.Size-math.Min(1, w.Size/4))
		w.Threshold = w.Size // a smaller window is no new slow start
	}
}

// SlowStart says whether the window is below its threshold.
func (w *CongestionWindow) SlowStart() bool { return w.Size < w.Threshold }

// Congestion answers a signal about the transmission with sequence number
// seq; next is the sequence number the next transmission will get. It
// halves the window (at least 1) unless the transmission predates the
// last decrease, and says whether it did.
func (w *CongestionWindow) Congestion(seq, next uint64) bool {
	if seq < w.recover {
		return false
	}
	w.before, w.undoable = [2]float64{w.Size, w.Threshold}, true
	// Halving stops at one fragment; a window below it is the queue
	// estimate's, which a lost fragment does not lower further.
	w.Size = math.Max(math.Min(1, w.Size), w.Size/2)
	w.Threshold = math.Max(math.Min(2, w.before[1]), w.Size)
	w.recover = next
	w.Decreases++
	return true
}

// Undo restores the window as it was before the last decrease, when the
// signal turned out false: a timeout whose fragment's result came after
// all (RFC 4015's response to a spurious timeout). It undoes a decrease
// once and says whether it did.
func (w *CongestionWindow) Undo() bool {
	if !w.undoable {
		return false
	}
	w.Size, w.Threshold = math.Max(w.Size, w.before[0]), w.before[1]
	w.undoable = false
	w.Decreases--
	return true
}

// QueueEstimate is TCP Vegas's view of the path (Brakmo and Peterson,
// 1995): the shortest round trip ever measured is the path without queues
// (for a fragment that is aggregated, without waiting for other workers
// either), and what a round trip takes beyond it is time spent waiting.
// Once per round trip it turns that into fragments: of a window of size
// fragments, size × (rtt − base) / rtt wait rather than travel, with rtt
// the shortest round trip measured during the last round trip (one late
// result is jitter, a queue delays them all).
type QueueEstimate struct {
	// Floor is the waiting below which a path counts as without queues:
	// timers and the scheduler delay results by about that much on an
	// idle path.
	Floor time.Duration

	base, least time.Duration
	sampled     bool
	// from is the first sequence number sent after the last estimate: a
	// sample of a later transmission has seen a whole round trip since.
	from uint64
}

// Sample adds the round trip of transmission seq, sent once; next is the
// sequence number the next transmission will get and size the window. It
// returns the estimate from this round trip alone and, once per round
// trip (round true), the estimate from the round's shortest.
func (q *QueueEstimate) Sample(rtt time.Duration, seq, next uint64, size float64) (this, least float64, round bool) {
	if !q.sampled || rtt < q.base {
		q.base = rtt
	}
	if !q.sampled || rtt < q.least {
		q.least = rtt
	}
	q.sampled = true
	this = q.queued(rtt, size)
	if seq < q.from {
		return this, 0, false
	}
	least = q.queued(q.least, size)
	q.from, q.least = next, time.Duration(math.MaxInt64)
	return this, least, true
}

// queued is how many of size fragments wait when a round trip takes rtt.
func (q *QueueEstimate) queued(rtt time.Duration, size float64) float64 {
	wait := rtt - q.base
	if wait <= q.Floor {
		return 0
	}
	return size * float64(wait) / float64(rtt)
}

// Base is the shortest round trip measured (0 before the first).
func (q *QueueEstimate) Base() time.Duration { return q.base }
