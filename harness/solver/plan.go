package solver

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/grid-ina/grid/harness/topo"
)

// Plan is an algorithm's routing decision scored by the evaluator. Its JSON
// form (plan.json) is what the experiment runner installs:
//
//   - jobs[].workers[].shares: where each worker sends its gradients — the
//     aggregation node (node_id is the switch ID the worker writes into its
//     packets; 0 means the PS aggregates), the fraction of its traffic, and the
//     path hop by hop as switch ports (out_port 0 at the aggregating switch);
//   - switches[].aggregate: the jobs this switch aggregates, with the fan-in
//     (how many workers' gradients to count before a result is complete) and
//     the port towards the PS;
//   - switches[].forward: gradient packets of (job, worker, node) leave on out_port;
//   - switches[].streams: aggregated results of (job, from switch) leave on out_port;
//   - switches[].multicast: results of a job arriving on in_port are copied
//     to out_ports. Results go down one tree per job from its PS (one rule
//     per switch and job), so each worker gets each result exactly once;
//   - links: every link direction the plan uses, its load with results
//     included and the packets one fragment puts on it.
//
// Rates are in Gbps. rate_gbps is the max-min fair rate the evaluator gives
// each worker; lambda_gbps the slowest worker's.
type Plan struct {
	Algorithm string `json:"algorithm"`
	Topology  string `json:"topology"`
	// Model is the network model the algorithm optimised: "paper" (links
	// assumed sufficient, Eq. 1), "links" (link capacities and paths) or
	// "none" (a baseline's fixed rule).
	Model      string  `json:"model"`
	LambdaGbps float64 `json:"lambda_gbps"`
	// BoundGbps is the algorithm's own optimum: R-GRIA's LP relaxation value,
	// the exact integer optimum of its model, or the LP value grid-paths started from.
	BoundGbps *float64 `json:"bound_gbps,omitempty"`
	// Exact is set by grid-exact: true only when LambdaGbps is proved
	// optimal for the plan's model (then BoundGbps equals it), false when a
	// limit stopped the proof (BoundGbps is then an upper bound).
	Exact *bool `json:"exact,omitempty"`
	// RelaxationGbps is the LP relaxation value grid-paths rounded from.
	RelaxationGbps *float64 `json:"relaxation_gbps,omitempty"`
	// IntendedLambdaGbps is the slowest rate the algorithm's model promises
	// (R-GRIA keeps the LP rates after rounding); Violations say what that costs.
	IntendedLambdaGbps *float64     `json:"intended_lambda_gbps,omitempty"`
	Seed               *uint64      `json:"seed,omitempty"`
	LPBackend          string       `json:"lp_backend,omitempty"`
	SolveSeconds       float64      `json:"solve_seconds"`
	Jobs               []JobPlan    `json:"jobs"`
	Switches           []SwitchPlan `json:"switches"`
	Links              []LinkLoad   `json:"links"`
	// Violations are the capacities the intended rates would exceed.
	Violations []Violation `json:"violations,omitempty"`
	Notes      []string    `json:"notes,omitempty"`
}

// JobPlan is one job's part of a plan.
type JobPlan struct {
	Name          string       `json:"name"`
	PS            string       `json:"ps"`
	LambdaGbps    float64      `json:"lambda_gbps"`
	MaxRateGbps   float64      `json:"max_rate_gbps"`
	PSIngressGbps float64      `json:"ps_ingress_gbps"`
	PSLoadGbps    float64      `json:"ps_load_gbps"`
	Workers       []WorkerPlan `json:"workers"`
	Aggregators   []Aggregator `json:"aggregators"`
}

// WorkerPlan says where one worker's gradients go.
type WorkerPlan struct {
	Host         string   `json:"host"`
	RateGbps     float64  `json:"rate_gbps"`
	IntendedGbps *float64 `json:"intended_gbps,omitempty"`
	Shares       []Share  `json:"shares"`
}

// Share is a part of a worker's traffic aggregated at one node.
type Share struct {
	Node     string  `json:"node"`
	NodeID   int     `json:"node_id"`
	Fraction float64 `json:"fraction"`
	Path     []Hop   `json:"path"`
}

