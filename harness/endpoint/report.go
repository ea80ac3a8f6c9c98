package endpoint

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Report is what one endpoint did. Counts are packets unless said
// otherwise.
type Report struct {
	Role  string `json:"role"`
	Job   uint16 `json:"job"`
	Index *int   `json:"index,omitempty"` // the worker's member index
	Host  string `json:"host,omitempty"`
	IP    string `json:"ip"`
	// Fragments is how many fragments the job has per worker; Completed
	// how many of them have a result (worker) or were completed by the PS
	// (Mismatch says whether all were right).
	Fragments int `json:"fragments"`
	Completed int `json:"completed"`

	// Worker counts. Sent counts every gradient packet; Retries are the
	// sends answering control packets, Resent the timeouts' resends
	// (FlagResend).
	Sent     int `json:"sent,omitempty"`
	Retries  int `json:"retries,omitempty"`
	Resent   int `json:"resent,omitempty"`
	Controls int `json:"controls,omitempty"` // control packets (collision or over capacity)
	// ECNMarked counts the control packets whose IPv4 header said ECN CE,
	// as the switch marks them.
	ECNMarked        int `json:"ecn_marked,omitempty"`
	Results          int `json:"results,omitempty"` // result packets received (worker) or sent (PS)
	DuplicateResults int `json:"duplicate_results,omitempty"`
	// MinWindow and FinalWindow show the worker's congestion window,
	// Decreases how often it halved (control packets and timeouts, once
	// per window of data).
	MinWindow   float64 `json:"min_window,omitempty"`
	FinalWindow float64 `json:"final_window,omitempty"`
	Decreases   int     `json:"window_decreases,omitempty"`
	// Timeouts counts the times retransmission timers expired (each may
	// catch several fragments); SRTT and RTO are the smoothed
	// round trip and the retransmission timeout at the end, BaseRTT the
	// shortest round trip (the path without queues).
	Timeouts int `json:"timeouts,omitempty"`
	// SpuriousTimeouts counts results of fragments that had timed out
	// but were not resent yet: the window decrease was undone.
	SpuriousTimeouts int      `json:"spurious_timeouts,omitempty"`
	SRTT             Duration `json:"srtt,omitempty"`
	RTO              Duration `json:"rto,omitempty"`
	BaseRTT          Duration `json:"base_rtt,omitempty"`

	// PS counts: contributions received directly from workers and as
	// aggregated packets (partial sums, or fragments a switch passed on),
	// those already counted (duplicates: when complete, answered with the
	// result again to the workers they carry) and those discarded for
	// partial overlap; results sent again (one per worker), and answers
	// held back because that worker had just got the result again.
	Direct       int `json:"direct,omitempty"`
	Aggregated   int `json:"aggregated,omitempty"`
	Duplicates   int `json:"duplicates,omitempty"`
	Overlaps     int `json:"overlaps,omitempty"`
	ResultsAgain int `json:"results_again,omitempty"`
	AnswersHeld  int `json:"answers_held,omitempty"`

	// SendDrops counts datagrams the kernel refused for a full queue
	// (ENOBUFS): lost before the wire, recovered like any loss.
	SendDrops int `json:"send_drops,omitempty"`

	// Ignored counts datagrams that were not for this endpoint's job and
	// role (other jobs, malformed, unexpected flags).
	Ignored int `json:"ignored,omitempty"`

	// Verified is true when every fragment has its result and every sum
	// checked equals the exact sum; Mismatch is the first difference.
	Verified bool      `json:"verified"`
	Checked  int       `json:"checked"` // result packets (worker) or fragments (PS) compared value by value
	Mismatch *Mismatch `json:"first_mismatch,omitempty"`
	// Error says why the endpoint stopped short (deadline, socket).
	Error string `json:"error,omitempty"`

	// Start is when the endpoint began: a worker whose spec says "start":
	// "signal", when it got the signal.
	Start time.Time `json:"start"`
	// Done is when the last fragment completed (zero if none did), End when
	// the endpoint stopped (for the PS, after lingering).
	Done    time.Time `json:"done,omitzero"`
	End     time.Time `json:"end"`
	Seconds float64   `json:"seconds"` // Start to Done (or End if incomplete)
	// Goodput is completed fragments per second and gradient bits (32 per
	// value) per second over Seconds.
	FragmentsPerSecond float64 `json:"fragments_per_second"`
	GoodputBitsPerSec  float64 `json:"goodput_bits_per_second"`
}

