package runner

import (
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
)

// Every link of the testbed loses 1% of its packets (the switches emulate
// it on their side of each link): grid-paths' plan still verifies every
// sum, and the workers resend about what was lost, never a storm. A lost
// partial sum costs each of its workers a resend and a lost result copy
// on a switch-to-switch link every worker behind it, so about 1% of the
// packet-hops times the fan-in: 8 to 10% of the fragments here (the fixed
// 100 ms timeout resent whole windows, several times the fragments).
func TestTestbedWithOnePercentLossOnEveryLinkVerifiesWithBoundedResends(t *testing.T) {
	cfg := testConfig(t, solver.AlgoGRIDPaths)
	for _, l := range cfg.Topology.Links {
		l.Loss = 1
	}
	cfg.Fragments = 256
	cfg.Timeout = 0 // derived, as grid run does it
	exp := runOK(t, cfg)
	j := exp.Outcomes[0].Jobs[0]
	resent, fragments, timeouts, spurious := 0, 0, 0, 0
	for _, r := range j.Workers {
		resent += r.Resent
		fragments += r.Fragments
		timeouts += r.Timeouts
		spurious += r.SpuriousTimeouts
	}
	t.Logf("resends %d of %d fragments after %d timeouts (%d spurious); PS: %d duplicates, %d results again", resent, fragments, timeouts, spurious, j.PS.Duplicates, j.PS.ResultsAgain)
	if resent == 0 || resent*5 > fragments {
		t.Errorf("%d resends for %d fragments at 1%% loss on every link; want some, at most 20%%", resent, fragments)
	}
}

func TestDeadlineAndTimeoutsGrowWithTheWork(t *testing.T) {
	tp := topo.Testbed()
	hosts := func(n int) []string {
		var ws []string
		for _, node := range tp.Nodes {
			if node.Role == topo.RoleWorker && len(ws) < n {
				ws = append(ws, node.Name)
			}
		}
		return ws
	}
	var ps string
	for _, node := range tp.Nodes {
		if node.Role == topo.RolePS {
			ps = node.Name
		}
	}
	deploy := func(workers int) *aggregator.Deployment {
		return &aggregator.Deployment{Jobs: []aggregator.JobDeployment{{Name: "job1", PS: ps, Workers: hosts(workers)}}}
	}
	small := planWork(tp, deploy(2), 64, 32, 8)
	large := planWork(tp, deploy(8), 4096, 32, 8)
	if small.deadline() >= large.deadline() || small.startWait() >= large.startWait() || small.initialTimeout() > large.initialTimeout() {
		t.Errorf("2 workers × 64 fragments: deadline %v, start wait %v, timeout %v; 8 × 4096: %v, %v, %v: want the larger work to get more",
			small.deadline(), small.startWait(), small.initialTimeout(), large.deadline(), large.startWait(), large.initialTimeout())
	}
	if d := small.deadline(); d < deadlineBase || d > deadlineBase+time.Second {
		t.Errorf("a small job's deadline %v, want about the %v base", d, deadlineBase)
	}
	// 8 workers × 4096 fragments, each there and back over at least 4
	// links (host, edge switch, ..., PS): at least 262,144 packet-hops.
	if min := deadlineBase + seconds(262144.0/forwardingBudget); large.deadline() < min {
		t.Errorf("deadline %v for 8 × 4096 fragments, want at least %v", large.deadline(), min)
	}
	// A slow PS link adds the time its fragments take on it.
	for _, l := range tp.Links {
		l.Bandwidth = 1e6
	}
	shaped := planWork(tp, deploy(8), 4096, 32, 8)
	frame := float64(8 * (gradproto.FrameOverhead + gradproto.HeaderLen + 4*32))
	if want := large.deadline() + seconds(2*8*4096*frame/1e6); (shaped.deadline() - want).Abs() > time.Millisecond {
		t.Errorf("deadline at 1 Mbit/s %v, want %v", shaped.deadline(), want)
	}
	// Explicit values win.
	cfg := &Config{Topology: tp, Fragments: 64, Values: 32, Window: DefaultWindow, Timeout: 7 * time.Millisecond, Deadline: 3 * time.Second}
	if to, dl, _ := budget(cfg, deploy(2)); to != 7*time.Millisecond || dl != 3*time.Second {
		t.Errorf("explicit timeout and deadline became %v and %v", to, dl)
	}
}
