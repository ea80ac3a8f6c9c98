package solver

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
	"github.com/grid-ina/grid/harness/workload/workloadtest"
)

// wire is a plan read back from its JSON form alone, the way a switch and a
// link see it: which directed link each packet takes.
type wire struct {
	t *topo.Topology
	// peer[switch][port] is the endpoint at the far end of a switch port.
	peer map[topo.Endpoint]topo.Endpoint
	bw   map[[2]string]float64 // capacity of a link direction (From, To), Gbps, +Inf when unlimited
}

func newWire(t *topo.Topology) *wire {
	w := &wire{t: t, peer: map[topo.Endpoint]topo.Endpoint{}, bw: map[[2]string]float64{}}
	for _, l := range t.Links {
		w.peer[l.A], w.peer[l.B] = l.B, l.A
		c := gbps(l.Bandwidth)
		w.bw[[2]string{t.EndpointString(l.A), t.EndpointString(l.B)}] = c
		w.bw[[2]string{t.EndpointString(l.B), t.EndpointString(l.A)}] = c
	}
	return w
}

// dir names the link direction leaving e.
func (w *wire) dir(e topo.Endpoint) [2]string {
	return [2]string{w.t.EndpointString(e), w.t.EndpointString(w.peer[e])}
}

// replayResults multicasts one result of each job from its PS through the
// plan's multicast rules (a switch without a rule for the port a result
// arrives on drops it: results are addressed to 255.255.255.255). It
// returns how often each worker got it, the packets per link direction,
// and an error on a loop (a switch reached twice by one job's result).
func (w *wire) replayResults(p *Plan, j int) (map[string]int, map[[2]string]int, error) {
	jp := p.Jobs[j]
	rules := map[topo.Endpoint][]int{} // (switch, in port) -> out ports
	for _, s := range p.Switches {
		for _, m := range s.Multicast {
			if m.Job == jp.Name {
				rules[topo.Endpoint{Node: s.Name, Port: m.InPort}] = m.OutPorts
			}
		}
	}
	got := map[string]int{}
	sent := map[[2]string]int{}
	visits := map[string]int{}
	// The PS sends out of its first interface (its gateway).
	first := topo.Endpoint{Node: jp.PS, Port: math.MaxInt}
	for _, l := range w.t.LinksOf(jp.PS) {
		for _, e := range []topo.Endpoint{l.A, l.B} {
			if e.Node == jp.PS && e.Port < first.Port {
				first = e
			}
		}
	}
	queue := []topo.Endpoint{first} // endpoints results leave from
	for len(queue) > 0 {
		from := queue[0]
		queue = queue[1:]
		sent[w.dir(from)]++
		to := w.peer[from]
		if w.t.Node(to.Node).Kind == topo.KindHost {
			got[to.Node]++
			continue
		}
		if visits[to.Node]++; visits[to.Node] > 1 {
			return got, sent, fmt.Errorf("job %s: result reaches switch %s twice (a loop or a copy)", jp.Name, to.Node)
		}
		for _, op := range rules[to] {
			queue = append(queue, topo.Endpoint{Node: to.Node, Port: op})
		}
	}
	return got, sent, nil
}

// loads recomputes every link direction's load from the plan's JSON at its
// workers' rates: gradients along each share's path, partial sums along
// each aggregator's path at its stream rate, results along sent at the
// job's fastest worker's rate. It also counts each kind's packets.
func (w *wire) loads(p *Plan, results []map[[2]string]int) (map[[2]string]float64, map[[2]string]map[string]*LinkPackets) {
	load := map[[2]string]float64{}
	pk := map[[2]string]map[string]*LinkPackets{}
	count := func(d [2]string, job string) *LinkPackets {
		if pk[d] == nil {
			pk[d] = map[string]*LinkPackets{}
		}
		if pk[d][job] == nil {
			pk[d][job] = &LinkPackets{Job: job}
		}
		return pk[d][job]
	}
	// walk follows hops, starting with the link into the first hop; last is where the final hop sends.
	walk := func(hops []Hop, add func(d [2]string)) {
		for _, h := range hops {
			add(w.dir(w.peer[topo.Endpoint{Node: h.Switch, Port: h.InPort}]))
		}
		if n := len(hops); n > 0 && hops[n-1].OutPort != 0 {
			add(w.dir(topo.Endpoint{Node: hops[n-1].Switch, Port: hops[n-1].OutPort}))
		}
	}
	outPort := map[[2]string]int{} // (job, switch) -> aggregate out port
	for _, s := range p.Switches {
		for _, a := range s.Aggregate {
			outPort[[2]string{a.Job, s.Name}] = a.OutPort
		}
	}
	for j, jp := range p.Jobs {
		fastest := 0.0
		for _, wp := range jp.Workers {
			fastest = math.Max(fastest, wp.RateGbps)
			for _, s := range wp.Shares {
				walk(s.Path, func(d [2]string) {
					load[d] += s.Fraction * wp.RateGbps
					count(d, jp.Name).Gradients += s.Fraction
				})
			}
		}
		for _, a := range jp.Aggregators {
			add := func(d [2]string) {
				load[d] += a.StreamGbps
				count(d, jp.Name).PartialSums++
			}
			if len(a.Path) == 0 {
				add(w.dir(topo.Endpoint{Node: a.Switch, Port: outPort[[2]string{jp.Name, a.Switch}]}))
			} else {
				walk(a.Path, add)
			}
		}
		for d, n := range results[j] {
			load[d] += float64(n) * fastest
			count(d, jp.Name).Results += n
		}
	}
	return load, pk
}

