package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// solvePlan solves a shipped topology (topologies/NAME.yaml) with algo for
// the jobs in workloads/jobs/JOBS.yaml, or the default job when jobs is "".
func solvePlan(t *testing.T, topology, jobs, algo string) (*topo.Topology, *solver.Plan) {
	t.Helper()
	root := repo.RootOrFail(t)
	tp, err := topo.Load(filepath.Join(root, "topologies", topology+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var js []workload.Job
	if jobs == "" {
		js, err = workload.Default(tp)
	} else {
		js, err = workload.Load(filepath.Join(root, "workloads", "jobs", jobs+".yaml"), tp)
	}
	if err != nil {
		t.Fatal(err)
	}
	return tp, solveJobs(t, tp, js, algo)
}

// solveJobs solves jobs on tp with algo.
func solveJobs(t *testing.T, tp *topo.Topology, jobs []workload.Job, algo string) *solver.Plan {
	t.Helper()
	in, err := solver.NewInstance(tp, jobs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := solver.Solve(context.Background(), in, algo, solver.Options{Seed: 1, LP: lp.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// testbedPlan solves the paper's testbed (topologies/testbed.yaml, one job
// of all eight workers) with algo.
func testbedPlan(t *testing.T, algo string) (*topo.Topology, *solver.Plan) {
	t.Helper()
	return solvePlan(t, "testbed", "", algo)
}

// deploymentNetwork wires the deployment's switches as the topology's links
// do, each an engine switch in lockstep with the reference model.
func deploymentNetwork(t *testing.T, tp *topo.Topology, d *Deployment, grads [][]map[uint32][]int32) (*gradproto.Network, []*EngineFabric, []*gradproto.Switch) {
	t.Helper()
	prog := compileForEngine(t, Build{})
	n := &gradproto.Network{Links: map[gradproto.Attach]gradproto.Attach{}, Clock: gradproto.NewClock()}
	index := map[string]int{}
	var engines []*EngineFabric
	var models []*gradproto.Switch
	for i, s := range d.Switches {
		index[s.Name] = i
		eng, model := newPair(t, prog, s.Config, Build{}, n.Clock)
		engines, models = append(engines, eng), append(models, model)
		n.Switches = append(n.Switches, &lockstep{eng: eng, model: model})
	}
	attach := func(host string) gradproto.Attach {
		for _, l := range tp.LinksOf(host) {
			if peer, ok := l.Peer(host); ok {
				return gradproto.Attach{Switch: index[peer.Node], Port: uint16(peer.Port)}
			}
		}
		t.Fatalf("host %s has no link", host)
		return gradproto.Attach{}
	}
	for _, l := range tp.Links {
		a, aok := index[l.A.Node]
		b, bok := index[l.B.Node]
		if aok && bok {
			n.Links[gradproto.Attach{Switch: a, Port: uint16(l.A.Port)}] = gradproto.Attach{Switch: b, Port: uint16(l.B.Port)}
		}
	}
	for j := range d.Jobs {
		jd := &d.Jobs[j]
		job := &gradproto.Job{Plan: &jd.Plan, PS: attach(jd.PS), Grads: grads[j]}
		for _, w := range jd.Workers {
			job.Workers = append(job.Workers, attach(w))
		}
		n.Jobs = append(n.Jobs, job)
	}
	return n, engines, models
}

// TestSolverPlansRunOnEngineSwitchesWiredLikeTheTopology turns the
// solver's plans into switch configuration and runs the jobs over engine
// switches wired like the topology — the paper's testbed with one job, and
// Fig. 1's network with two jobs whose PSs differ: every worker gets the
// exact sums, exactly the switches the plan names aggregate, and a loss
// anywhere is recovered from.
func TestSolverPlansRunOnEngineSwitchesWiredLikeTheTopology(t *testing.T) {
	// ATP is left out: on the testbed its plan gives workers 3e-9 shares at
	// s1 and counts them in s1's fan-in (rejected, see
	// TestPlanWhoseFanInDisagreesWithTheSharesIsRejected); its split plan on
	// Fig. 1 has its own test (TestASplitPlanRunsInItsShares).
	for _, sc := range []struct {
		topology, jobs string
		algos          []string
	}{
		{"testbed", "", []string{solver.AlgoGRIDPaths, solver.AlgoGRID, solver.AlgoSwitchML, solver.AlgoGeryon}},
		{"paper-fig1", "fig1-two-jobs", []string{solver.AlgoGRIDPaths, solver.AlgoGRID, solver.AlgoGRIDExact, solver.AlgoSwitchML, solver.AlgoGeryon}},
	} {
		for _, algo := range sc.algos {
			t.Run(sc.topology+"/"+algo, func(t *testing.T) {
				tp, p := solvePlan(t, sc.topology, sc.jobs, algo)
				d, err := FromSolverPlan(tp, p, PlanOptions{ReclaimMicros: uint64(reclaimTime.Microseconds())})
				if err != nil {
					t.Fatal(err)
				}
				checkDeploymentFollowsPlan(t, p, d)
				rng := rand.New(rand.NewPCG(3, 4))
				var grads [][]map[uint32][]int32
				for _, j := range d.Jobs {
					grads = append(grads, gradproto.RandomGradients(rng, len(j.Workers), 3, 32, false))
				}
				for lose := -1; ; lose += 7 {
					n, _, models := deploymentNetwork(t, tp, d, grads)
					rep, err := n.Run(gradproto.RunOptions{Seed: uint64(lose + 2), Lose: lose, MaxRounds: 60})
					name := fmt.Sprintf("losing transmission %d (%s)", lose, rep.Lost)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if lose == -1 {
						checkAggregationSites(t, p, d, models)
					}
					for i, m := range models {
						requireNoActiveUnit(t, fmt.Sprintf("%s, switch %s", name, d.Switches[i].Name), m)
					}
					if lose >= rep.Transmissions {
						break
					}
				}
			})
		}
	}
}

// checkDeploymentFollowsPlan checks the configuration against the plan's
// own rules: aggregations, gradient routes, result groups and the workers'
// nodes.
func checkDeploymentFollowsPlan(t *testing.T, p *solver.Plan, d *Deployment) {
	t.Helper()
	jobID := map[string]uint16{}
	for i, j := range p.Jobs {
		jobID[j.Name] = uint16(i + 1)
		for wi, w := range j.Workers {
			if m := d.Jobs[i].Plan.Members[wi]; int(m.Node) != w.Shares[0].NodeID {
				t.Errorf("job %s worker %s: node %d, plan says %d", j.Name, w.Host, m.Node, w.Shares[0].NodeID)
			}
		}
	}
	for _, sp := range p.Switches {
		s, ok := d.Switch(sp.Name)
		if !ok {
			t.Fatalf("no configuration for %s", sp.Name)
		}
		cfg := s.Config
		if len(cfg.Aggregations) != len(sp.Aggregate) {
			t.Errorf("%s: %d aggregations, plan has %d", sp.Name, len(cfg.Aggregations), len(sp.Aggregate))
		}
		for i, a := range sp.Aggregate {
			if i < len(cfg.Aggregations) {
				if g := cfg.Aggregations[i]; int(g.FanIn) != a.FanIn || int(g.Node) != s.ID || g.Job != jobID[a.Job] {
					t.Errorf("%s: aggregation %+v for plan rule %+v", sp.Name, g, a)
				}
			}
		}
		if len(cfg.GradRoutes) != len(sp.Forward) {
			t.Errorf("%s: %d grad_route entries, plan has %d forward rules", sp.Name, len(cfg.GradRoutes), len(sp.Forward))
		}
		for i, f := range sp.Forward {
			if i < len(cfg.GradRoutes) {
				if g := cfg.GradRoutes[i]; g.Job != jobID[f.Job] || int(g.Node) != f.NodeID || int(g.Port) != f.OutPort {
					t.Errorf("%s: grad_route %+v for plan rule %+v", sp.Name, g, f)
				}
			}
		}
		if len(cfg.ResultGroups) != len(sp.Multicast) {
			t.Errorf("%s: %d result groups, plan has %d multicast rules", sp.Name, len(cfg.ResultGroups), len(sp.Multicast))
		}
	}
}

// checkAggregationSites checks that exactly the switches the plan names
// sent partial sums, job by job.
func checkAggregationSites(t *testing.T, p *solver.Plan, d *Deployment, models []*gradproto.Switch) {
	t.Helper()
	for i, m := range models {
		sp := p.Switches[i]
		if sp.Name != d.Switches[i].Name {
			t.Fatalf("switch %d is %s in the plan, %s in the deployment", i, sp.Name, d.Switches[i].Name)
		}
		for ji, j := range p.Jobs {
			emitted := uint64(0)
			if st := m.Stats[uint16(ji+1)]; st != nil {
				emitted = st[gradproto.EvEmitted]
			}
			aggregates := slices.ContainsFunc(sp.Aggregate, func(a solver.AggregateRule) bool { return a.Job == j.Name })
			if aggregates != (emitted > 0) {
				t.Errorf("%s, job %s: plan aggregates here: %v, partial sums sent: %d", sp.Name, j.Name, aggregates, emitted)
			}
		}
	}
}

// clonePlan deep-copies a plan so a test can break it.
func clonePlan(t *testing.T, p *solver.Plan) *solver.Plan {
	t.Helper()
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var c solver.Plan
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestPlanWhoseFanInDisagreesWithTheSharesIsRejected(t *testing.T) {
	tp, p := testbedPlan(t, solver.AlgoSwitchML)
	bad := clonePlan(t, p)
	bad.Switches[0].Aggregate[0].FanIn++
	_, err := FromSolverPlan(tp, bad, PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), "switches[0] (s1).aggregate[0]: fan_in 3 for job job1, but 2 of its workers' shares name s1") {
		t.Fatalf("got %v", err)
	}
}

func TestPlansTheDataPlaneCannotFollowAreRejectedNamingTheField(t *testing.T) {
	tp, p := testbedPlan(t, solver.AlgoGRID)
	for _, tc := range []struct {
		name   string
		break_ func(p *solver.Plan)
		want   string
	}{
		{"node id that is not the switch's", func(p *solver.Plan) { p.Jobs[0].Workers[0].Shares[0].NodeID = 7 },
			"jobs[0] (job1).workers[0] (w1).shares[0]: node_id 7 of s1, whose topology id is 1"},
		{"two ports for one worker", func(p *solver.Plan) {
			f := p.Switches[1].Forward
			p.Switches[1].Forward = append(f, solver.ForwardRule{Job: f[0].Job, Worker: f[0].Worker, Node: f[0].Node, NodeID: f[0].NodeID, OutPort: 1})
		}, "switch s2: grad_routes[3]: job 1 node 1 worker 10.0.3.1 already in grad_routes[0]"},
		{"forward rule for a host outside the job", func(p *solver.Plan) { p.Switches[1].Forward[0].Worker = "ps" },
			`switches[1] (s2).forward[0]: worker "ps" is not a worker of job job1`},
		{"unknown port", func(p *solver.Plan) { p.Switches[2].Multicast[0].OutPorts[0] = 42 },
			"switches[2] (s3).multicast[0].out_ports: s3 has no port 42"},
		{"unknown job", func(p *solver.Plan) { p.Switches[0].Streams[0].Job = "job9" },
			`switches[0] (s1).streams[0]: job "job9" is not in the plan's jobs`},
		{"two routes to the PS", func(p *solver.Plan) { p.Switches[0].Streams[0].OutPort = 1 },
			"switches[0] (s1).streams[0].out_port: port 1 towards PS 10.0.9.1, but switches[0] (s1).aggregate[0].out_port says port 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := clonePlan(t, p)
			tc.break_(bad)
			_, err := FromSolverPlan(tp, bad, PlanOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestCapacityMeterFollowsTheScaledSwitchCapacity(t *testing.T) {
	tp, p := testbedPlan(t, solver.AlgoGRIDPaths)
	d, err := FromSolverPlan(tp, p, PlanOptions{CapacityScale: 1e-3, Burst: 8})
	if err != nil {
		t.Fatal(err)
	}
	// 100 Gbps scaled to 100 Mbps, in frames of 190 bytes.
	want := 100e6 / (8 * 190)
	for _, s := range d.Switches {
		c := s.Config.Capacity
		if c == nil || c.Burst != 8 || c.PacketsPerSecond < want*0.999 || c.PacketsPerSecond > want*1.001 {
			t.Errorf("%s: capacity %+v, want %.0f fragments/s, burst 8", s.Name, c, want)
		}
	}
	// Sized by the streams a switch aggregates or by time, whichever is
	// more: 100 Mbps is 65,790 fragments a second, 66 in a millisecond;
	// at 1e-6, 66 a second, under 2 per stream.
	for _, tc := range []struct {
		scale float64
		burst func(streams uint32) uint32
	}{{1e-3, func(uint32) uint32 { return 66 }}, {1e-6, func(n uint32) uint32 { return max(1, 2*n) }}} {
		d, err := FromSolverPlan(tp, p, PlanOptions{CapacityScale: tc.scale, BurstPerStream: 2, BurstTime: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range d.Switches {
			streams := uint32(0)
			for _, a := range s.Config.Aggregations {
				streams += uint32(a.FanIn)
			}
			if c := s.Config.Capacity; c == nil || c.Burst != tc.burst(streams) {
				t.Errorf("scale %g: %s aggregating %d streams: capacity %+v, want burst %d", tc.scale, s.Name, streams, c, tc.burst(streams))
			}
		}
	}
	d, err = FromSolverPlan(tp, p, PlanOptions{Values: 64, CapacityScale: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	if c, want := d.Switches[0].Config.Capacity, 100e6/(8*318); c == nil || c.Burst != 64 || c.PacketsPerSecond < want*0.999 || c.PacketsPerSecond > want*1.001 {
		t.Errorf("64 values: capacity %+v, want %.0f fragments/s, burst 64", c, want)
	}
	if v := d.Jobs[0].Plan.Values; v != 64 {
		t.Errorf("64 values: the job's plan has %d", v)
	}
	d, err = FromSolverPlan(tp, p, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := d.Switches[0].Config.Capacity; c != nil {
		t.Errorf("without a scale the meter is configured: %+v", c)
	}
	if _, err := FromSolverPlan(tp, p, PlanOptions{Values: 48}); err == nil || !strings.Contains(err.Error(), "48 values per packet") {
		t.Errorf("48 values: %v", err)
	}
}

func TestLoadDeploymentNamesThePlanFileAndPosition(t *testing.T) {
	tp, p := testbedPlan(t, solver.AlgoGRIDPaths)
	dir := t.TempDir()
	topoPath := filepath.Join(repo.RootOrFail(t), "topologies", "testbed.yaml")
	good := filepath.Join(dir, "plan.json")
	f, err := os.Create(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d, err := LoadDeployment(topoPath, good, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want, err := FromSolverPlan(tp, p, PlanOptions{}); err != nil || !reflect.DeepEqual(d, want) {
		t.Fatalf("loaded deployment differs from the converted plan (%v)", err)
	}

	for _, tc := range []struct{ name, content, want string }{
		{"syntax error", "{\n  \"algorithm\": \"grid\",\n  \"jobs\": [,]\n}\n", "bad.json:3:12: invalid character ','"},
		{"wrong type", "{\n  \"jobs\": [{\"workers\": [{\"shares\": [{\"fraction\": \"all\"}]}]}]\n}\n", "bad.json:2:"},
		{"other topology", `{"topology": "fat-tree-k4", "jobs": []}`, `bad.json: topology: the plan is for topology "fat-tree-k4", not "testbed"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(dir, "bad.json")
			if err := os.WriteFile(bad, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadDeployment(topoPath, bad, PlanOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// Multicast rules that retrace every worker's path copy results where two
// paths cross a switch in different directions, and can loop (a1->e1->a1->
// c2->a3->c1->a1 on fattree-k4): such a plan is refused, naming the rules.
func TestPlanWhoseResultsWouldCopyOrLoopIsRejected(t *testing.T) {
	tp, p := testbedPlan(t, solver.AlgoGRIDPaths)
	if _, err := FromSolverPlan(tp, p, PlanOptions{}); err != nil {
		t.Fatalf("the solver's own plan: %v", err)
	}
	// s2 also sends the job's results on to s3, which already gets them from s1.
	bad := clonePlan(t, p)
	var s2, s3 int
	for i, s := range bad.Switches {
		switch s.Name {
		case "s2":
			s2 = i
		case "s3":
			s3 = i
		}
	}
	m := &bad.Switches[s2].Multicast[0]
	m.OutPorts = append(m.OutPorts, 5) // s2:p5 leads to s3:p5
	bad.Switches[s3].Multicast = append(bad.Switches[s3].Multicast, solver.MulticastRule{Job: m.Job, InPort: 5, OutPorts: []int{4}})
	_, err := FromSolverPlan(tp, bad, PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), "a result reaches switch s") || !strings.Contains(err.Error(), "copy or loop") {
		t.Fatalf("got %v, want the copy named", err)
	}
	// A worker the rules forget gets no result.
	bad = clonePlan(t, p)
	m = &bad.Switches[s3].Multicast[0]
	m.OutPorts = m.OutPorts[1:]
	_, err = FromSolverPlan(tp, bad, PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), "the multicast rules deliver each result 0 times, want once") {
		t.Fatalf("got %v, want the forgotten worker named", err)
	}
}

// TestASplitPlanRunsInItsShares deploys ATP's plan for Fig. 1, which
// splits w1..w4 over s1 (12/13 of their fragments, all s1's capacity
// allows) and s3 (the rest), and runs it over engine switches wired like
// the topology: every worker gets the exact sums, each fragment of a split
// worker is aggregated at the node its class names, and s3 counts the
// fan-in of each class under its own node id.
func TestASplitPlanRunsInItsShares(t *testing.T) {
	tp, p := solvePlan(t, "paper-fig1", "", solver.AlgoATP)
	split := 0
	for _, w := range p.Jobs[0].Workers {
		if len(w.Shares) > 1 {
			split++
		}
	}
	if split != 4 {
		t.Fatalf("ATP's plan splits %d workers, this test expects w1..w4 split over s1 and s3", split)
	}
	d, err := FromSolverPlan(tp, p, PlanOptions{ReclaimMicros: uint64(reclaimTime.Microseconds())})
	if err != nil {
		t.Fatalf("the split plan is refused: %v", err)
	}
	plan := &d.Jobs[0].Plan
	if len(plan.Classes) != 2 || math.Abs(plan.Classes[0]-12.0/13) > 1e-3 {
		t.Fatalf("classes %v, want the cut at w1's share at s1 (12/13) and 1", plan.Classes)
	}
	// In the second class w1..w4 and w7, w8 meet at s3 under a node id of
	// its own; in the first s3 aggregates w7 and w8 alone.
	s3, _ := d.Switch("s3")
	fanIns := map[uint16]uint16{}
	for _, a := range s3.Config.Aggregations {
		fanIns[a.Node] = a.FanIn
	}
	alias := plan.Members[0].Placements[1].Node
	if len(fanIns) != 2 || fanIns[3] != 2 || fanIns[alias] != 6 || alias == 3 {
		t.Errorf("s3 aggregates %v (node id: fan-in), want 3: 2 and a second id %d: 6", fanIns, alias)
	}
	const fragments = 60
	rng := rand.New(rand.NewPCG(5, 6))
	grads := [][]map[uint32][]int32{gradproto.RandomGradients(rng, len(d.Jobs[0].Workers), fragments, 32, false)}
	shares := map[uint16]int{}
	for f := range grads[0][0] {
		shares[plan.Placement(0, f).Node]++
	}
	if shares[1] < 52 || shares[1] > 58 || shares[alias] != fragments-shares[1] {
		t.Errorf("w1's %d fragments by node %v, want about 12/13 at s1 (id 1), the rest at s3's id %d", fragments, shares, alias)
	}
	for _, lose := range []int{-1, 11, 200} {
		n, _, models := deploymentNetwork(t, tp, d, grads)
		rep, err := n.Run(gradproto.RunOptions{Seed: uint64(lose + 2), Lose: lose, MaxRounds: 80})
		if err != nil {
			t.Fatalf("losing transmission %d (%s): %v", lose, rep.Lost, err)
		}
		if lose == -1 {
			checkAggregationSites(t, p, d, models)
			s1 := models[0].Stats[1][gradproto.EvEmitted]
			if s1 != uint64(shares[1]) {
				t.Errorf("s1 emitted %d partial sums, want one per fragment of the first class (%d); events %v", s1, shares[1], models[0].Stats[1])
			}
		}
	}
}
