package runner

import (
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/controller/controllertest"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/p4test/targettest"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
)

// TestPlansWithMoreThan64WorkersAtOneNodeVerifyEverySum runs, on the
// smallest fabric with more workers than a packet's 64-bit bitmap has
// slots (a leaf with 66 hosts under one spine: 65 workers and the PS),
// Geryon's plan, which sends every fragment to the PS, and SwitchML's,
// which aggregates all 65 at the leaf. The PS takes Geryon's under two node
// ids (its own for 64, an alias for the 65th); the leaf counts SwitchML's
// under two node ids, each in its own units, and sends two partial sums per
// fragment. Every worker and the PS verify every sum.
func TestPlansWithMoreThan64WorkersAtOneNodeVerifyEverySum(t *testing.T) {
	controllertest.NeedFabric(t)
	tp, err := topo.LeafSpine(1, 1, 66)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Topology: tp, Program: controllertest.Program(t), Binary: targettest.GridBinary(t), Name: runName(),
		Fragments: 32, Timeout: 500 * time.Millisecond}
	for _, algo := range []string{solver.AlgoGeryon, solver.AlgoSwitchML} {
		cfg.Plans = append(cfg.Plans, controllertest.Solve(t, tp, algo))
	}
	exp := runOK(t, cfg)
	for _, o := range exp.Outcomes {
		if o.Refused != "" {
			t.Fatalf("%s refused: %s", o.Algorithm, o.Refused)
		}
		j := o.Jobs[0]
		if j.PS == nil || len(j.Workers) != 65 {
			t.Fatalf("%s: PS report %v, %d worker reports, want 65", o.Algorithm, j.PS != nil, len(j.Workers))
		}
		for _, r := range append(j.Workers, j.PS) {
			if r.Completed != cfg.Fragments || r.Checked == 0 || r.Mismatch != nil {
				t.Errorf("%s: %s %s completed %d of %d fragments, checked %d, mismatch %v", o.Algorithm, r.Role, r.Host, r.Completed, cfg.Fragments, r.Checked, r.Mismatch)
			}
		}
		lf1, _ := o.Deployment.Switch("lf1")
		var emitted uint64
		for _, c := range o.Switches {
			if c.Switch == "lf1" {
				emitted = c.Jobs[j.ID][gradproto.EvEmitted]
			}
		}
		switch o.Algorithm {
		case solver.AlgoGeryon:
			if aliases := o.Deployment.Jobs[0].Plan.PSAliases; len(aliases) != 1 {
				t.Errorf("geryon: PS aliases %v, want one (64 workers under the PS's own id, one under an alias)", aliases)
			}
			if j.PS.Aggregated != 0 || j.PS.Direct < 65*cfg.Fragments {
				t.Errorf("geryon: the PS took %d direct and %d aggregated contributions, want every worker's %d fragments direct", j.PS.Direct, j.PS.Aggregated, cfg.Fragments)
			}
		case solver.AlgoSwitchML:
			if len(lf1.Config.Aggregations) != 2 {
				t.Errorf("switchml: lf1 aggregates %+v, want two node ids (64 workers and 1)", lf1.Config.Aggregations)
			}
			if emitted < 2*uint64(cfg.Fragments) || j.PS.Direct != 0 {
				t.Errorf("switchml: lf1 sent %d partial sums and the PS took %d direct fragments, want two sums per fragment (%d) and none direct", emitted, j.PS.Direct, 2*cfg.Fragments)
			}
		}
	}
}
