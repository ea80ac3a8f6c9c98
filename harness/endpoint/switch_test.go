package endpoint

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/controller"
	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/dataplane/nstest"
	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/p4rt/client"
	"github.com/grid-ina/grid/harness/p4test/targettest"
)

const aggregatorSource = "../../p4/aggregator/aggregator.p4"

// compiledAggregator is the program as p4c wrote it and loaded on the engine.
type compiledAggregator struct {
	*p4c.Result
	engine *engine.Program
}

var (
	compiled    = map[int]*compiledAggregator{}
	compileLock sync.Mutex
)

// aggregatorProgram compiles the aggregator with units memory units (0:
// the default) once per test binary.
func aggregatorProgram(t testing.TB, units int) *compiledAggregator {
	t.Helper()
	compileLock.Lock()
	defer compileLock.Unlock()
	if p := compiled[units]; p != nil {
		return p
	}
	res, err := aggregator.Compile(aggregatorSource, aggregator.Build{Units: units})
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Load(res.JSON)
	if err != nil {
		t.Fatal(err)
	}
	compiled[units] = &compiledAggregator{res, p}
	return compiled[units]
}

// starNet is gradproto's star (one aggregator switch, the PS on port 0, a
// worker per further port) made real: a namespace per host with a veth to
// the switch's namespace, kernel addressing as harness/fabric does it
// (address without prefix route, static neighbour for the gateway, the
// hosts' network through it), and the compiled aggregator on the embedded
// engine behind AF_PACKET ports (harness/dataplane, what `grid switch`
// runs), configured by aggregator.Entries.
type starNet struct {
	star      *gradproto.Star
	units     int
	setup     *aggregator.Setup
	switchNet *nstest.Net
	ports     []dataplane.PortSpec
	hosts     []*nstest.Net // the PS's, then the workers'
	// engine and dp are the in-process switch (newStarNet), client the
	// controller's connection to a grid switch process (newGridSwitchStar).
	engine *engine.Switch
	dp     *dataplane.Dataplane
	client *client.Client
}

// gatewayIP is the hosts' next hop; the aggregator answers no ARP, so the
// hosts know its MAC statically.
var gatewayIP = net.IPv4(10, 255, 255, 254)

// newStarHosts builds the namespaces: the switch's (n.switchNet) and one
// per host with its veth to the switch (ports p0, p1, ...).
func newStarHosts(t testing.TB, fanIn, direct, units int) *starNet {
	t.Helper()
	nstest.NeedRoot(t)
	star, err := gradproto.NewStar(1, fanIn, direct, gradproto.DefaultValues)
	if err != nil {
		t.Fatal(err)
	}
	n := &starNet{star: star, units: units}
	if n.setup, err = aggregator.Entries(star.Config); err != nil {
		t.Fatal(err)
	}
	sw := nstest.New(t)
	n.switchNet = sw
	swNs, err := netns.GetFromName(sw.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer swNs.Close()
	attach := func(port int, mac gradproto.MAC, ip net.IP) {
		h := nstest.New(t)
		n.hosts = append(n.hosts, h)
		swPort := fmt.Sprintf("p%d", port)
		hl := h.Netlink()
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth0", HardwareAddr: net.HardwareAddr(mac[:])}, PeerName: swPort}
		if err := hl.LinkAdd(veth); err != nil {
			t.Fatalf("veth eth0-%s: %v", swPort, err)
		}
		peer, err := hl.LinkByName(swPort)
		if err == nil {
			err = hl.LinkSetNsFd(peer, int(swNs))
		}
		if err != nil {
			t.Fatalf("move %s into the switch's namespace: %v", swPort, err)
		}
		eth0, err := hl.LinkByName("eth0")
		if err != nil {
			t.Fatal(err)
		}
		addr := &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: net.CIDRMask(32, 32)}, Flags: unix.IFA_F_NOPREFIXROUTE}
		if err := hl.AddrAdd(eth0, addr); err != nil {
			t.Fatalf("address %s: %v", ip, err)
		}
		if err := hl.LinkSetUp(eth0); err != nil {
			t.Fatal(err)
		}
		sw.LinkUp(swPort)
		h.LinkUp("eth0")
		gwMAC := gradproto.SwitchPortMAC(port)
		if err := hl.NeighAdd(&netlink.Neigh{LinkIndex: eth0.Attrs().Index, Family: unix.AF_INET, State: netlink.NUD_PERMANENT,
			IP: gatewayIP, HardwareAddr: net.HardwareAddr(gwMAC[:])}); err != nil {
			t.Fatalf("gateway neighbour: %v", err)
		}
		if err := hl.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Dst: &net.IPNet{IP: net.IPv4(10, 0, 0, 0), Mask: net.CIDRMask(8, 32)},
			Gw: gatewayIP, Flags: int(netlink.FLAG_ONLINK)}); err != nil {
			t.Fatalf("route via the gateway: %v", err)
		}
		n.ports = append(n.ports, dataplane.PortSpec{Port: uint32(port), Interface: swPort})
	}
	attach(gradproto.StarPSPort, gradproto.HostMAC(0), star.Plan.PSIP.AsSlice())
	for i, m := range star.Plan.Members {
		attach(int(star.WorkerPort(i)), m.MAC, m.IP.AsSlice())
	}
	return n
}