// checkPlanOnTheWire replays p's rules: every worker gets each result
// exactly once, nothing loops, every link direction carries at most its
// capacity at the plan's rates, and the plan's links say what the wire carries.
func checkPlanOnTheWire(t *testing.T, name string, tp *topo.Topology, p *Plan) {
	t.Helper()
	w := newWire(tp)
	var results []map[[2]string]int
	for j, jp := range p.Jobs {
		got, sent, err := w.replayResults(p, j)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, wp := range jp.Workers {
			if got[wp.Host] != 1 {
				t.Errorf("%s: job %s: worker %s gets each result %d times, want once", name, jp.Name, wp.Host, got[wp.Host])
			}
			delete(got, wp.Host)
		}
		for h, n := range got {
			t.Errorf("%s: job %s: host %s, not a worker of the job, gets %d copies of its results", name, jp.Name, h, n)
		}
		results = append(results, sent)
	}
	load, pk := w.loads(p, results)
	for d, l := range load {
		if c := w.bw[d]; l > c*(1+1e-6) {
			t.Errorf("%s: link %s->%s carries %.6g Gbps at the plan's rates (lambda %.4g), over its %.4g Gbps", name, d[0], d[1], l, p.LambdaGbps, c)
		}
	}
	planned := map[[2]string]LinkLoad{}
	for _, l := range p.Links {
		planned[[2]string{l.From, l.To}] = l
	}
	for d, l := range load {
		pl, ok := planned[d]
		if !ok && l > 0 {
			t.Errorf("%s: link %s->%s carries %.4g Gbps, which the plan's links leave out", name, d[0], d[1], l)
			continue
		}
		if math.Abs(pl.LoadGbps-l) > 1e-6*(1+l) {
			t.Errorf("%s: link %s->%s: plan says %.6g Gbps, the wire carries %.6g", name, d[0], d[1], pl.LoadGbps, l)
		}
		for _, lp := range pl.Packets {
			want := pk[d][lp.Job]
			if want == nil || math.Abs(want.Gradients-lp.Gradients) > 1e-6 || want.PartialSums != lp.PartialSums || want.Results != lp.Results {
				t.Errorf("%s: link %s->%s job %s: plan says %+v packets per fragment, the wire carries %+v", name, d[0], d[1], lp.Job, lp, want)
			}
		}
	}
	for d := range planned {
		if _, ok := load[d]; !ok {
			t.Errorf("%s: the plan lists link %s->%s, which carries nothing", name, d[0], d[1])
		}
	}
	// What a monitor should count: job i sends i+1 fragments.
	frags := map[string]int{}
	for i, jp := range p.Jobs {
		frags[jp.Name] = i + 1
	}
	expected := p.ExpectedPackets(frags)
	for d, byJob := range pk {
		want := 0.0
		for job, c := range byJob {
			want += float64(frags[job]) * c.Total()
		}
		if math.Abs(expected[d]-want) > 1e-6 {
			t.Errorf("%s: link %s->%s: ExpectedPackets says %g, the wire carries %g", name, d[0], d[1], expected[d], want)
		}
	}
	if len(expected) != len(pk) {
		t.Errorf("%s: ExpectedPackets lists %d link directions, the wire uses %d", name, len(expected), len(pk))
	}
}

