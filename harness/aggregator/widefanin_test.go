package aggregator

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// wideLeafSpine is a leaf-spine with 70 and 70 hosts under its two leaves:
// 139 workers, the PS (h140) under lf2, and a plan of algo for them.
func wideLeafSpine(t *testing.T, algo string) (*topo.Topology, *solver.Plan) {
	t.Helper()
	tp, err := topo.LeafSpine(1, 2, 140)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := workload.Default(tp)
	if err != nil {
		t.Fatal(err)
	}
	return tp, solveJobs(t, tp, jobs, algo)
}

// TestAPSWithMoreThan64WorkersTakesThemUnderOneNodeIDPer64 deploys
// Geryon's plan for 139 workers, all aggregated at the PS, more than a
// packet's 64-bit bitmap has slots, and the same plan with ten workers
// split half and half between their leaf switch and the PS (two classes of
// fragments, in which the PS has 129 and 139 workers). The plans are not
// refused; the PS has one node id per 64 of its workers (its own, then its
// aliases, the same in every class), none a switch's; every worker gets
// the exact sums over engine switches wired like the topology, without
// loss and after a lost frame, and without loss the PS model neither
// discards nor repeats a contribution.
func TestAPSWithMoreThan64WorkersTakesThemUnderOneNodeIDPer64(t *testing.T) {
	tp, geryon := wideLeafSpine(t, solver.AlgoGeryon)
	split := clonePlan(t, geryon)
	lf1 := &split.Switches[1]
	if lf1.Name != "lf1" {
		t.Fatalf("switch 1 is %s, want lf1", lf1.Name)
	}
	const splitWorkers = 10
	for wi := range splitWorkers {
		w := &split.Jobs[0].Workers[wi]
		w.Shares[0].Fraction = 0.5
		w.Shares = append([]solver.Share{{Node: "lf1", NodeID: lf1.ID, Fraction: 0.5,
			Path: []solver.Hop{{Switch: "lf1", InPort: wi + 1}}}}, w.Shares...)
	}
	lf1.Aggregate = append(lf1.Aggregate, solver.AggregateRule{Job: "job1", FanIn: splitWorkers, OutPort: lf1.Forward[0].OutPort})
	for _, tc := range []struct {
		name string
		plan *solver.Plan
		// want is how many workers each node aggregates, per class.
		want []map[string]int
	}{
		{"geryon", geryon, []map[string]int{{"h140": 139}}},
		{"split", split, []map[string]int{{"h140": 129, "lf1": 10}, {"h140": 139}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := FromSolverPlan(tp, tc.plan, PlanOptions{ReclaimMicros: uint64(reclaimTime.Microseconds())})
			if err != nil {
				t.Fatalf("the plan is refused: %v", err)
			}
			plan := &d.Jobs[0].Plan
			if len(plan.PSAliases) != 2 {
				t.Errorf("PS aliases %v, want two (139 workers: 64 under the PS's own id, 64 and 11 under aliases)", plan.PSAliases)
			}
			checkWideNodes(t, tp, d, tc.want)
			runWide(t, tp, tc.plan, d)
		})
	}
}

// runWide runs the deployment's job, 20 fragments per worker, over engine
// switches wired like the topology, without loss and losing its 500th
// transmission: every worker gets the exact sums (Network.Run checks), the
// plan's switches and no others aggregate, and without loss the PS model
// neither discards nor repeats a contribution.
func runWide(t *testing.T, tp *topo.Topology, p *solver.Plan, d *Deployment) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	grads := [][]map[uint32][]int32{gradproto.RandomGradients(rng, len(d.Jobs[0].Plan.Members), 20, 32, false)}
	for _, lose := range []int{-1, 500} {
		n, _, models := deploymentNetwork(t, tp, d, grads)
		rep, err := n.Run(gradproto.RunOptions{Seed: uint64(lose + 2), Lose: lose, MaxRounds: 60})
		if err != nil {
			t.Fatalf("losing transmission %d (%s): %v", lose, rep.Lost, err)
		}
		if lose == -1 {
			checkAggregationSites(t, p, d, models)
			if ps := rep.Jobs[0].PS; ps.Overlaps != 0 || ps.Duplicates != 0 {
				t.Errorf("without loss the PS discarded %d overlapping and %d duplicate contributions", ps.Overlaps, ps.Duplicates)
			}
		}
	}
}

