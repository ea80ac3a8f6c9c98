package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/grid-ina/grid/harness/gradproto"
)

// Roles of an endpoint.
const (
	RoleWorker = "worker"
	RolePS     = "ps"
)

// Spec is one job's endpoint specification; see the package documentation
// for its JSON form.
type Spec struct {
	Job           Job      `json:"job"`
	Role          string   `json:"role,omitempty"`
	Index         *int     `json:"index,omitempty"`
	Fragments     int      `json:"fragments"`
	FirstFragment uint32   `json:"first_fragment,omitempty"`
	Seed          uint64   `json:"seed"`
	Window        Window   `json:"window"`
	Timeout       Duration `json:"timeout"`
	MinTimeout    Duration `json:"min_timeout,omitempty"`
	MaxTimeout    Duration `json:"max_timeout,omitempty"`
	Deadline      Duration `json:"deadline"`
	StartWait     Duration `json:"start_wait,omitempty"`
	Linger        Duration `json:"linger,omitempty"`
	Results       string   `json:"results,omitempty"`
	Start         string   `json:"start,omitempty"`
}

// When workers start sending (Spec.Start).
const (
	// StartNow (the default): as soon as the socket is bound.
	StartNow = "now"
	// StartSignal: after the socket is bound, on a trigger (StartOn; grid
	// worker: SIGUSR1), so that a runner can start all workers at once.
	StartSignal = "signal"
)

// How the PS sends results (Spec.Results).
const (
	// ResultsBroadcast (the default) sends each result once to
	// 255.255.255.255; the switches multicast it to the workers.
	ResultsBroadcast = "broadcast"
	// ResultsUnicast sends a copy of each result to every worker's address:
	// for paths without an aggregator switch (the PS aggregates everything).
	ResultsUnicast = "unicast"
)

// Job is the job's plan as the endpoints see it.
type Job struct {
	ID     uint16 `json:"id"`
	PSNode uint16 `json:"ps_node"`
	// PSAliases are the PS's further node ids when it aggregates more
	// workers directly than one bitmap's 64 slots (gradproto.Plan.PSAliases).
	PSAliases []uint16 `json:"ps_aliases,omitempty"`
	PSIP      string   `json:"ps_ip"`
	PSHost    string   `json:"ps_host,omitempty"`
	Values    int      `json:"values"`
	Members   []Member `json:"members"`
	// Classes, when set, split each worker's fragments over several
	// aggregation nodes (gradproto.Plan.Classes): the classes' upper
	// bounds, and per member one placement per class.
	Classes []float64 `json:"classes,omitempty"`
}

// Member is one worker of the job.
type Member struct {
	Host string `json:"host,omitempty"`
	IP   string `json:"ip"`
	MAC  string `json:"mac,omitempty"`
	Node uint16 `json:"node"`
	Slot int    `json:"slot"`
	// Placements, with Job.Classes, are where each class of the member's
	// fragments is aggregated (Node and Slot are then unused).
	Placements []Placement `json:"placements,omitempty"`
}

// Placement is a node and bitmap slot of one class of a member's fragments.
type Placement struct {
	Node uint16 `json:"node"`
	Slot int    `json:"slot"`
}

// Window bounds a worker's fragments in flight (its congestion window): it
// starts at Initial, grows with results and halves on a control packet or a
// timeout, never beyond Max. Alpha and Beta bound how many of its fragments
// may wait in queues (gradproto.CongestionWindow): zero means Vegas's 2 and
// 4.
type Window struct {
	Initial int     `json:"initial"`
	Max     int     `json:"max"`
	Alpha   float64 `json:"queued_alpha,omitempty"`
	Beta    float64 `json:"queued_beta,omitempty"`
}

// congestionWindow is a worker's window as the spec sets it.
func (w Window) congestionWindow() *gradproto.CongestionWindow {
	c := gradproto.NewCongestionWindow(w.Initial, w.Max)
	if w.Alpha > 0 || w.Beta > 0 {
		c.Alpha, c.Beta = w.Alpha, w.Beta
	}
	return c
}