// TestEveryPlanDeliversEachResultOnceWithinCapacityOnGeneratedFabrics
// solves random fabrics (fat-trees and leaf-spines, random programmable
// sets, one to three jobs) with every algorithm and several seeds, and
// replays every plan's rules on the wire.
func TestEveryPlanDeliversEachResultOnceWithinCapacityOnGeneratedFabrics(t *testing.T) {
	seeds := uint64(12)
	if testing.Short() {
		seeds = 4
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		tp, jobs := workloadtest.RandomFabric(t, seed, 0x9a1d)
		in, err := NewInstance(tp, jobs)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, algo := range Algorithms() {
			p, err := Solve(context.Background(), in, algo, Options{Seed: seed, LP: lp.Auto})
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, algo, err)
			}
			checkPlanOnTheWire(t, fmt.Sprintf("%s with %d jobs, seed %d, %s", tp.Name, len(jobs), seed, algo), tp, p)
		}
	}
}

// TestShippedFabricsPlansDeliverEachResultOnce covers the plans the issue
// found copying and looping: grid on fattree-k4 (seed 10 looped
// a1->e1->a1->c2->a3->c1->a1) and grid-paths on the testbed (seed 20 put
// 133 Gbps on s3->s1).
func TestShippedFabricsPlansDeliverEachResultOnce(t *testing.T) {
	ft, err := topo.FatTree(4, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range []*topo.Topology{ft, topo.Testbed(), topo.PaperFig1()} {
		jobs, err := workload.Default(tp)
		if err != nil {
			t.Fatal(err)
		}
		in, err := NewInstance(tp, jobs)
		if err != nil {
			t.Fatal(err)
		}
		for _, algo := range []string{AlgoGRID, AlgoGRIDPaths} {
			for _, seed := range []uint64{10, 20, 3} {
				p, err := Solve(context.Background(), in, algo, Options{Seed: seed, LP: lp.Embedded})
				if err != nil {
					t.Fatal(err)
				}
				checkPlanOnTheWire(t, fmt.Sprintf("%s %s seed %d", tp.Name, algo, seed), tp, p)
			}
		}
	}
}

// TestMultiJobRGRIAIsTheSameOnEveryLPBackend solves R-GRIA for several
// jobs sharing switches with the embedded simplex and with CBC: the
// relaxation has many optimal vertices (two jobs can trade switches), and
// the plan must not depend on which one a backend finds.
func TestMultiJobRGRIAIsTheSameOnEveryLPBackend(t *testing.T) {
	if !lp.CBCAvailable() {
		t.Skip("cbc not installed (apt-get install coinor-cbc): one backend cannot disagree with itself")
	}
	compared := 0
	for seed := uint64(1); seed <= 24; seed++ {
		tp, jobs := workloadtest.RandomFabric(t, seed, 0x9a1d)
		if len(jobs) < 2 {
			continue
		}
		in, err := NewInstance(tp, jobs)
		if err != nil {
			t.Fatal(err)
		}
		var plans []*Plan
		for _, be := range []lp.Backend{lp.Embedded, lp.CBC} {
			p, err := Solve(context.Background(), in, AlgoGRID, Options{Seed: seed, LP: be})
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, be, err)
			}
			plans = append(plans, p)
		}
		compared++
		a, b := plans[0], plans[1]
		if math.Abs(a.LambdaGbps-b.LambdaGbps) > 1e-6*a.LambdaGbps || math.Abs(*a.IntendedLambdaGbps-*b.IntendedLambdaGbps) > 1e-6**a.IntendedLambdaGbps {
			t.Errorf("seed %d (%d jobs): embedded lambda %g (intended %g), cbc %g (intended %g)", seed, len(jobs), a.LambdaGbps, *a.IntendedLambdaGbps, b.LambdaGbps, *b.IntendedLambdaGbps)
			continue
		}
		for j := range a.Jobs {
			for w := range a.Jobs[j].Workers {
				if x, y := a.Jobs[j].Workers[w].Shares[0].Node, b.Jobs[j].Workers[w].Shares[0].Node; x != y {
					t.Errorf("seed %d: job %s worker %s aggregated at %s with the embedded LP, at %s with CBC", seed, a.Jobs[j].Name, a.Jobs[j].Workers[w].Host, x, y)
				}
			}
		}
	}
	if compared < 5 {
		t.Fatalf("only %d multi-job instances compared", compared)
	}
}
