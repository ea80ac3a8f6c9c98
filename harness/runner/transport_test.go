package runner

import (
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/controller/controllertest"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/p4test/targettest"
	"github.com/grid-ina/grid/harness/results"
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
	if b := budget(cfg, deploy(2)); b.timeout != 7*time.Millisecond || b.deadline != 3*time.Second || b.minTimeout > b.timeout {
		t.Errorf("explicit timeout and deadline became %v and %v (floor %v)", b.timeout, b.deadline, b.minTimeout)
	}
}

// A leaf-spine with 63 workers at 2e-6 (200 kbit/s links): under Geryon
// each worker's fragments reach the PS as streams of their own, so each
// worker may keep fewer fragments queued, or together they overflow the PS
// link's queue; under grid-paths a few partial sums reach it and Vegas's
// own bounds hold. The retransmission timeout's floor is twice a
// fragment's round trip through 4 links each way at 200 kbit/s.
func TestWindowsAndTimeoutFloorFollowThePSLinksQueueAndRate(t *testing.T) {
	tp, err := topo.LeafSpine(2, 4, 64)
	if err != nil {
		t.Fatal(err)
	}
	emulated, err := Emulated(tp, 2e-6)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Topology: tp, Values: 32, Fragments: 64, Window: DefaultWindow, emulated: emulated}
	frameBits := float64(8 * (gradproto.FrameOverhead + gradproto.HeaderLen + 4*32))
	queue := fabric.QueueDelay(200e3, 1500).Seconds() * 200e3 / frameBits
	for _, algo := range []string{solver.AlgoGeryon, solver.AlgoGRIDPaths} {
		d, err := deployment(cfg, controllertest.Solve(t, tp, algo))
		if err != nil {
			t.Fatalf("%s: %v", algo, err)
		}
		jd := &d.Jobs[0]
		streams := psStreams(d, jd)
		w := jobWindow(cfg.Window, emulated, d, jd, cfg.Values)
		t.Logf("%s: %d streams reach the PS (its queue holds %.0f frames); window %+v", algo, streams, queue, w)
		switch algo {
		case solver.AlgoGeryon:
			if streams != len(jd.Workers) {
				t.Errorf("geryon: %d streams reach the PS, want one per worker (%d)", streams, len(jd.Workers))
			}
			if w.Beta >= gradproto.DefaultBeta || w.Beta*float64(streams) > queue/2 || w.Alpha != w.Beta/2 || float64(w.Initial) > w.Beta {
				t.Errorf("geryon: window %+v lets %d workers queue more than half of %.0f frames", w, streams, queue)
			}
		default:
			if streams >= len(jd.Workers) || w.Alpha != gradproto.DefaultAlpha || w.Beta != gradproto.DefaultBeta || w.Initial != DefaultWindow.Initial {
				t.Errorf("%s: %d streams, window %+v; want fewer streams than workers and Vegas's bounds", algo, streams, w)
			}
		}
		// 8 links at 200 kbit/s, 1520-bit frames: 60.8ms, twice.
		if b := budget(cfg, d); (b.minTimeout - 121600*time.Microsecond).Abs() > time.Millisecond {
			t.Errorf("%s: timeout floor %v, want twice the 60.8ms round trip", algo, b.minTimeout)
		}
	}
}

// The k=4 fat-tree at 2e-6 (200 kbit/s links, 15 workers): rates of tens
// of kbit/s, where a window that fills the shaped queues makes round trips
// of seconds. grid-paths' aggregated plan and Geryon's both reach their
// lambda within the fidelity band and resend few fragments: 0-1.1% in
// runs on this machine (issue 10's target is 1%; the test allows 2% for a
// loaded CI machine).
// The transport before the queue estimate (a loss-based window, a timer
// per fragment from its own send) resent 8.3% here and reached 0.736 of
// grid-paths' lambda: each resend of a fragment the switch had already sent
// on crossed the PS's saturated link a second time.
func TestAFatTreeAtTensOfKbitPerWorkerKeepsItsRateAndResendsFewFragments(t *testing.T) {
	controllertest.NeedFabric(t)
	tp, err := topo.FatTree(4, 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Topology: tp, Program: controllertest.Program(t), Binary: targettest.GridBinary(t), Name: runName(),
		Fragments: 256, Scale: 2e-6,
		Plans: []*solver.Plan{controllertest.Solve(t, tp, solver.AlgoGRIDPaths), controllertest.Solve(t, tp, solver.AlgoGeryon)}}
	exp := runOK(t, cfg)
	algos := exp.Results("lowrate", nil).Summary().Algorithms
	for i, o := range exp.Outcomes {
		resent, fragments := 0, 0
		for _, w := range o.Jobs[0].Workers {
			resent += w.Resent
			fragments += w.Fragments
		}
		f := algos[i].Fidelity
		if f == nil || f.Ratio == nil {
			t.Fatalf("%s: no fidelity measured: %+v", algos[i].Algorithm, f)
		}
		t.Logf("%s: %d of %d fragments resent; slowest worker %.0f bit/s, %.3f of %.0f", algos[i].Algorithm, resent, fragments, f.MeasuredBits, *f.Ratio, f.PredictedBits)
		if resent*50 >= fragments {
			t.Errorf("%s: %d of %d fragments resent, want under 2%%", algos[i].Algorithm, resent, fragments)
		}
		if *f.Ratio < results.MinFidelity || *f.Ratio > results.MaxFidelity {
			t.Errorf("%s: the slowest worker sent %.3f of the plan's lambda, want [%.2f, %.2f]", algos[i].Algorithm, *f.Ratio, results.MinFidelity, results.MaxFidelity)
		}
	}
}
