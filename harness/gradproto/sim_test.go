package gradproto

import (
	"math"
	"math/rand/v2"
	"testing"
)

// reclaimTime is the reclaim time of the tests' plans: ten round trips,
// well above the workers' retransmission timeout.
const reclaimTime = 10 * RoundTime

// clockedSwitch is a model switch on a virtual clock.
func clockedSwitch(t *testing.T, cfg SwitchConfig, units int) (*Switch, *Clock) {
	t.Helper()
	sw, err := NewSwitch(cfg, 32, units)
	if err != nil {
		t.Fatal(err)
	}
	clock := NewClock()
	sw.Now, sw.Start = clock.Now, clock.Now()
	return sw, clock
}

func activeUnits(sw *Switch) int {
	n := 0
	for _, u := range sw.Units() {
		if u.State == UnitActive {
			n++
		}
	}
	return n
}

// TestJobCompletesExactlyWhateverSinglePacketIsLost loses each transmission
// of a small job in turn (fragments, partial sums, results, control
// packets) and checks exact sums and that no unit stays active.
func TestJobCompletesExactlyWhateverSinglePacketIsLost(t *testing.T) {
	for _, tc := range []struct {
		fanIn, direct, frags, units int
		big                         bool
	}{
		{3, 1, 2, DefaultUnits, false},
		{4, 0, 3, 2, false}, // two units: collisions and control packets
		{3, 2, 2, 3, true},  // overflowing sums
	} {
		st, err := NewStar(7, tc.fanIn, tc.direct, 32)
		if err != nil {
			t.Fatal(err)
		}
		grads := RandomGradients(rand.New(rand.NewPCG(1, 2)), tc.fanIn+tc.direct, tc.frags, 32, tc.big)
		for seed := uint64(0); seed < 3; seed++ {
			for lose := 0; ; lose++ {
				sw, err := NewSwitch(st.Config, 32, tc.units)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := st.Run(ModelFabric{sw}, grads, RunOptions{Seed: seed, Lose: lose, MaxRounds: 60})
				if err != nil {
					t.Fatalf("%+v seed %d losing transmission %d (%s): %v", tc, seed, lose, rep.Lost, err)
				}
				if n := activeUnits(sw); n != 0 {
					t.Fatalf("%+v seed %d losing %s: %d units left active", tc, seed, rep.Lost, n)
				}
				if rep.Lost == "" {
					break // lose is past the last transmission
				}
			}
		}
	}
}

