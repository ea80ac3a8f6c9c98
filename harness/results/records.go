package results

import "time"

// The records below are what the writer takes: plain values that the
// runner fills from what it measured (the monitor's samples, the
// endpoints' reports, the switches' counters), so that data flows one way,
// measure -> records -> results, and this package depends on none of the
// measuring ones.

// Link is one link of the fabric: its two ends as "node:interface" (A, B)
// and their nodes.
type Link struct {
	A, B         string
	NodeA, NodeB string
	// RateBits is the link's shaped rate per direction in bits per
	// second, as emulated; 0 when unshaped.
	RateBits float64
}

// Count is bytes and packets.
type Count struct {
	Bytes   uint64
	Packets uint64
}

// LinkSample is one link's cumulative counts each way at Time; Link
// indexes Experiment.Links.
type LinkSample struct {
	Time   time.Time
	Link   int
	AB, BA Count
}

// Endpoint is what one endpoint (a worker or a PS) reported.
type Endpoint struct {
	Role  string // "worker" or "ps"
	Job   uint16
	Index *int // the worker's member index; nil for the PS
	Host  string
	IP    string
	// Fragments per worker in the job; Completed of them with a result
	// (worker) or completed by the PS.
	Fragments, Completed int
	// Sent gradient packets, of them Retries answering control packets and
	// Resent after timeouts; Controls is the control packets received.
	Sent, Retries, Resent, Controls int
	Verified                        bool
	// Failure says what went wrong when not Verified.
	Failure string
	// Start, Done (the last fragment completed; zero if none) and End.
	Start, Done, End  time.Time
	Seconds           float64 // Start to Done (or End)
	GoodputBitsPerSec float64
}

// SwitchCounters is one switch's P4 counters after an algorithm's run.
type SwitchCounters struct {
	Switch string
	Ports  []PortCount
	// Jobs are the aggregation events per job id, in the order of
	// Experiment.Events.
	Jobs map[uint16][]uint64
}

// PortCount is a switch port's counters as the P4 program counted.
type PortCount struct {
	Port   int
	Rx, Tx Count
}

// Rate is one rate of the model: a link's bandwidth, a switch's capacity
// C_s or a PS's ingress B, in the topology's units and as emulated.
type Rate struct {
	// Kind is "link", "switch capacity" or "PS ingress"; Of names the link
	// or node.
	Kind string `json:"kind"`
	Of   string `json:"of"`
	// TopologyBits and EmulatedBits are bits per second; the emulated rate
	// is the topology's times Experiment.Scale.
	TopologyBits float64 `json:"topology_bits_per_second"`
	EmulatedBits float64 `json:"emulated_bits_per_second"`
}

// PredictedLink is what a plan predicts one link direction carries: its
// load in the topology's units and, per gradient fragment of the jobs, the
// packets (gradients, partial sums, results) on it.
type PredictedLink struct {
	From, To string
	Bits     float64
	// PacketsPerFragment is summed over the plan's jobs: the packets one
	// fragment index of every job puts on the link direction.
	PacketsPerFragment float64
}

// Meter is one switch's capacity meter: C_s (scaled) in fragments a
// second and the fragments it passes at once, on top of that rate, from
// full.
type Meter struct {
	Switch           string
	PacketsPerSecond float64
	Burst            uint32
}
