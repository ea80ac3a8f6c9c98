package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// testbedPlan solves the paper's testbed (topologies/testbed.yaml, one job
// of all eight workers) with algo.
func testbedPlan(t *testing.T, algo string) (*topo.Topology, *solver.Plan) {
	t.Helper()
	tp, err := topo.Load(filepath.Join(repo.RootOrFail(t), "topologies", "testbed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := workload.Default(tp)
	if err != nil {
		t.Fatal(err)
	}
	in, err := solver.NewInstance(tp, jobs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := solver.Solve(context.Background(), in, algo, solver.Options{Seed: 1, LP: lp.Embedded})
	if err != nil {
		t.Fatal(err)
	}
	return tp, p
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

// TestSolverPlansOfTheTestbedRunOnEngineSwitches turns the solver's plans
// for the paper's testbed into switch configuration and runs a job over
// three engine switches wired like the topology: every worker gets the
// exact sums, exactly the switches the plan names aggregate, and a loss
// anywhere is recovered from.
func TestSolverPlansOfTheTestbedRunOnEngineSwitches(t *testing.T) {
	// ATP is left out: its plan gives workers 3e-9 shares at s1 and counts
	// them in s1's fan-in (see TestPlanWhoseFanInDisagreesWithTheSharesIsRejected).
	for _, algo := range []string{solver.AlgoGRIDPaths, solver.AlgoGRID, solver.AlgoSwitchML, solver.AlgoGeryon} {
		t.Run(algo, func(t *testing.T) {
			tp, p := testbedPlan(t, algo)
			d, err := FromSolverPlan(tp, p, PlanOptions{ReclaimMicros: uint64(reclaimTime.Microseconds())})
			if err != nil {
				t.Fatal(err)
			}
			checkDeploymentFollowsPlan(t, p, d)
			rng := rand.New(rand.NewPCG(3, 4))
			grads := [][]map[uint32][]int32{gradproto.RandomGradients(rng, len(d.Jobs[0].Workers), 3, 32, false)}
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

// checkDeploymentFollowsPlan checks the configuration against the plan's
// own rules: aggregations, gradient routes and result groups.
func checkDeploymentFollowsPlan(t *testing.T, p *solver.Plan, d *Deployment) {
	t.Helper()
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
				if g := cfg.Aggregations[i]; int(g.FanIn) != a.FanIn || int(g.Node) != s.ID || g.Job != 1 {
					t.Errorf("%s: aggregation %+v for plan rule %+v", sp.Name, g, a)
				}
			}
		}
		for _, f := range sp.Forward {
			found := false
			for _, g := range cfg.GradRoutes {
				found = found || (int(g.Node) == f.NodeID && int(g.Port) == f.OutPort)
			}
			if !found {
				t.Errorf("%s: no grad_route for %+v", sp.Name, f)
			}
		}
		if len(cfg.ResultGroups) != len(sp.Multicast) {
			t.Errorf("%s: %d result groups, plan has %d multicast rules", sp.Name, len(cfg.ResultGroups), len(sp.Multicast))
		}
	}
	for wi, w := range p.Jobs[0].Workers {
		if m := d.Jobs[0].Plan.Members[wi]; int(m.Node) != w.Shares[0].NodeID {
			t.Errorf("worker %s: node %d, plan says %d", w.Host, m.Node, w.Shares[0].NodeID)
		}
	}
}

// checkAggregationSites checks that exactly the switches the plan names
// sent partial sums.
func checkAggregationSites(t *testing.T, p *solver.Plan, d *Deployment, models []*gradproto.Switch) {
	t.Helper()
	for i, m := range models {
		sp := p.Switches[i]
		if sp.Name != d.Switches[i].Name {
			t.Fatalf("switch %d is %s in the plan, %s in the deployment", i, sp.Name, d.Switches[i].Name)
		}
		emitted := uint64(0)
		if st := m.Stats[1]; st != nil {
			emitted = st[gradproto.EvEmitted]
		}
		if aggregates := len(sp.Aggregate) > 0; aggregates != (emitted > 0) {
			t.Errorf("%s: plan aggregates here: %v, partial sums sent: %d", sp.Name, aggregates, emitted)
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
		{"worker split over two nodes", func(p *solver.Plan) {
			w := &p.Jobs[0].Workers[0]
			w.Shares[0].Fraction = 0.5
			w.Shares = append(w.Shares, solver.Share{Node: "ps", NodeID: 0, Fraction: 0.5})
		}, "jobs[0] (job1).workers[0] (w1).shares: split over nodes s1 and ps"},
		{"node id that is not the switch's", func(p *solver.Plan) { p.Jobs[0].Workers[0].Shares[0].NodeID = 7 },
			"jobs[0] (job1).workers[0] (w1).shares: node_id 7 of s1, whose topology id is 1"},
		{"two ports for one (job, node)", func(p *solver.Plan) {
			f := p.Switches[1].Forward
			p.Switches[1].Forward = append(f, solver.ForwardRule{Job: f[0].Job, Worker: "w9", Node: f[0].Node, NodeID: f[0].NodeID, OutPort: 1})
		}, "the aggregator routes gradients by (job, node) only"},
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
	d, err = FromSolverPlan(tp, p, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := d.Switches[0].Config.Capacity; c != nil {
		t.Errorf("without a scale the meter is configured: %+v", c)
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