// Hop is one switch on a path: the packet arrives on InPort and leaves on
// OutPort (0 when this switch aggregates it).
type Hop struct {
	Switch  string `json:"switch"`
	InPort  int    `json:"in_port"`
	OutPort int    `json:"out_port"`
}

// Aggregator is a switch aggregating a job and the path of its result to the PS.
type Aggregator struct {
	Switch     string  `json:"switch"`
	FanIn      int     `json:"fan_in"`
	StreamGbps float64 `json:"stream_gbps"`
	Path       []Hop   `json:"path"`
}

// SwitchPlan is what one switch must do.
type SwitchPlan struct {
	Name         string          `json:"name"`
	ID           int             `json:"id"`
	Programmable bool            `json:"programmable"`
	CapacityGbps float64         `json:"capacity_gbps,omitempty"`
	LoadGbps     float64         `json:"load_gbps"`
	Aggregate    []AggregateRule `json:"aggregate,omitempty"`
	Forward      []ForwardRule   `json:"forward,omitempty"`
	Streams      []StreamRule    `json:"streams,omitempty"`
	Multicast    []MulticastRule `json:"multicast,omitempty"`
}

// AggregateRule: this switch aggregates FanIn workers of Job and sends the result out OutPort.
type AggregateRule struct {
	Job     string `json:"job"`
	FanIn   int    `json:"fan_in"`
	OutPort int    `json:"out_port"`
}

// ForwardRule: gradients of (Job, Worker) for aggregation node Node leave on OutPort.
type ForwardRule struct {
	Job     string `json:"job"`
	Worker  string `json:"worker"`
	Node    string `json:"node"`
	NodeID  int    `json:"node_id"`
	OutPort int    `json:"out_port"`
}

// StreamRule: aggregated results of Job from switch From leave on OutPort.
type StreamRule struct {
	Job     string `json:"job"`
	From    string `json:"from"`
	OutPort int    `json:"out_port"`
}

// MulticastRule: results of Job arriving on InPort are copied to OutPorts.
type MulticastRule struct {
	Job      string `json:"job"`
	InPort   int    `json:"in_port"`
	OutPorts []int  `json:"out_ports"`
}

// LinkLoad is what the plan puts on one direction of a link (every
// direction that carries anything is listed): its load at the evaluated
// rates — gradients, partial sums and results together — and, per job, the
// packets one fragment puts on it. The wire carries fragments × packets of
// each job (all three kinds are data packets of the same size), plus
// control packets and retransmissions, which a plan does not foresee (a
// plan within capacity makes none in steady state).
type LinkLoad struct {
	From     string  `json:"from"`
	To       string  `json:"to"`
	LoadGbps float64 `json:"load_gbps"`
	// ResultGbps is the part of LoadGbps that is results going to workers.
	ResultGbps   float64       `json:"result_gbps,omitempty"`
	CapacityGbps float64       `json:"capacity_gbps,omitempty"` // omitted when unlimited
	Packets      []LinkPackets `json:"packets"`
}

// LinkPackets is what one fragment of Job puts on a link direction:
// Gradients workers' fragments (fractional only where a plan splits a
// worker's traffic over nodes), PartialSums aggregated streams of
// switches, Results copies of the result.
type LinkPackets struct {
	Job         string  `json:"job"`
	Gradients   float64 `json:"gradients,omitempty"`
	PartialSums int     `json:"partial_sums,omitempty"`
	Results     int     `json:"results,omitempty"`
}

// Total is the packets one fragment of the job puts on the link direction.
func (l LinkPackets) Total() float64 { return l.Gradients + float64(l.PartialSums+l.Results) }

// ExpectedPackets is the number of packets the plan puts on each link
// direction, keyed by LinkLoad's (From, To), when job j sends fragments[j]
// fragments (jobs not in the map send none): what a monitor counting the
// wire should see, less control packets and retransmissions.
func (p *Plan) ExpectedPackets(fragments map[string]int) map[[2]string]float64 {
	out := map[[2]string]float64{}
	for _, l := range p.Links {
		var n float64
		for _, lp := range l.Packets {
			n += float64(fragments[lp.Job]) * lp.Total()
		}
		if n > 0 {
			out[[2]string{l.From, l.To}] = n
		}
	}
	return out
}