// checkWideNodes checks that every node id of the deployment's job is the
// PS's own, one of its aliases or a switch's aggregation entry, never two
// of them and never a topology switch's id under another switch; that a
// switch's entry counts the fan-in of the workers addressing it; and how
// many workers each node aggregates per class (unless want is nil). Bitmap slots are 0..63
// (Expected), so no node id carries more than 64 workers.
func checkWideNodes(t *testing.T, tp *topo.Topology, d *Deployment, want []map[string]int) {
	t.Helper()
	plan := &d.Jobs[0].Plan
	exp, err := plan.Expected()
	if err != nil {
		t.Fatal(err)
	}
	owner := map[uint16]string{plan.PSNode: d.Jobs[0].PS}
	switchID := map[uint16]string{}
	for _, n := range tp.Switches() {
		switchID[uint16(n.ID)] = n.Name
	}
	for _, a := range plan.PSAliases {
		if sw, ok := switchID[a]; ok {
			t.Errorf("PS alias %d is switch %s's topology id", a, sw)
		}
		owner[a] = d.Jobs[0].PS
	}
	fanIn := map[uint16]int{}
	for _, s := range d.Switches {
		for _, a := range s.Config.Aggregations {
			if prev, dup := owner[a.Node]; dup {
				t.Errorf("node id %d is %s's and %s's", a.Node, prev, s.Name)
			}
			if sw, ok := switchID[a.Node]; ok && sw != s.Name {
				t.Errorf("%s aggregates under switch %s's topology id %d", s.Name, sw, a.Node)
			}
			owner[a.Node], fanIn[a.Node] = s.Name, int(a.FanIn)
		}
	}
	if want != nil && len(exp) != len(want) {
		t.Fatalf("%d classes, want %d", len(exp), len(want))
	}
	for c, nodes := range exp {
		got := map[string]int{}
		for node, bitmap := range nodes {
			name, ok := owner[node]
			if !ok {
				t.Fatalf("class %d: workers at node id %d, which neither the PS nor a switch has", c, node)
			}
			n := bits.OnesCount64(bitmap)
			if f, ok := fanIn[node]; ok && f != n {
				t.Errorf("class %d: %s counts fan-in %d under node id %d, which %d workers address", c, name, f, node, n)
			}
			got[name] += n
		}
		if want != nil && fmt.Sprint(got) != fmt.Sprint(want[c]) {
			t.Errorf("class %d: workers per node %v, want %v", c, got, want[c])
		}
	}
}

// TestASwitchWithMoreThan64WorkersCountsEachSetOf64InItsOwnUnits deploys
// plans that aggregate more workers at one switch than a bitmap has
// slots: SwitchML's, which aggregates the 70 workers under lf1 at lf1 and
// the 69 under lf2 at lf2, and ATP's, which splits them over classes with
// up to 70 at a leaf or the spine and the rest at the PS. Each switch gets
// one aggregation entry per set of at most 64 workers, each set of one job
// its own unit offset, so two sets of one fragment never share a unit;
// every worker gets the exact sums over engine switches wired like the
// topology, also after a lost frame.
func TestASwitchWithMoreThan64WorkersCountsEachSetOf64InItsOwnUnits(t *testing.T) {
	for _, tc := range []struct {
		algo string
		want []map[string]int
	}{
		{solver.AlgoSwitchML, []map[string]int{{"lf1": 70, "lf2": 69}}},
		{solver.AlgoATP, nil},
	} {
		t.Run(tc.algo, func(t *testing.T) {
			tp, p := wideLeafSpine(t, tc.algo)
			d, err := FromSolverPlan(tp, p, PlanOptions{ReclaimMicros: uint64(reclaimTime.Microseconds())})
			if err != nil {
				t.Fatalf("the plan is refused: %v", err)
			}
			checkWideNodes(t, tp, d, tc.want)
			for _, s := range d.Switches {
				offsets := map[[2]uint32]uint16{}
				for _, a := range s.Config.Aggregations {
					k := [2]uint32{uint32(a.Job), a.UnitOffset}
					if prev, dup := offsets[k]; dup {
						t.Errorf("%s: node ids %d and %d of job %d share unit offset %d", s.Name, prev, a.Node, a.Job, a.UnitOffset)
					}
					offsets[k] = a.Node
				}
			}
			lf1, _ := d.Switch("lf1")
			if len(lf1.Config.Aggregations) < 2 {
				t.Fatalf("lf1 aggregates %+v, want a second node id for its workers beyond 64", lf1.Config.Aggregations)
			}
			runWide(t, tp, p, d)
		})
	}
}

// TestNoPlanForTheLargeShippedTopologiesIsRefused deploys every
// algorithm's plan for fattree-k8 (191 workers) and Geryon's for
// leafspine-60 (499 workers, all at the PS: eight node ids).
func TestNoPlanForTheLargeShippedTopologiesIsRefused(t *testing.T) {
	plans := map[string][]string{"fattree-k8": solver.Algorithms(), "leafspine-60": {solver.AlgoGeryon}}
	for _, topology := range []string{"fattree-k8", "leafspine-60"} {
		for _, algo := range plans[topology] {
			tp, p := solvePlan(t, topology, "", algo)
			d, err := FromSolverPlan(tp, p, PlanOptions{})
			if err != nil {
				t.Errorf("%s, %s: the plan is refused: %v", topology, algo, err)
				continue
			}
			workers := len(d.Jobs[0].Workers)
			if algo == solver.AlgoGeryon && len(d.Jobs[0].Plan.PSAliases) != (workers-1)/gradproto.MaxFanIn {
				t.Errorf("%s, geryon: %d workers at the PS under %d aliases", topology, workers, len(d.Jobs[0].Plan.PSAliases))
			}
		}
	}
}
