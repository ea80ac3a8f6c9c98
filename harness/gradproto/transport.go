package gradproto

import (
	"math"
	"time"
)

// RTO is a worker's retransmission timeout, estimated from round-trip
// samples as TCP does it (RFC 6298): a smoothed round trip SRTT and its
// variation RTTVAR, RTO = SRTT + 4·RTTVAR, at least Min. Before the
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

// Backoff doubles the timeout after a timeout, up to Max (or the
// estimate, if that is longer).
func (r *RTO) Backoff() {
	before := r.Timeout()
	r.backoff++
	if r.Timeout() == before {
		r.backoff--
	}
}

// Timeout is the current retransmission timeout, back-off included. Max
// caps the back-off, never the estimate: round trips longer than Max (a
// link scaled down to a few kbit/s queues for seconds) still get a timeout
// above them.
func (r *RTO) Timeout() time.Duration {
	base := r.Initial
	if r.sampled {
		base = max(r.srtt+4*r.rttvar, r.Min)
	}
	limit := max(r.Max, base)
	for range r.backoff {
		if base >= limit/2 {
			return limit
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
type CongestionWindow struct {
	Size, Threshold, Max float64
	// recover is the first sequence number sent after the last decrease.
	recover uint64
	// before is the size and threshold before the last decrease, for Undo.
	before    [2]float64
	undoable  bool
	Decreases int // halvings, less those undone
}

// NewCongestionWindow starts at initial fragments, never above max.
func NewCongestionWindow(initial, max int) *CongestionWindow {
	return &CongestionWindow{Size: float64(initial), Threshold: float64(max), Max: float64(max)}
}

// Room is how many fragments the window allows in flight.
func (w *CongestionWindow) Room() int { return int(w.Size) }

// Grow accounts for one result.
func (w *CongestionWindow) Grow() {
	if w.Size < w.Threshold {
		w.Size++
	} else {
		w.Size += 1 / w.Size
	}
	w.Size = math.Min(w.Size, w.Max)
}

// Congestion answers a signal about the transmission with sequence number
// seq; next is the sequence number the next transmission will get. It
// halves the window (at least 1) unless the transmission predates the
// last decrease, and says whether it did.
func (w *CongestionWindow) Congestion(seq, next uint64) bool {
	if seq < w.recover {
		return false
	}
	w.before, w.undoable = [2]float64{w.Size, w.Threshold}, true
	w.Size = math.Max(1, w.Size/2)
	w.Threshold = math.Max(2, w.Size)
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