// Duration is a time.Duration written as a Go duration string in JSON.
type Duration time.Duration

// MarshalJSON writes the duration as a string such as "20ms".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	err := json.Unmarshal(b, &s)
	if err == nil {
		var v time.Duration
		if v, err = time.ParseDuration(s); err == nil {
			*d = Duration(v)
			return nil
		}
	}
	return &durationError{raw: b}
}

// durationError is a JSON value that is not a duration string; ParseSpec
// finds its line and field, which encoding/json does not pass to
// UnmarshalJSON.
type durationError struct{ raw []byte }

func (e *durationError) Error() string {
	return fmt.Sprintf("%s is not a duration string such as \"20ms\"", e.raw)
}

// JobFromPlan is the Job of a gradproto.Plan (as harness/aggregator's
// FromSolverPlan makes them); hosts names the members in order (nil or
// shorter leaves names out).
func JobFromPlan(p gradproto.Plan, psHost string, hosts []string) Job {
	j := Job{ID: p.Job, PSNode: p.PSNode, PSAliases: p.PSAliases, PSIP: p.PSIP.String(), PSHost: psHost, Values: p.Values, Classes: p.Classes}
	for i, m := range p.Members {
		mem := Member{IP: m.IP.String(), MAC: m.MAC.String(), Node: m.Node, Slot: int(m.Slot)}
		for _, pl := range m.Placements {
			mem.Placements = append(mem.Placements, Placement{Node: pl.Node, Slot: int(pl.Slot)})
		}
		if i < len(hosts) {
			mem.Host = hosts[i]
		}
		j.Members = append(j.Members, mem)
	}
	return j
}

// Plan is the job as a gradproto.Plan; Validate must have passed.
func (j *Job) Plan() gradproto.Plan {
	p := gradproto.Plan{Job: j.ID, PSNode: j.PSNode, PSAliases: j.PSAliases, PSIP: netip.MustParseAddr(j.PSIP), Values: j.Values, Classes: j.Classes}
	for _, m := range j.Members {
		mem := gradproto.Member{IP: netip.MustParseAddr(m.IP), Node: m.Node, Slot: uint8(m.Slot)}
		for _, pl := range m.Placements {
			mem.Placements = append(mem.Placements, gradproto.Placement{Node: pl.Node, Slot: uint8(pl.Slot)})
		}
		if hw, err := net.ParseMAC(m.MAC); err == nil && len(hw) == 6 {
			mem.MAC = gradproto.MAC(hw)
		}
		p.Members = append(p.Members, mem)
	}
	return p
}