// Violation is a capacity the intended rates exceed, by Factor (load/capacity).
type Violation struct {
	Resource     string  `json:"resource"`
	LoadGbps     float64 `json:"load_gbps"`
	CapacityGbps float64 `json:"capacity_gbps"`
	Factor       float64 `json:"factor"`
}

// finite turns +Inf into 0 (JSON has no infinity; 0 means unlimited).
func finite(v float64) float64 {
	if math.IsInf(v, 0) {
		return 0
	}
	return v
}

func round9(v float64) float64 { return math.Round(v*1e9) / 1e9 }

// buildPlan turns an assignment into a Plan, evaluating it.
func (in *Instance) buildPlan(algo, model string, a *assignment) *Plan {
	t := in.Topo
	ev := in.evaluate(a)
	p := &Plan{Algorithm: algo, Topology: t.Name, Model: model, LambdaGbps: round9(ev.lambda)}
	node := func(i int) string { return in.names[i] }
	nodeID := func(i int) int {
		if in.sw[i] {
			return t.Nodes[i].ID
		}
		return 0
	}
	// hops lists the switches of a path; OutPort is 0 where the path ends at a switch, which aggregates there.
	hops := func(path []int) []Hop {
		var out []Hop
		for i := 1; i < len(path); i++ {
			v := path[i]
			if !in.sw[v] {
				continue
			}
			h := Hop{Switch: node(v), InPort: in.arcs[in.arcFrom(path[i-1], v)].toPort}
			if i+1 < len(path) {
				h.OutPort = in.arcs[in.arcFrom(v, path[i+1])].fromPort
			}
			out = append(out, h)
		}
		return out
	}
	type swRules struct {
		agg   []AggregateRule
		fwd   []ForwardRule
		str   []StreamRule
		mcast map[[2]int]map[int]bool // (job, port results arrive on) -> ports they leave on
	}
	rules := map[int]*swRules{}
	// packets[arc][job] counts what one fragment of the job puts on the arc.
	packets := map[int]map[int]*LinkPackets{}
	perArc := func(ai, j int) *LinkPackets {
		if packets[ai] == nil {
			packets[ai] = map[int]*LinkPackets{}
		}
		if packets[ai][j] == nil {
			packets[ai][j] = &LinkPackets{Job: in.jobs[j].name}
		}
		return packets[ai][j]
	}
	rulesOf := func(s int) *swRules {
		if rules[s] == nil {
			rules[s] = &swRules{mcast: map[[2]int]map[int]bool{}}
		}
		return rules[s]
	}
	for j, jb := range in.jobs {
		jp := JobPlan{Name: jb.name, PS: node(jb.ps), LambdaGbps: math.Inf(1), MaxRateGbps: round9(jb.maxRate),
			PSIngressGbps: round9(jb.ingress), PSLoadGbps: round9(ev.psLoad[jb.ps])}
		for w, wi := range jb.workers {
			wp := WorkerPlan{Host: node(wi), RateGbps: round9(ev.rates[j][w])}
			jp.LambdaGbps = math.Min(jp.LambdaGbps, wp.RateGbps)
			if a.intended != nil {
				v := round9(a.intended[j][w])
				wp.IntendedGbps = &v
			}
			for _, s := range a.shares[j][w] {
				if s.frac <= 0 {
					continue
				}
				wp.Shares = append(wp.Shares, Share{Node: node(s.node), NodeID: nodeID(s.node), Fraction: round9(s.frac), Path: hops(s.path)})
				for _, ai := range in.pathArcs(s.path) {
					perArc(ai, j).Gradients += s.frac
				}
				for i := 1; i+1 < len(s.path); i++ {
					if v := s.path[i]; in.sw[v] {
						rulesOf(v).fwd = append(rulesOf(v).fwd, ForwardRule{Job: jb.name, Worker: node(wi), Node: node(s.node), NodeID: nodeID(s.node),
							OutPort: in.arcs[in.arcFrom(v, s.path[i+1])].fromPort})
					}
				}
			}
			jp.Workers = append(jp.Workers, wp)
		}
		for _, s := range sortedKeys(ev.fanIn[j]) {
			path := a.streams[j][s]
			out := in.arcs[in.arcFrom(s, path[1])].fromPort
			jp.Aggregators = append(jp.Aggregators, Aggregator{Switch: node(s), FanIn: ev.fanIn[j][s], StreamGbps: round9(ev.streamRate[j][s]), Path: hops(path)})
			rulesOf(s).agg = append(rulesOf(s).agg, AggregateRule{Job: jb.name, FanIn: ev.fanIn[j][s], OutPort: out})
			for i := 1; i+1 < len(path); i++ {
				if v := path[i]; in.sw[v] {
					rulesOf(v).str = append(rulesOf(v).str, StreamRule{Job: jb.name, From: node(s), OutPort: in.arcs[in.arcFrom(v, path[i+1])].fromPort})
				}
			}
			for _, ai := range in.pathArcs(path) {
				perArc(ai, j).PartialSums++
			}
		}
		// Results go down the job's result tree: each switch on it copies
		// them from the port they arrive on to its children's ports.
		for _, ai := range in.resultArcs(j, a) {
			perArc(ai, j).Results++
			ar := in.arcs[ai]
			if !in.sw[ar.from] {
				continue // the PS sends, a worker receives
			}
			r := rulesOf(ar.from)
			k := [2]int{j, in.arcs[in.resultParent[j][ar.from]].toPort}
			if r.mcast[k] == nil {
				r.mcast[k] = map[int]bool{}
			}
			r.mcast[k][ar.fromPort] = true
		}
		p.Jobs = append(p.Jobs, jp)
	}
	for i, n := range t.Nodes {
		if !in.sw[i] {
			continue
		}
		sp := SwitchPlan{Name: n.Name, ID: n.ID, Programmable: in.prog[i], CapacityGbps: round9(in.capS[i]), LoadGbps: round9(ev.switchLoad[i])}
		if r := rules[i]; r != nil {
			sp.Aggregate, sp.Forward, sp.Streams = r.agg, r.fwd, r.str
			keys := make([][2]int, 0, len(r.mcast))
			for k := range r.mcast {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(x, y int) bool {
				return keys[x][0] < keys[y][0] || keys[x][0] == keys[y][0] && keys[x][1] < keys[y][1]
			})
			for _, k := range keys {
				ports := sortedKeys(r.mcast[k])
				sp.Multicast = append(sp.Multicast, MulticastRule{Job: in.jobs[k[0]].name, InPort: k[1], OutPorts: ports})
			}
		}
		p.Switches = append(p.Switches, sp)
	}
	for ai, ar := range in.arcs {
		if packets[ai] == nil {
			continue
		}
		l := LinkLoad{From: t.EndpointString(endpoint(in, ar.from, ar.fromPort)), To: t.EndpointString(endpoint(in, ar.to, ar.toPort)),
			LoadGbps: round9(ev.arcLoad[ai]), ResultGbps: round9(ev.arcResult[ai]), CapacityGbps: round9(finite(ar.cap))}
		for _, j := range sortedKeys(packets[ai]) {
			lp := *packets[ai][j]
			lp.Gradients = round9(lp.Gradients)
			l.Packets = append(l.Packets, lp)
		}
		p.Links = append(p.Links, l)
	}
	if a.intended != nil {
		res := in.resources(a)
		iv := in.loadsAt(a, res, flatten(a.intended))
		v := round9(iv.lambda)
		p.IntendedLambdaGbps = &v
		p.Violations = in.violations(res, flatten(a.intended))
	}
	return p
}

