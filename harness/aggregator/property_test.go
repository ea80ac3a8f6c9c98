package aggregator

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/gradproto"
)

// lockstep sends every frame through the engine and the reference model
// and fails on the first difference in what comes out.
type lockstep struct {
	eng   *EngineFabric
	model *gradproto.Switch
	n     int
}

func sortOutputs(o []gradproto.Output) {
	sort.SliceStable(o, func(i, j int) bool { return o[i].Port < o[j].Port })
}

func (l *lockstep) Process(port uint16, frame []byte) ([]gradproto.Output, error) {
	l.n++
	got, err := l.eng.Process(port, frame)
	if err != nil {
		return nil, err
	}
	want := l.model.Process(port, frame)
	sortOutputs(got)
	sortOutputs(want)
	if len(got) != len(want) {
		return nil, fmt.Errorf("frame %d into port %d (%x): engine sent %d packets, model %d", l.n, port, frame, len(got), len(want))
	}
	for i := range got {
		if got[i].Port != want[i].Port || !bytes.Equal(got[i].Frame, want[i].Frame) {
			return nil, fmt.Errorf("frame %d into port %d (%x): output %d differs:\nengine port %d %x\nmodel  port %d %x",
				l.n, port, frame, i, got[i].Port, got[i].Frame, want[i].Port, want[i].Frame)
		}
	}
	return got, nil
}

// compiled caches the program per build across the package's tests.
var compiled struct {
	sync.Mutex
	progs map[Build]*engine.Program
}

// compileForEngine compiles the aggregator with build b (once per test
// binary) and loads it into the engine.
func compileForEngine(t testing.TB, b Build) *engine.Program {
	t.Helper()
	compiled.Lock()
	defer compiled.Unlock()
	if p := compiled.progs[b]; p != nil {
		return p
	}
	res, err := Compile(filepath.Join(programDir(t), "aggregator.p4"), b)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := engine.Load(res.JSON)
	if err != nil {
		t.Fatalf("engine cannot load the aggregator: %v", err)
	}
	if compiled.progs == nil {
		compiled.progs = map[Build]*engine.Program{}
	}
	compiled.progs[b] = prog
	return prog
}

// TestEngineMatchesReferenceModelUnderRandomJobs drives whole jobs with
// random fan-ins, interleavings, duplicates, overflowing values and one lost
// packet through the compiled program on the engine, comparing every output
// with the reference model, and checks exact results, the unit registers
// and the per-job counters afterwards.
func TestEngineMatchesReferenceModelUnderRandomJobs(t *testing.T) {
	runs := 150
	if testing.Short() {
		runs = 15
	}
	for _, build := range []Build{{Units: 4}, {}, {Units: 16, Values: 64}} {
		units, values := build.UnitCount(), build.ValueCount()
		prog := compileForEngine(t, build)
		rng := rand.New(rand.NewPCG(11, uint64(units)))
		n := runs
		if values == 64 {
			n = runs / 3
		}
		for run := 0; run < n; run++ {
			fanIn, direct := 1+rng.IntN(gradproto.MaxFanIn), rng.IntN(3)
			if run%3 == 0 {
				fanIn = 1 + rng.IntN(8)
			}
			frags := 1 + rng.IntN(4)
			job := uint16(1 + rng.IntN(2000))
			st, err := gradproto.NewStar(job, fanIn, direct, values)
			if err != nil {
				t.Fatal(err)
			}
			st.Config.SetReclaim(reclaimTime)
			clock := gradproto.NewClock()
			eng, model := newPair(t, prog, st.Config, build, clock)
			grads := gradproto.RandomGradients(rng, fanIn+direct, frags, values, rng.IntN(4) == 0)
			opt := gradproto.RunOptions{Seed: rng.Uint64(), Lose: rng.IntN((fanIn+direct)*frags*3 + 1), Duplicate: 0.05, MaxRounds: 200}
			name := fmt.Sprintf("units %d values %d run %d (job %d, fan-in %d, direct %d, %d fragments, lose #%d)", units, values, run, job, fanIn, direct, frags, opt.Lose)
			ls := &lockstep{eng: eng, model: model}
			n := &gradproto.Network{Switches: []gradproto.Fabric{ls}, Jobs: []*gradproto.Job{st.JobOf(&st.Plan, grads)}, Clock: clock}
			rep, err := n.Run(opt)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			name += " (lost: " + rep.Lost + ")"
			compareState(t, name, eng, model, job, fanIn+direct)
			// Late duplicates may leave a unit active; none may stay stuck.
			if err := st.ProbeUnits(ls, model, clock, reclaimTime, &st.Plan); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			compareState(t, name+", after probing", eng, model, job, fanIn+direct)
		}
	}
}

