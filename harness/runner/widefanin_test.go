package runner

import (
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/controller/controllertest"
	"github.com/grid-ina/grid/harness/p4test/targettest"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
)

// TestGeryonWithMoreThan64WorkersAtThePSVerifiesEverySum runs Geryon on the
// smallest fabric with more workers than a packet's 64-bit bitmap has
// slots: a leaf with 66 hosts under one spine, 65 workers sending every
// fragment to the PS. The PS takes them under two node ids (its own for 64,
// an alias for the 65th), and every worker and the PS verify every sum.
func TestGeryonWithMoreThan64WorkersAtThePSVerifiesEverySum(t *testing.T) {
	controllertest.NeedFabric(t)
	tp, err := topo.LeafSpine(1, 1, 66)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Topology: tp, Program: controllertest.Program(t), Binary: targettest.GridBinary(t), Name: runName(),
		Fragments: 32, Timeout: 500 * time.Millisecond,
		Plans: []*solver.Plan{controllertest.Solve(t, tp, solver.AlgoGeryon)}}
	exp := runOK(t, cfg)
	o := exp.Outcomes[0]
	if o.Refused != "" {
		t.Fatalf("refused: %s", o.Refused)
	}
	if aliases := o.Deployment.Jobs[0].Plan.PSAliases; len(aliases) != 1 {
		t.Errorf("PS aliases %v, want one (64 workers under the PS's own id, one under an alias)", aliases)
	}
	j := o.Jobs[0]
	if j.PS == nil || len(j.Workers) != 65 {
		t.Fatalf("PS report %v, %d worker reports, want 65", j.PS != nil, len(j.Workers))
	}
	for _, r := range append(j.Workers, j.PS) {
		if r.Completed != cfg.Fragments || r.Checked == 0 || r.Mismatch != nil {
			t.Errorf("%s %s completed %d of %d fragments, checked %d, mismatch %v", r.Role, r.Host, r.Completed, cfg.Fragments, r.Checked, r.Mismatch)
		}
	}
	if j.PS.Aggregated != 0 || j.PS.Direct < 65*cfg.Fragments {
		t.Errorf("the PS took %d direct and %d aggregated contributions, want every worker's %d fragments direct", j.PS.Direct, j.PS.Aggregated, cfg.Fragments)
	}
}
