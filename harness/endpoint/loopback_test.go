package endpoint

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/dataplane/nstest"
)

// loopbackSpec is a job whose PS aggregates every worker itself, on
// loopback addresses 127.X.Y.10 (PS) and .11, .12, ... (workers), X and Y
// random so that parallel test runs do not share sockets.
func loopbackSpec(workers, fragments int) *Spec {
	x, y := 1+rand.IntN(250), 1+rand.IntN(250)
	addr := func(n int) string { return fmt.Sprintf("127.%d.%d.%d", x, y, n) }
	s := &Spec{
		Job:       Job{ID: 5, PSNode: 1000, PSIP: addr(10), Values: 32},
		Fragments: fragments, Seed: 99,
		Window:  Window{Initial: 4, Max: 64},
		Timeout: Duration(50 * time.Millisecond), Deadline: Duration(20 * time.Second),
		Linger:  Duration(100 * time.Millisecond),
		Results: ResultsUnicast,
	}
	for i := 0; i < workers; i++ {
		s.Job.Members = append(s.Job.Members, Member{IP: addr(11 + i), Node: 1000, Slot: i})
	}
	return s
}

// startPS runs the PS of spec in the background and returns once its
// socket is bound; wait returns its report.
func startPS(t testing.TB, ctx context.Context, spec *Spec) (wait func() *Report) {
	t.Helper()
	var rep *Report
	var err error
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		rep, err = RunPS(ctx, spec, OnListening(func(netip.AddrPort) { close(ready) }))
	}()
	select {
	case <-ready:
	case <-done:
	}
	return func() *Report {
		t.Helper()
		<-done
		if err != nil {
			t.Fatalf("PS: %v", err)
		}
		return rep
	}
}

