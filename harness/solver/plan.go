package solver

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
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
//   - switches[].multicast: results of a job coming back from the PS on
//     in_port are copied to out_ports (the reverse of the gradients' paths).
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

// LinkLoad is the upstream load of one link direction.
type LinkLoad struct {
	From         string  `json:"from"`
	To           string  `json:"to"`
	LoadGbps     float64 `json:"load_gbps"`
	CapacityGbps float64 `json:"capacity_gbps,omitempty"` // omitted when unlimited
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
		mcast map[[2]int]map[int]bool // (job, in from PS side = upstream out port) -> ports
	}
	rules := map[int]*swRules{}
	rulesOf := func(s int) *swRules {
		if rules[s] == nil {
			rules[s] = &swRules{mcast: map[[2]int]map[int]bool{}}
		}
		return rules[s]
	}
	// upstream hop of a full path (to the PS) feeds the multicast tree
	addMcast := func(j int, full []int) {
		for i := 1; i+1 < len(full); i++ {
			v := full[i]
			if !in.sw[v] {
				continue
			}
			inPort := in.arcs[in.arcFrom(full[i-1], v)].toPort
			outPort := in.arcs[in.arcFrom(v, full[i+1])].fromPort
			r := rulesOf(v)
			k := [2]int{j, outPort}
			if r.mcast[k] == nil {
				r.mcast[k] = map[int]bool{}
			}
			r.mcast[k][inPort] = true
		}
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
				full := s.path
				if s.node != jb.ps {
					full = append(slices.Clone(s.path), a.streams[j][s.node][1:]...)
				}
				addMcast(j, full)
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
		if ev.arcLoad[ai] > 0 {
			p.Links = append(p.Links, LinkLoad{From: t.EndpointString(endpoint(in, ar.from, ar.fromPort)), To: t.EndpointString(endpoint(in, ar.to, ar.toPort)),
				LoadGbps: round9(ev.arcLoad[ai]), CapacityGbps: round9(finite(ar.cap))})
		}
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
	for _, r := range res {
		l := r.load(rate)
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
	fmt.Fprintln(tw)
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