// LoadSpec reads and validates a spec file. Errors name the file and, for
// JSON errors, the line and column, for invalid values the JSON field.
func LoadSpec(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseSpec(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseSpec decodes and validates a spec.
func ParseSpec(data []byte) (*Spec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, jsonError(data, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("line %d: more than one JSON value", lineOf(data, int(dec.InputOffset())))
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

func jsonError(data []byte, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var dur *durationError
	switch {
	case errors.As(err, &dur):
		// The first occurrence of the value after a key is good enough to
		// point at: its line, and the key before it.
		m := regexp.MustCompile(`"(\w+)"\s*:\s*` + regexp.QuoteMeta(string(dur.raw)) + `\s*[,}\]]`).FindSubmatchIndex(data)
		if m == nil {
			return err
		}
		return fmt.Errorf("line %d: %s: %w", lineOf(data, m[0]), data[m[2]:m[3]], err)
	case errors.As(err, &syntax):
		return fmt.Errorf("line %d: %w", lineOf(data, int(syntax.Offset)), err)
	case errors.As(err, &typ):
		return fmt.Errorf("line %d: %s: %s is not a valid %s", lineOf(data, int(typ.Offset)), typ.Field, strings.TrimPrefix(typ.Value, "number "), typ.Type)
	}
	return err
}

func lineOf(data []byte, offset int) int {
	return 1 + bytes.Count(data[:min(offset, len(data))], []byte("\n"))
}

// Validate checks the spec and names the first bad field.
func (s *Spec) Validate() error {
	j := &s.Job
	if j.ID == 0 {
		return errors.New("job.id: missing (job ids start at 1)")
	}
	if ip, err := netip.ParseAddr(j.PSIP); err != nil || !ip.Is4() {
		return fmt.Errorf("job.ps_ip: %q is not an IPv4 address", j.PSIP)
	}
	if j.Values != gradproto.DefaultValues && j.Values != 64 {
		return fmt.Errorf("job.values: %d, the aggregator carries 32 or 64 values per packet", j.Values)
	}
	if len(j.Members) == 0 {
		return errors.New("job.members: the job has no workers")
	}
	for i, a := range j.PSAliases {
		if a == j.PSNode || slices.Contains(j.PSAliases[:i], a) {
			return fmt.Errorf("job.ps_aliases[%d]: node %d is already the PS's", i, a)
		}
	}
	seen := map[netip.Addr]int{}
	slots := map[[2]int]int{}
	for i, m := range j.Members {
		ip, err := netip.ParseAddr(m.IP)
		if err != nil || !ip.Is4() {
			return fmt.Errorf("job.members[%d].ip: %q is not an IPv4 address", i, m.IP)
		}
		if k, dup := seen[ip]; dup {
			return fmt.Errorf("job.members[%d].ip: %s is members[%d]'s too (one endpoint per address)", i, ip, k)
		}
		seen[ip] = i
		if ip == netip.MustParseAddr(j.PSIP) {
			return fmt.Errorf("job.members[%d].ip: %s is the PS's address", i, ip)
		}
		if m.MAC != "" {
			if hw, err := net.ParseMAC(m.MAC); err != nil || len(hw) != 6 {
				return fmt.Errorf("job.members[%d].mac: %q is not an Ethernet address", i, m.MAC)
			}
		}
		if m.Slot < 0 || m.Slot >= gradproto.MaxFanIn {
			return fmt.Errorf("job.members[%d].slot: %d outside 0..%d", i, m.Slot, gradproto.MaxFanIn-1)
		}
		key := [2]int{int(m.Node), m.Slot}
		if k, dup := slots[key]; dup {
			return fmt.Errorf("job.members[%d].slot: slot %d of node %d is members[%d]'s too", i, m.Slot, m.Node, k)
		}
		slots[key] = i
		for k, pl := range m.Placements {
			if pl.Slot < 0 || pl.Slot >= gradproto.MaxFanIn {
				return fmt.Errorf("job.members[%d].placements[%d].slot: %d outside 0..%d", i, k, pl.Slot, gradproto.MaxFanIn-1)
			}
		}
	}
	if len(j.Classes) > 0 {
		p := j.Plan()
		if _, err := p.Expected(); err != nil {
			return fmt.Errorf("job: %w", err)
		}
	}
	switch s.Role {
	case "", RoleWorker, RolePS:
	default:
		return fmt.Errorf("role: %q, want %q or %q", s.Role, RoleWorker, RolePS)
	}
	if s.Index != nil && (*s.Index < 0 || *s.Index >= len(j.Members)) {
		return fmt.Errorf("index: %d, the job has members 0..%d", *s.Index, len(j.Members)-1)
	}
	if s.Fragments <= 0 {
		return fmt.Errorf("fragments: %d, want at least 1", s.Fragments)
	}
	if uint64(s.FirstFragment)+uint64(s.Fragments) > 1<<32 {
		return fmt.Errorf("first_fragment: %d + %d fragments exceeds the 32-bit fragment id", s.FirstFragment, s.Fragments)
	}
	if s.Window.Initial < 1 {
		return fmt.Errorf("window.initial: %d, want at least 1", s.Window.Initial)
	}
	if s.Window.Alpha < 0 || s.Window.Beta < s.Window.Alpha {
		return fmt.Errorf("window.queued_alpha %g, queued_beta %g: want 0 <= alpha <= beta", s.Window.Alpha, s.Window.Beta)
	}
	if s.Window.Max < s.Window.Initial {
		return fmt.Errorf("window.max: %d, below window.initial %d", s.Window.Max, s.Window.Initial)
	}
	if s.Timeout <= 0 {
		return errors.New("timeout: missing or not positive (the retransmission timeout, e.g. \"20ms\")")
	}
	if s.Timeout < Duration(minTimeout) {
		return fmt.Errorf("timeout: %v, below the %v a worker's clock resolves", time.Duration(s.Timeout), minTimeout)
	}
	if s.MinTimeout != 0 && s.MinTimeout < Duration(minTimeout) {
		return fmt.Errorf("min_timeout: %v, below the %v a worker's clock resolves", time.Duration(s.MinTimeout), minTimeout)
	}
	if s.MaxTimeout < 0 {
		return errors.New("max_timeout: negative")
	}
	if s.Deadline <= 0 {
		return errors.New("deadline: missing or not positive (e.g. \"60s\")")
	}
	if s.StartWait < 0 {
		return errors.New("start_wait: negative")
	}
	if s.Linger < 0 {
		return errors.New("linger: negative")
	}
	switch s.Results {
	case "", ResultsBroadcast, ResultsUnicast:
	default:
		return fmt.Errorf("results: %q, want %q or %q", s.Results, ResultsBroadcast, ResultsUnicast)
	}
	switch s.Start {
	case "", StartNow, StartSignal:
	default:
		return fmt.Errorf("start: %q, want %q or %q", s.Start, StartNow, StartSignal)
	}
	return nil
}

// minTimeout is the shortest retransmission timeout a spec may ask for:
// below it timers and polls cost more than they measure.
const minTimeout = 300 * time.Microsecond

// Defaults of the retransmission timeout's bounds (Spec.MinTimeout,
// MaxTimeout). The floor keeps a scheduler's hiccup on a loaded machine
// from passing for loss (RFC 6298 asks for a second, for delayed
// acknowledgements that GRID does not have); the cap bounds the estimate and
// its back-off (gradproto.RTO.Timeout).
const (
	DefaultMinTimeout = 10 * time.Millisecond
	DefaultMaxTimeout = time.Second
)

// rto is a worker's retransmission timeout estimator: it starts at the
// spec's timeout and stays within its bounds.
func (s *Spec) rto() *gradproto.RTO {
	lo, hi := time.Duration(s.MinTimeout), time.Duration(s.MaxTimeout)
	if lo == 0 {
		lo = DefaultMinTimeout
	}
	if hi == 0 {
		hi = DefaultMaxTimeout
	}
	return gradproto.NewRTO(time.Duration(s.Timeout), lo, hi)
}

// WorkerIndex resolves the worker's member index from the flag (flag < 0:
// not given) and the spec's index and role.
func (s *Spec) WorkerIndex(flag int) (int, error) {
	if s.Role == RolePS {
		return 0, errors.New("role: the spec is the PS's, not a worker's")
	}
	switch {
	case flag < 0 && s.Index == nil:
		return 0, errors.New("no worker index: give --index or the spec's index")
	case flag < 0:
		return *s.Index, nil
	case s.Index != nil && *s.Index != flag:
		return 0, fmt.Errorf("index: the spec says %d, --index %d", *s.Index, flag)
	case flag >= len(s.Job.Members):
		return 0, fmt.Errorf("--index %d: the job has members 0..%d", flag, len(s.Job.Members)-1)
	}
	return flag, nil
}

// startWait is how long a worker on "signal" waits for it.
func (s *Spec) startWait() time.Duration {
	if s.StartWait > 0 {
		return time.Duration(s.StartWait)
	}
	return time.Duration(s.Deadline)
}

// linger is how long the PS keeps answering after it last heard of the
// job: by default two of the longest retransmission timeouts, so that a
// worker whose resends backed off to the cap still finds it.
func (s *Spec) linger() time.Duration {
	if s.Linger > 0 {
		return time.Duration(s.Linger)
	}
	return 2 * s.rto().Max
}

// fragment is the id of fragment number i.
func (s *Spec) fragment(i int) uint32 { return s.FirstFragment + uint32(i) }