// newStarNet is the star with the compiled aggregator on an in-process
// engine behind AF_PACKET ports (harness/dataplane), configured by
// aggregator.Entries; loss gives ports' loss probability.
func newStarNet(t testing.TB, fanIn, direct, units int, loss map[uint32]float64) *starNet {
	t.Helper()
	n := newStarHosts(t, fanIn, direct, units)
	// One packet at a time, as simple_switch's single ingress thread: a
	// unit's read-modify-write spans several actions of the program, and
	// the dataplane receives each port on its own goroutine.
	n.engine = engine.NewSwitch(aggregatorProgram(t, units).engine, engine.Config{Serial: true})
	if err := n.setup.Install(n.engine); err != nil {
		t.Fatal(err)
	}
	for i := range n.ports {
		n.ports[i].Loss = loss[n.ports[i].Port]
	}
	if err := n.switchNet.Do(func() (err error) {
		n.dp, err = dataplane.Open(n.ports, dataplane.Options{LossSeed: 7})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- n.dp.Run(ctx, n.engine) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("switch: %v", err)
		}
		n.dp.Close()
	})
	return n
}

// spec is a job of fragments per worker over the star. The PS lingers as
// long as the workers may run: run stops it once they all have ended, as
// the runner does, and a PS that left on its own after the last result
// would leave a worker whose copy of it was lost resending to nobody.
func (n *starNet) spec(fragments int, window Window, timeout time.Duration) *Spec {
	deadline := Duration(40 * time.Second)
	return &Spec{Job: JobFromPlan(n.star.Plan, "ps", nil), Fragments: fragments, Seed: 2026, Window: window,
		Timeout: Duration(timeout), Deadline: deadline, Linger: deadline}
}

// run runs the PS and the workers, each in its host's namespace; once
// every worker is done the PS is stopped, as the runner does it.
func (n *starNet) run(t testing.TB, spec *Spec) (ps *Report, workers []*Report) {
	t.Helper()
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	workers = make([]*Report, len(spec.Job.Members))
	errs := make([]error, len(workers)+1)
	var wg, psDone sync.WaitGroup
	psUp := make(chan struct{})
	psCtx, stopPS := context.WithCancel(context.Background())
	defer stopPS()
	psDone.Go(func() {
		errs[0] = n.hosts[0].Do(func() (err error) {
			ps, err = RunPS(psCtx, spec, OnListening(func(netip.AddrPort) { close(psUp) }))
			if err != nil {
				close(psUp)
			}
			return err
		})
	})
	<-psUp
	for i := range workers {
		wg.Go(func() {
			errs[i+1] = n.hosts[i+1].Do(func() (err error) {
				workers[i], err = RunWorker(context.Background(), spec, i)
				return err
			})
		})
	}
	wg.Wait()
	stopPS()
	psDone.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("endpoint %d (-1 = PS): %v", i-1, err)
		}
	}
	return ps, workers
}