// runWorkers runs worker i of specs[i] for every i, with options opts, and
// returns their reports.
func runWorkers(t testing.TB, ctx context.Context, specs []*Spec, opts ...Option) []*Report {
	t.Helper()
	reports := make([]*Report, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Go(func() { reports[i], errs[i] = RunWorker(ctx, spec, i, opts...) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	return reports
}

// runJob runs the PS and every worker of spec.
func runJob(t testing.TB, ctx context.Context, spec *Spec) (ps *Report, workers []*Report) {
	t.Helper()
	wait := startPS(t, ctx, spec)
	specs := make([]*Spec, len(spec.Job.Members))
	for i := range specs {
		specs[i] = spec
	}
	workers = runWorkers(t, ctx, specs)
	return wait(), workers
}

func TestJobOverLoopbackWithThePSAggregatingVerifiesEverySum(t *testing.T) {
	spec := loopbackSpec(3, 300)
	ps, workers := runJob(t, context.Background(), spec)
	if err := ps.Failure(); err != nil {
		t.Errorf("PS: %v", err)
	}
	if ps.Direct < 3*300 || ps.Aggregated != 0 || ps.Checked != 300 {
		t.Errorf("PS took %d direct and %d aggregated contributions, checked %d fragments; want ≥ 900, 0, 300", ps.Direct, ps.Aggregated, ps.Checked)
	}
	for i, w := range workers {
		if err := w.Failure(); err != nil {
			t.Errorf("worker %d: %v", i, err)
			continue
		}
		if w.Completed != 300 || w.Checked < 300 || w.Sent < 300 || w.FragmentsPerSecond <= 0 {
			t.Errorf("worker %d: completed %d checked %d sent %d, %.0f fragments/s", i, w.Completed, w.Checked, w.Sent, w.FragmentsPerSecond)
		}
		// Without collisions or loss the window never halves and grows
		// from its 4; how far depends on the queues the loopback's
		// scheduling builds (the queue estimate stops it there).
		if w.Decreases != 0 || w.FinalWindow <= 4 {
			t.Errorf("worker %d: window halved %d times, %v after 300 results without collisions; want never, above 4", i, w.Decreases, w.FinalWindow)
		}
	}
}

// The 64-value build's packets (GRID_VALUES_64) work the same way.
func TestJobWith64ValuesPerPacketVerifies(t *testing.T) {
	spec := loopbackSpec(2, 50)
	spec.Job.Values = 64
	ps, workers := runJob(t, context.Background(), spec)
	for _, r := range append(workers, ps) {
		if err := r.Failure(); err != nil {
			t.Error(err)
		}
	}
	if workers[0].GoodputBitsPerSec != workers[0].FragmentsPerSecond*64*32 {
		t.Errorf("goodput %v bit/s for %v fragments/s of 64 values", workers[0].GoodputBitsPerSec, workers[0].FragmentsPerSecond)
	}
}

// A worker whose gradients differ from what the others compute (another
// seed) makes every sum wrong, and both sides must say so.
func TestWorkerWithAnotherSeedIsAMismatchEverywhere(t *testing.T) {
	spec := loopbackSpec(2, 20)
	odd := *spec
	odd.Seed++
	ctx := context.Background()
	wait := startPS(t, ctx, spec)
	workers := runWorkers(t, ctx, []*Spec{spec, &odd})
	ps := wait()
	for name, r := range map[string]*Report{"PS": ps, "worker 0": workers[0], "worker 1": workers[1]} {
		if r.Verified || r.Mismatch == nil || r.Mismatch.Reason != "" {
			t.Errorf("%s: verified %v, mismatch %v; want a wrong value", name, r.Verified, r.Mismatch)
		}
	}
}

func TestWorkerWithoutPSStopsAtTheDeadline(t *testing.T) {
	spec := loopbackSpec(1, 5)
	spec.Deadline = Duration(300 * time.Millisecond)
	start := time.Now()
	r, err := RunWorker(context.Background(), spec, 0)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("stopped after %v", took)
	}
	if r.Verified || r.Completed != 0 || r.Error != "deadline 300ms passed" {
		t.Errorf("report %+v", r)
	}
	// 4 originals in the first window; at 50 ms all four time out: the
	// timeout doubles to 100 ms and the window halves to 2, so 2 resends;
	// at 150 ms those time out: 200 ms, window 1, one resend; the next
	// timeout would come after the deadline. Resending everything every
	// 50 ms would have sent 20.
	if r.Sent != 4+r.Resent || r.Resent < 2 || r.Resent > 4 {
		t.Errorf("sent %d, resent %d: want the 4 originals and 2 to 4 resends of a shrinking window", r.Sent, r.Resent)
	}
	if r.Timeouts < 2 || r.FinalWindow != 1 || time.Duration(r.RTO) < 200*time.Millisecond {
		t.Errorf("%d timeouts, final window %v, RTO %v: want ≥ 2, 1 and a doubled twice 50ms", r.Timeouts, r.FinalWindow, time.Duration(r.RTO))
	}
}

func TestCancelledPSStopsAndSaysSo(t *testing.T) {
	spec := loopbackSpec(1, 5)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	r, err := RunPS(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verified || r.Error != "interrupted: context canceled" {
		t.Errorf("report %+v", r)
	}
}

func TestEndpointsRefuseAnInvalidSpec(t *testing.T) {
	spec := loopbackSpec(1, 5)
	spec.Job.PSIP = "nowhere"
	if _, err := RunPS(context.Background(), spec); err == nil || err.Error() != `spec: job.ps_ip: "nowhere" is not an IPv4 address` {
		t.Errorf("PS: %v", err)
	}
	if _, err := RunWorker(context.Background(), spec, 0); err == nil || err.Error() != `spec: job.ps_ip: "nowhere" is not an IPv4 address` {
		t.Errorf("worker: %v", err)
	}
}

func TestSecondEndpointOnTheSameAddressFailsToStart(t *testing.T) {
	spec := loopbackSpec(1, 5)
	conn, err := listen(context.Background(), spec.Job.Plan().PSIP, false, minReceiveBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := RunPS(context.Background(), spec); err == nil {
		t.Error("a second PS on the same address started")
	}
}

// A PS the host has no route to is a configuration error, reported at the
// first send instead of retried until the deadline.
func TestWorkerWithoutARouteToThePSStopsAtTheFirstSend(t *testing.T) {
	host := nstest.New(t) // loopback only
	spec := loopbackSpec(1, 5)
	spec.Job.PSIP = "10.1.2.3"
	var r *Report
	err := host.Do(func() (err error) {
		r, err = RunWorker(context.Background(), spec, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verified || r.Sent != 1 || !strings.Contains(r.Error, "send fragment 0 to 10.1.2.3:18258") || !strings.Contains(r.Error, "network is unreachable") {
		t.Errorf("report: sent %d, error %q", r.Sent, r.Error)
	}
}

// With "start": "signal" the workers bind, say so, and send nothing until
// the trigger: a runner starts them together.
func TestWorkersWithAStartSignalSendOnlyAfterIt(t *testing.T) {
	spec := loopbackSpec(2, 50)
	spec.Start = StartSignal
	ctx := context.Background()
	wait := startPS(t, ctx, spec)
	start := make(chan struct{})
	var bound sync.WaitGroup
	bound.Add(2)
	var signalled time.Time
	go func() {
		bound.Wait()
		time.Sleep(100 * time.Millisecond)
		signalled = time.Now()
		close(start)
	}()
	workers := runWorkers(t, ctx, []*Spec{spec, spec}, StartOn(start), OnListening(func(netip.AddrPort) { bound.Done() }))
	ps := wait()
	if err := ps.Failure(); err != nil {
		t.Error(err)
	}
	for i, w := range workers {
		if err := w.Failure(); err != nil {
			t.Error(err)
		}
		if w.Start.Before(signalled) {
			t.Errorf("worker %d started at %v, before the signal at %v", i, w.Start, signalled)
		}
	}
	// Fragments sent during the 100 ms before the signal would have been
	// answered at once: the PS would have completed before it.
	if ps.Done.Before(signalled) {
		t.Errorf("the PS completed at %v, before the start signal at %v", ps.Done, signalled)
	}
}

func TestWorkerWaitingForAStartSignalStopsAfterTheStartWait(t *testing.T) {
	spec := loopbackSpec(1, 5)
	spec.Start = StartSignal
	spec.StartWait = Duration(200 * time.Millisecond)
	start := time.Now()
	r, err := RunWorker(context.Background(), spec, 0, StartOn(make(chan struct{})))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verified || r.Sent != 0 || r.Error != "no start signal within 200ms" {
		t.Errorf("sent %d, error %q", r.Sent, r.Error)
	}
	if took := time.Since(start); took > time.Duration(spec.Deadline)/2 {
		t.Errorf("gave up after %v, want the 200ms start wait, not the %v deadline", took, time.Duration(spec.Deadline))
	}
	if _, err := RunWorker(context.Background(), spec, 0); err == nil || !strings.Contains(err.Error(), "start trigger") {
		t.Errorf("a signal-started worker without a trigger: %v", err)
	}
}