// newPair configures an engine switch running prog and the reference model
// alike from cfg, both on clock.
func newPair(t *testing.T, prog *engine.Program, cfg gradproto.SwitchConfig, b Build, clock *gradproto.Clock) (*EngineFabric, *gradproto.Switch) {
	t.Helper()
	setup, err := Entries(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngineFabric(prog, engine.Config{Now: clock.Now}, setup)
	if err != nil {
		t.Fatal(err)
	}
	model, err := gradproto.NewSwitch(cfg, b.ValueCount(), b.UnitCount())
	if err != nil {
		t.Fatal(err)
	}
	model.Now, model.Start = clock.Now, clock.Now()
	return eng, model
}

// compareState checks that the engine's unit registers, the job's counters
// and the port counters equal the model's.
func compareState(t *testing.T, name string, eng *EngineFabric, model *gradproto.Switch, job uint16, hosts int) {
	t.Helper()
	tags, err := eng.UnitTags()
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range model.Units() {
		if tags[i] != u.Tag() {
			t.Fatalf("%s: unit %d tag %#x on the engine, %#x in the model", name, i, tags[i], u.Tag())
		}
	}
	stats, err := eng.JobStats(job)
	if err != nil {
		t.Fatal(err)
	}
	var want [gradproto.NumEvents]uint64
	if s := model.Stats[job]; s != nil {
		want = *s
	}
	if stats != want {
		t.Fatalf("%s: job_stats %v on the engine, %v in the model", name, stats, want)
	}
	for port := 0; port <= hosts; port++ {
		rx, err := eng.Switch.ReadCounter(CounterPortRx, port)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := eng.Switch.ReadCounter(CounterPortTx, port)
		if err != nil {
			t.Fatal(err)
		}
		if rx.Packets != model.PortRx[port] || tx.Packets != model.PortTx[port] {
			t.Fatalf("%s: port %d rx/tx %d/%d on the engine, %d/%d in the model", name, port, rx.Packets, tx.Packets, model.PortRx[port], model.PortTx[port])
		}
	}
}

// requireNoActiveUnit fails if a job without duplicates left a unit active.
func requireNoActiveUnit(t *testing.T, name string, model *gradproto.Switch) {
	t.Helper()
	for i, u := range model.Units() {
		if u.State == gradproto.UnitActive {
			t.Fatalf("%s: unit %d still active after the job", name, i)
		}
	}
}

// reclaimTime is the reclaim time of the tests' plans: ten round trips,
// well above the workers' retransmission timeout.
const reclaimTime = 10 * gradproto.RoundTime

// TestEngineCompletesJobsWhateverSinglePacketIsLost loses each transmission
// of small jobs in turn — fragments, partial sums, result copies, control
// packets — on the compiled program, and checks exact results and that no
// unit stays active.
func TestEngineCompletesJobsWhateverSinglePacketIsLost(t *testing.T) {
	for _, tc := range []struct {
		build               Build
		fanIn, direct, frag int
		big                 bool
	}{
		{Build{}, 3, 1, 2, false},
		{Build{Units: 2}, 4, 0, 3, false}, // two units: collisions and control packets
		{Build{Units: 3}, 3, 1, 2, true},  // sums overflow int32
	} {
		units := tc.build.UnitCount()
		prog := compileForEngine(t, tc.build)
		st, err := gradproto.NewStar(5, tc.fanIn, tc.direct, 32)
		if err != nil {
			t.Fatal(err)
		}
		grads := gradproto.RandomGradients(rand.New(rand.NewPCG(7, 8)), tc.fanIn+tc.direct, tc.frag, 32, tc.big)
		for lose := 0; ; lose++ {
			eng, model := newPair(t, prog, st.Config, tc.build, gradproto.NewClock())
			rep, err := st.Run(&lockstep{eng: eng, model: model}, grads, gradproto.RunOptions{Seed: uint64(lose), Lose: lose, MaxRounds: 60})
			name := fmt.Sprintf("%d units, fan-in %d, losing transmission %d (%s)", units, tc.fanIn, lose, rep.Lost)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			compareState(t, name, eng, model, 5, tc.fanIn+tc.direct)
			requireNoActiveUnit(t, name, model)
			if rep.Lost == "" {
				if lose < 10 {
					t.Fatalf("%s: only %d transmissions", name, lose)
				}
				break
			}
		}
	}
}

// TestConcurrentJobsOnTheEngineMatchTheModel runs two to four jobs at once
// over one switch with four units, so they collide with each other, with
// duplicates and one loss, on the compiled program in lockstep with the
// model.
func TestConcurrentJobsOnTheEngineMatchTheModel(t *testing.T) {
	const units = 4
	prog := compileForEngine(t, Build{Units: units})
	rng := rand.New(rand.NewPCG(21, 22))
	for run := 0; run < 40; run++ {
		hosts := 2 + rng.IntN(16)
		st, err := gradproto.NewStar(1, hosts, 0, 32)
		if err != nil {
			t.Fatal(err)
		}
		jobs := []*gradproto.Job{st.JobOf(&st.Plan, gradproto.RandomGradients(rng, hosts, 1+rng.IntN(3), 32, false))}
		for job, last := uint16(2), uint16(2+rng.IntN(3)); job <= last; job++ {
			fanIn := 1 + rng.IntN(hosts)
			direct := rng.IntN(hosts - fanIn + 1)
			plan, err := st.AddJob(job, fanIn, direct)
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, st.JobOf(plan, gradproto.RandomGradients(rng, fanIn+direct, 1+rng.IntN(3), 32, rng.IntN(3) == 0)))
		}
		st.Config.SetReclaim(reclaimTime)
		clock := gradproto.NewClock()
		eng, model := newPair(t, prog, st.Config, Build{Units: units}, clock)
		ls := &lockstep{eng: eng, model: model}
		n := &gradproto.Network{Switches: []gradproto.Fabric{ls}, Jobs: jobs, Clock: clock}
		opt := gradproto.RunOptions{Seed: rng.Uint64(), Lose: rng.IntN(hosts * 8), Duplicate: 0.05, MaxRounds: 300}
		rep, err := n.Run(opt)
		name := fmt.Sprintf("run %d (%d jobs over %d hosts, lost %s)", run, len(jobs), hosts, rep.Lost)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plans []*gradproto.Plan
		for _, j := range jobs {
			compareState(t, name, eng, model, j.Plan.Job, hosts)
			plans = append(plans, j.Plan)
		}
		if err := st.ProbeUnits(ls, model, clock, reclaimTime, plans...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