func (n *starNet) jobStats(t testing.TB) [gradproto.NumEvents]uint64 {
	t.Helper()
	var st [gradproto.NumEvents]uint64
	var err error
	if n.client != nil {
		for ev := range gradproto.NumEvents {
			d, rerr := n.client.ReadCounter(context.Background(), aggregator.CounterJobStat, int64(aggregator.StatIndex(n.star.Plan.Job, ev)))
			st[ev], err = d.Packets, errors.Join(err, rerr)
		}
	} else {
		st, err = (&aggregator.EngineFabric{Switch: n.engine}).JobStats(n.star.Plan.Job)
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func requireVerified(t *testing.T, ps *Report, workers []*Report) {
	t.Helper()
	if err := ps.Failure(); err != nil {
		t.Error(err)
	}
	for _, w := range workers {
		if err := w.Failure(); err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// Two workers aggregate at the switch, a third directly at the PS: the PS
// gets one partial sum and one direct fragment per fragment, and the
// switch's multicast brings every worker exact results.
func TestJobThroughTheAggregatorSwitchVerifiesExactSums(t *testing.T) {
	n := newStarNet(t, 2, 1, 0, nil)
	const frags = 400
	ps, workers := n.run(t, n.spec(frags, Window{Initial: 8, Max: 64}, 50*time.Millisecond))
	requireVerified(t, ps, workers)
	st := n.jobStats(t)
	t.Logf("switch: %v; PS: %d aggregated, %d direct; worker 0: %.0f fragments/s, %d resends",
		st, ps.Aggregated, ps.Direct, workers[0].FragmentsPerSecond, workers[0].Resent)
	if resent, fragments := resends(workers); resent*100 >= fragments {
		t.Errorf("%d resends for %d fragments without loss; want under 1%%", resent, fragments)
	}
	if st[gradproto.EvReceived] < 2*frags || st[gradproto.EvEmitted] == 0 {
		t.Errorf("the switch received %d fragments and emitted %d partial sums; want ≥ %d and some", st[gradproto.EvReceived], st[gradproto.EvEmitted], 2*frags)
	}
	if ps.Aggregated < frags || ps.Direct < frags {
		t.Errorf("PS: %d aggregated and %d direct contributions, want ≥ %d each", ps.Aggregated, ps.Direct, frags)
	}
	for i, w := range workers {
		if w.Results < frags || w.Checked != w.Results {
			t.Errorf("worker %d: %d results, %d checked", i, w.Results, w.Checked)
		}
	}
}

// 5% of what the switch sends to the PS (partial sums, direct fragments)
// and to worker 0 (results, control packets) is lost, as with
// `grid switch --loss 0=0.05 --loss 1=0.05`: resends recover everything,
// and nothing is counted twice.
func TestJobThroughALossySwitchRecoversByResendingAndStaysExact(t *testing.T) {
	n := newStarNet(t, 2, 1, 0, map[uint32]float64{0: 0.05, 1: 0.05})
	const frags = 300
	ps, workers := n.run(t, n.spec(frags, Window{Initial: 8, Max: 32}, 30*time.Millisecond))
	requireVerified(t, ps, workers)
	stats := n.dp.Stats()
	resent := 0
	for _, w := range workers {
		resent += w.Resent
	}
	t.Logf("resends %d; PS again %d duplicates %d overlaps %d; switch %v; ports %+v", resent, ps.ResultsAgain, ps.Duplicates, ps.Overlaps, n.jobStats(t), stats)
	if resent == 0 {
		t.Error("no resends although the switch lost packets")
	}
	if ps.ResultsAgain == 0 {
		t.Error("the PS never sent a result again, although worker 0 lost results")
	}
}

// A switch with 4 memory units and windows of up to 32 fragments: most
// fragments collide, the workers get control packets, halve their windows
// and retry, and the sums stay exact.
func TestCollisionsOnAFourUnitSwitchHalveTheWindowAndStayExact(t *testing.T) {
	n := newStarNet(t, 2, 0, 4, nil)
	const frags = 200
	ps, workers := n.run(t, n.spec(frags, Window{Initial: 16, Max: 32}, 30*time.Millisecond))
	requireVerified(t, ps, workers)
	st := n.jobStats(t)
	t.Logf("switch %v; worker 0 controls %d retries %d min window %v", st, workers[0].Controls, workers[0].Retries, workers[0].MinWindow)
	if st[gradproto.EvCollision] == 0 {
		t.Fatal("no collisions on 4 units")
	}
	controls := 0
	for i, w := range workers {
		controls += w.Controls
		if w.ECNMarked != w.Controls {
			t.Errorf("worker %d: %d of %d control packets had ECN CE, want all", i, w.ECNMarked, w.Controls)
		}
		if w.Controls > 0 && w.MinWindow >= 16 {
			t.Errorf("worker %d: %d control packets but the window never went below 16", i, w.Controls)
		}
	}
	if controls == 0 {
		t.Errorf("the switch counted %d collisions, the workers no control packet", st[gradproto.EvCollision])
	}
}

// newGridSwitchStar is the star with a `grid switch` process (this
// repository's, built once) as the switch: started in the switch's
// namespace with simple_switch_grpc's command line plus args, loaded with
// the compiled aggregator and configured over P4Runtime exactly as the
// runner's controller does it (controller.InstallSetup).
func newGridSwitchStar(t testing.TB, fanIn, direct, units int, args ...string) *starNet {
	t.Helper()
	n := newStarHosts(t, fanIn, direct, units)
	argv := []string{"switch", "--device-id", "1"}
	for _, p := range n.ports {
		argv = append(argv, "-i", p.String())
	}
	argv = append(argv, args...)
	argv = append(argv, "--no-p4", "--", "--grpc-server-addr", "127.0.0.1:9559")
	cmd := exec.Command(targettest.GridBinary(t), argv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	if err := startInNamespace(n.switchNet.Name(), cmd, exited); err != nil {
		t.Fatalf("grid switch: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "grid switch: listening on ") {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			<-exited
			t.Fatalf("grid switch %s exited before it was ready:\n%s", strings.Join(argv, " "), stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("grid switch not ready after 30 s:\n%s", stderr.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n.client, err = client.Dial(ctx, "127.0.0.1:9559", 1, 1, grpc.WithContextDialer(n.switchNet.DialContext))
	if err != nil {
		t.Fatalf("P4Runtime: %v", err)
	}
	t.Cleanup(func() { n.client.Close() })
	prog := aggregatorProgram(t, units)
	if err := n.client.SetPipeline(ctx, prog.P4Info, prog.JSON); err != nil {
		t.Fatal(err)
	}
	if err := controller.InstallSetup(ctx, n.client, n.setup); err != nil {
		t.Fatal(err)
	}
	return n
}

// startInNamespace starts cmd in the named network namespace from a thread
// that lives until cmd exits (then exited is closed): the process gets
// SIGKILL when that thread ends (Pdeathsig), so it dies with the test
// process, never before it.
func startInNamespace(name string, cmd *exec.Cmd, exited chan<- struct{}) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the thread, in the switch's namespace, ends with
		// this goroutine.
		runtime.LockOSThread()
		ns, err := netns.GetFromName(name)
		if err == nil {
			err = netns.Set(ns)
			ns.Close()
		}
		if err == nil {
			err = cmd.Start()
		}
		started <- err
		if err == nil {
			cmd.Wait()
			close(exited)
		}
	}()
	return <-started
}

// The whole path of an experiment: a grid switch process configured over
// P4Runtime, losing 5% of what it sends to the PS and to worker 0
// (--loss), two workers aggregating at it and one at the PS.
func TestJobThroughAGridSwitchProcessWithLossVerifiesExactSums(t *testing.T) {
	n := newGridSwitchStar(t, 2, 1, 0, "--loss", "0=0.05", "--loss", "1=0.05")
	const frags = 300
	ps, workers := n.run(t, n.spec(frags, Window{Initial: 8, Max: 32}, 30*time.Millisecond))
	requireVerified(t, ps, workers)
	st := n.jobStats(t)
	resent := 0
	for _, w := range workers {
		resent += w.Resent
	}
	t.Logf("switch %v; resends %d; PS: %d aggregated, %d direct, %d results again", st, resent, ps.Aggregated, ps.Direct, ps.ResultsAgain)
	if st[gradproto.EvReceived] < 2*frags || st[gradproto.EvEmitted] == 0 {
		t.Errorf("the switch received %d fragments and emitted %d partial sums; want ≥ %d and some", st[gradproto.EvReceived], st[gradproto.EvEmitted], 2*frags)
	}
	if resent == 0 || ps.ResultsAgain == 0 {
		t.Errorf("%d resends, %d results sent again, although the switch lost packets", resent, ps.ResultsAgain)
	}
}

// lossOnEveryPort is loss probability p on every port of a star's switch
// with hosts hosts (the PS and the workers):
// every link loses p of what the switch sends over it (partial sums and
// direct fragments to the PS, results and control packets to the workers).
func lossOnEveryPort(hosts int, p float64) map[uint32]float64 {
	loss := map[uint32]float64{}
	for i := range hosts {
		loss[uint32(i)] = p
	}
	return loss
}

// resends sums the workers' timeout resends.
func resends(workers []*Report) (resent, fragments int) {
	for _, w := range workers {
		resent += w.Resent
		fragments += w.Fragments
	}
	return resent, fragments
}

// 1% loss on every link: the run finishes with exact sums, and the
// workers resend about what was lost: a lost partial sum costs each of its
// workers a resend, a lost result its worker one, so a few percent of the
// fragments, never a storm.
func TestJobWithOnePercentLossOnEveryLinkFinishesExactWithBoundedResends(t *testing.T) {
	n := newStarNet(t, 4, 2, 0, lossOnEveryPort(7, 0.01))
	const frags = 500
	ps, workers := n.run(t, n.spec(frags, Window{Initial: 8, Max: 64}, 50*time.Millisecond))
	requireVerified(t, ps, workers)
	resent, fragments := resends(workers)
	t.Logf("resends %d of %d fragments; PS: %d duplicates, %d results again, %d held", resent, fragments, ps.Duplicates, ps.ResultsAgain, ps.AnswersHeld)
	if resent == 0 || resent > fragments/10 {
		t.Errorf("%d resends for %d fragments at 1%% loss; want some, at most 10%%", resent, fragments)
	}
}

// 10% loss on every link: timeouts back off and windows shrink, and every
// sum still arrives exact.
func TestJobWithTenPercentLossOnEveryLinkFinishesExact(t *testing.T) {
	n := newStarNet(t, 4, 2, 0, lossOnEveryPort(7, 0.1))
	const frags = 100
	spec := n.spec(frags, Window{Initial: 8, Max: 64}, 50*time.Millisecond)
	// A lower cap on the back-off keeps the test short; the default second
	// works the same, slower.
	spec.MaxTimeout = Duration(250 * time.Millisecond)
	ps, workers := n.run(t, spec)
	requireVerified(t, ps, workers)
	resent, fragments := resends(workers)
	timeouts, decreases := 0, 0
	for _, w := range workers {
		timeouts += w.Timeouts
		decreases += w.Decreases
	}
	t.Logf("resends %d of %d fragments, %d timeouts, %d window decreases; PS: %d results again", resent, fragments, timeouts, decreases, ps.ResultsAgain)
	if timeouts == 0 || decreases == 0 {
		t.Errorf("%d timeouts and %d window decreases at 10%% loss; want both", timeouts, decreases)
	}
}

// A CPU-starved machine: busy processes, twice as many as cores, compete
// with the switch and the endpoints for the whole run. Round trips grow
// and jitter, and the switch's full receive queues drop what the windows
// sent: the workers measure the round trips instead of taking the delay
// for loss, halve their windows on the drops, and resend what was lost, a
// few percent of the fragments (the old fixed timeout resent the window
// every 100 ms: several times the fragments).
func TestJobOnACPUStarvedMachineFinishesExactWithBoundedResends(t *testing.T) {
	n := newStarNet(t, 4, 2, 0, nil)
	starve(t, 2*runtime.NumCPU())
	const frags = 500
	ps, workers := n.run(t, n.spec(frags, Window{Initial: 8, Max: 64}, 50*time.Millisecond))
	requireVerified(t, ps, workers)
	resent, fragments := resends(workers)
	spurious := 0
	for _, w := range workers {
		spurious += w.SpuriousTimeouts
	}
	t.Logf("resends %d of %d fragments, %d spurious timeouts undone; worker 0 SRTT %v RTO %v", resent, fragments, spurious,
		time.Duration(workers[0].SRTT), time.Duration(workers[0].RTO))
	if resent*10 > fragments {
		t.Errorf("%d resends for %d fragments on a starved CPU; want at most 10%%", resent, fragments)
	}
}

// starve starts n busy-looping processes for the rest of the test and
// kills them, by their own pids, when it ends.
func starve(t *testing.T, n int) {
	t.Helper()
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatalf("busy loop: %v", err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
}