func TestJobCompletesWithRandomFanInsOrdersDuplicatesAndLoss(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for run := 0; run < 200; run++ {
		fanIn, direct := 1+rng.IntN(MaxFanIn), rng.IntN(4)
		frags := 1 + rng.IntN(4)
		units := []int{1, 3, 16, DefaultUnits}[rng.IntN(4)]
		st, err := NewStar(uint16(1+rng.IntN(100)), fanIn, direct, 32)
		if err != nil {
			t.Fatal(err)
		}
		grads := RandomGradients(rng, fanIn+direct, frags, 32, rng.IntN(4) == 0)
		st.Config.SetReclaim(reclaimTime)
		sw, clock := clockedSwitch(t, st.Config, units)
		opt := RunOptions{Seed: rng.Uint64(), Lose: rng.IntN((fanIn + direct) * frags * 3), Duplicate: 0.1, MaxRounds: 200}
		n := &Network{Switches: []Fabric{ModelFabric{sw}}, Jobs: []*Job{st.JobOf(&st.Plan, grads)}, Clock: clock}
		rep, err := n.Run(opt)
		if err != nil {
			t.Fatalf("run %d (fan-in %d, direct %d, %d fragments, %d units, %+v, lost %s): %v", run, fanIn, direct, frags, units, opt, rep.Lost, err)
		}
		// Late duplicates may leave a unit active; none may stay stuck.
		if err := st.ProbeUnits(ModelFabric{sw}, sw, clock, reclaimTime, &st.Plan); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
}

func TestResultSaturatesAndFlagsOverflowBeyondInt32(t *testing.T) {
	st, err := NewStar(1, 2, 0, 32)
	if err != nil {
		t.Fatal(err)
	}
	grads := make([]map[uint32][]int32, 2)
	for m := range grads {
		vs := make([]int32, 32)
		for i := range vs {
			vs[i] = math.MaxInt32
		}
		grads[m] = map[uint32][]int32{1: vs}
	}
	sw, _ := NewSwitch(st.Config, 32, DefaultUnits)
	rep, err := st.Run(ModelFabric{sw}, grads, RunOptions{Lose: -1, MaxRounds: 5})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Jobs[0].Workers[0].Results[1]
	if !r.Has(FlagOverflow) || r.Values[0] != math.MaxInt32 {
		t.Fatalf("result %+v", r.Header)
	}
	if sw.Stats[1][EvOverflow] != 1 {
		t.Fatalf("switch overflow events %d", sw.Stats[1][EvOverflow])
	}
}

func TestWorkerWindowIsAdditiveIncreaseMultiplicativeDecrease(t *testing.T) {
	st, _ := NewStar(1, 1, 0, 32)
	w := NewWorker(&st.Plan, 0, map[uint32][]int32{1: make([]int32, 32), 2: make([]int32, 32)})
	w.Originals()
	w.Window = 8
	if re := w.Receive(&Packet{Header: Header{Flags: FlagCongestion, Frag: 1}}); re == nil || re.Flags != 0 {
		t.Fatalf("control packet answered with %+v", re)
	}
	if w.Window != 4 {
		t.Fatalf("window %g after congestion, want 4", w.Window)
	}
	w.Receive(&Packet{Header: Header{Flags: FlagResult, Frag: 1}})
	if w.Window != 5 || w.Done() {
		t.Fatalf("window %g done %v", w.Window, w.Done())
	}
	if rs := w.Timeout(); len(rs) != 0 {
		t.Fatalf("resends before the timer expired: %+v", rs)
	}
	w.Round = TimeoutRounds
	if rs := w.Timeout(); len(rs) != 1 || rs[0].Frag != 2 || !rs[0].Has(FlagResend) {
		t.Fatalf("timeout resends %+v", rs)
	}
}

// TestConcurrentJobsShareUnitsWithoutInterference runs several jobs at once
// over one switch with few units, so their fragments collide with each
// other, with duplicates and one loss, and checks every job's sums.
func TestConcurrentJobsShareUnitsWithoutInterference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for run := 0; run < 100; run++ {
		hosts := 2 + rng.IntN(20)
		st, err := NewStar(1, hosts, 0, 32)
		if err != nil {
			t.Fatal(err)
		}
		n := &Network{Jobs: []*Job{st.JobOf(&st.Plan, RandomGradients(rng, hosts, 1+rng.IntN(3), 32, false))}}
		jobs := 2 + rng.IntN(3)
		for job := uint16(2); job <= uint16(jobs); job++ {
			fanIn := rng.IntN(hosts + 1)
			direct := rng.IntN(hosts - fanIn + 1)
			if fanIn+direct == 0 {
				fanIn = 1
			}
			plan, err := st.AddJob(job, fanIn, direct)
			if err != nil {
				t.Fatal(err)
			}
			n.Jobs = append(n.Jobs, st.JobOf(plan, RandomGradients(rng, fanIn+direct, 1+rng.IntN(3), 32, rng.IntN(3) == 0)))
		}
		st.Config.SetReclaim(reclaimTime)
		sw, clock := clockedSwitch(t, st.Config, 1+rng.IntN(4))
		n.Switches, n.Clock = []Fabric{ModelFabric{sw}}, clock
		opt := RunOptions{Seed: rng.Uint64(), Lose: rng.IntN(hosts * 8), Duplicate: 0.05, MaxRounds: 300}
		if rep, err := n.Run(opt); err != nil {
			t.Fatalf("run %d (%d jobs, %d hosts, %d units, lost %s): %v", run, len(n.Jobs), hosts, len(sw.Units()), rep.Lost, err)
		}
		var plans []*Plan
		for _, j := range n.Jobs {
			plans = append(plans, j.Plan)
		}
		if err := st.ProbeUnits(ModelFabric{sw}, sw, clock, reclaimTime, plans...); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
}