func endpoint(in *Instance, n, port int) topo.Endpoint {
	return topo.Endpoint{Node: in.names[n], Port: port}
}

// violations lists resources whose load at the given rates exceeds capacity.
func (in *Instance) violations(res []*resource, rate []float64) []Violation {
	var out []Violation
	jmax := jobMax(in.offsets(), rate)
	for _, r := range res {
		l := r.load(rate, jmax)
		if l <= r.cap*(1+1e-9) {
			continue
		}
		out = append(out, Violation{Resource: in.resourceName(r), LoadGbps: round9(l), CapacityGbps: round9(r.cap), Factor: round9(l / r.cap)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Factor > out[j].Factor })
	return out
}

func (in *Instance) resourceName(r *resource) string {
	switch r.kind {
	case resArc:
		a := in.arcs[r.id]
		return fmt.Sprintf("link %s->%s", in.names[a.from], in.names[a.to])
	case resSwitch:
		return "switch " + in.names[r.id]
	}
	return "PS ingress " + in.names[r.id]
}

// MaxViolation is the largest violation factor, 0 when there is none.
func (p *Plan) MaxViolation() float64 {
	m := 0.0
	for _, v := range p.Violations {
		m = math.Max(m, v.Factor)
	}
	return m
}

// WriteJSON writes the plan as indented JSON.
func (p *Plan) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// Explain writes the plan as tables for people: per job each worker's
// aggregation node, path and rate; per switch its load and fan-ins; the
// violations of the intended rates.
func (p *Plan) Explain(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "plan %s on %s (model %s): lambda %.4g Gbps", p.Algorithm, p.Topology, p.Model, p.LambdaGbps)
	if p.BoundGbps != nil {
		fmt.Fprintf(tw, ", bound %.4g Gbps", *p.BoundGbps)
	}
	fmt.Fprintf(tw, " (%s)\n", p.Role())
	for _, j := range p.Jobs {
		fmt.Fprintf(tw, "\njob %s: PS %s, ingress %.4g Gbps, load %.4g Gbps, T %.4g Gbps, lambda %.4g Gbps\n", j.Name, j.PS, j.PSIngressGbps, j.PSLoadGbps, j.MaxRateGbps, j.LambdaGbps)
		fmt.Fprintln(tw, "worker\trate Gbps\taggregated at\tfraction\tpath (switch:in>out)")
		for _, wp := range j.Workers {
			for i, s := range wp.Shares {
				name, rate := wp.Host, fmt.Sprintf("%.4g", wp.RateGbps)
				if i > 0 {
					name, rate = "", ""
				}
				var hs []string
				for _, h := range s.Path {
					if h.OutPort == 0 {
						hs = append(hs, fmt.Sprintf("%s:%d>agg", h.Switch, h.InPort))
					} else {
						hs = append(hs, fmt.Sprintf("%s:%d>%d", h.Switch, h.InPort, h.OutPort))
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t%s\n", name, rate, s.Node, s.Fraction, strings.Join(hs, " "))
			}
		}
		if len(j.Aggregators) > 0 {
			fmt.Fprintln(tw, "aggregator\tfan-in\tstream Gbps")
			for _, a := range j.Aggregators {
				fmt.Fprintf(tw, "%s\t%d\t%.4g\n", a.Switch, a.FanIn, a.StreamGbps)
			}
		}
	}
	fmt.Fprintln(tw, "\nlink\tload Gbps\tof which results\tcapacity Gbps\tpackets per fragment")
	for _, l := range p.Links {
		var n float64
		for _, lp := range l.Packets {
			n += lp.Total()
		}
		capacity := "unlimited"
		if l.CapacityGbps > 0 {
			capacity = fmt.Sprintf("%.4g", l.CapacityGbps)
		}
		fmt.Fprintf(tw, "%s -> %s\t%.4g\t%.4g\t%s\t%.4g\n", l.From, l.To, l.LoadGbps, l.ResultGbps, capacity, n)
	}
	fmt.Fprintln(tw, "\nswitch\tprogrammable\tcapacity Gbps\tload Gbps")
	for _, s := range p.Switches {
		if s.LoadGbps > 0 || len(s.Aggregate) > 0 {
			fmt.Fprintf(tw, "%s\t%v\t%.4g\t%.4g\n", s.Name, s.Programmable, s.CapacityGbps, s.LoadGbps)
		}
	}
	if len(p.Violations) > 0 {
		fmt.Fprintln(tw, "\nviolation at intended rates\tload Gbps\tcapacity Gbps\tfactor")
		for _, v := range p.Violations {
			fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%.3f\n", v.Resource, v.LoadGbps, v.CapacityGbps, v.Factor)
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(tw, "note: %s\n", n)
	}
	return tw.Flush()
}