// Mismatch is a result value that differs from the exact sum.
type Mismatch struct {
	Fragment uint32 `json:"fragment"`
	Value    int    `json:"value"` // index within the packet
	Got      int64  `json:"got"`
	Want     int64  `json:"want"`
	// Reason names other defects (a result counting the wrong workers).
	Reason string `json:"reason,omitempty"`
}

func (m *Mismatch) String() string {
	if m.Reason != "" {
		return fmt.Sprintf("fragment %d: %s", m.Fragment, m.Reason)
	}
	return fmt.Sprintf("fragment %d value %d: got %d, exact sum %d", m.Fragment, m.Value, m.Got, m.Want)
}

// finish fills the times and goodput.
func (r *Report) finish(end time.Time, values int) {
	r.End = end
	last := end
	if !r.Done.IsZero() {
		last = r.Done
	}
	r.Seconds = last.Sub(r.Start).Seconds()
	if r.Seconds > 0 {
		r.FragmentsPerSecond = float64(r.Completed) / r.Seconds
		r.GoodputBitsPerSec = r.FragmentsPerSecond * float64(values) * 32
	}
	r.Verified = r.Completed == r.Fragments && r.Mismatch == nil && r.Error == ""
}

// Failure is nil for a verified report, else an error saying what failed.
func (r *Report) Failure() error {
	switch {
	case r.Verified:
		return nil
	case r.Mismatch != nil:
		return fmt.Errorf("%s: wrong sum: %s", r.who(), r.Mismatch)
	case r.Error != "":
		return fmt.Errorf("%s: %s (%d of %d fragments complete)", r.who(), r.Error, r.Completed, r.Fragments)
	}
	return fmt.Errorf("%s: %d of %d fragments complete", r.who(), r.Completed, r.Fragments)
}

func (r *Report) who() string {
	if r.Index != nil {
		return fmt.Sprintf("job %d worker %d (%s)", r.Job, *r.Index, r.IP)
	}
	return fmt.Sprintf("job %d PS (%s)", r.Job, r.IP)
}

// WriteReport writes r as indented JSON to path atomically: readers see the
// old file or the whole new one, never part of it.
func WriteReport(path string, r *Report) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("report %s: %w", path, err)
	}
	return nil
}

// WriteSummary writes the report in two lines for people: what the
// endpoint did, whether every sum was exact, and its packet counts.
func (r *Report) WriteSummary(w io.Writer) {
	who := "PS"
	if r.Index != nil {
		who = fmt.Sprintf("worker %d", *r.Index)
	}
	verdict := "all sums exact"
	if !r.Verified {
		verdict = "NOT verified"
	}
	fmt.Fprintf(w, "grid %s: job %d %s (%s): %d/%d fragments in %.3fs, %.0f fragments/s, %.2f Mbit/s goodput; %s\n",
		r.Role, r.Job, who, r.IP, r.Completed, r.Fragments, r.Seconds, r.FragmentsPerSecond, r.GoodputBitsPerSec/1e6, verdict)
	if r.Index != nil {
		fmt.Fprintf(w, "  sent %d (retries %d, resends %d), control packets %d (%d ECN CE), results %d (%d duplicate)\n",
			r.Sent, r.Retries, r.Resent, r.Controls, r.ECNMarked, r.Results, r.DuplicateResults)
		fmt.Fprintf(w, "  timeouts %d (%d spurious), window halved %d times (lowest %.1f, last %.1f), round trip %v (shortest %v), retransmission timeout %v\n",
			r.Timeouts, r.SpuriousTimeouts, r.Decreases, r.MinWindow, r.FinalWindow, time.Duration(r.SRTT).Round(time.Microsecond),
			time.Duration(r.BaseRTT).Round(time.Microsecond), time.Duration(r.RTO).Round(time.Microsecond))
	} else {
		fmt.Fprintf(w, "  contributions %d direct, %d aggregated (%d duplicate, %d overlapping), results sent %d (%d again)\n",
			r.Direct, r.Aggregated, r.Duplicates, r.Overlaps, r.Results, r.ResultsAgain)
	}
}
