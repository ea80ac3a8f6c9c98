package controller

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	mrand "math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/controller/controllertest"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/p4rt/client"
	"github.com/grid-ina/grid/harness/p4test/targettest"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
)

// The tests that start switches build real namespaces and need root (CI
// runs them as root); they skip otherwise. Each run is named "gc" plus
// random hex and removed when the test ends, also when it fails.

func TestMain(m *testing.M) { targettest.Main(m) }

func startOptions(t testing.TB) Options {
	t.Helper()
	return Options{Binary: targettest.GridBinary(t), Program: controllertest.Program(t)}
}

// upRun builds tp as a fresh run that is torn down when the test ends;
// the teardown must leave no recorded process alive.
func upRun(t testing.TB, tp *topo.Topology) *fabric.State {
	t.Helper()
	b := make([]byte, 3)
	rand.Read(b)
	run := "gc" + hex.EncodeToString(b)
	st, err := fabric.Up(context.Background(), tp, fabric.Options{Name: run})
	if err != nil {
		t.Fatalf("up %s: %v", run, err)
	}
	t.Cleanup(func() {
		last, _ := fabric.LoadState(run)
		if err := fabric.Down(run); err != nil {
			t.Errorf("down %s: %v", run, err)
		}
		if last != nil {
			for _, p := range last.Processes {
				if p.Alive() {
					t.Errorf("process %d (%s in %s) outlived run %s", p.PID, p.Role, p.Node, run)
				}
			}
		}
	})
	return st
}

// deploy solves tp's default job with algo and turns the plan into a deployment.
func deploy(t testing.TB, tp *topo.Topology, algo string) *aggregator.Deployment {
	t.Helper()
	d, err := aggregator.FromSolverPlan(tp, controllertest.Solve(t, tp, algo), aggregator.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// startInstalled starts st's switches hosted as hosting and installs d;
// they stop when the test ends.
func startInstalled(ctx context.Context, t testing.TB, st *fabric.State, hosting Hosting, d *aggregator.Deployment) *Controller {
	t.Helper()
	opts := startOptions(t)
	opts.Hosting = hosting
	ctl, err := Start(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close() })
	if err := ctl.Install(ctx, d); err != nil {
		t.Fatal(err)
	}
	return ctl
}

// udpIn opens a UDP socket on the GRID port of host's address, inside the
// host's namespace.
func udpIn(t testing.TB, st *fabric.State, host string, ip netip.Addr) *net.UDPConn {
	t.Helper()
	var conn *net.UDPConn
	err := st.Node(host).Do(func() (err error) {
		conn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, gradproto.UDPPort)))
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", host, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestOneGradientRoundOnTheTestbedArrivesAsExactPartialSums runs the
// paper's testbed with its switches in one `grid switch-host` process and
// with a `grid switch` process per switch: the
// controller installs grid-paths' plan over P4Runtime, the eight workers
// send two fragments each from their namespaces with kernel UDP sockets,
// and every packet the PS receives is exactly the sum of the workers its
// bitmap names, aggregated where the plan says; the PS's result comes back
// to every worker through the result multicast; the counters tell the same.
func TestOneGradientRoundOnTheTestbedArrivesAsExactPartialSums(t *testing.T) {
	controllertest.NeedFabric(t)
	for _, h := range hostings {
		t.Run(h.hosting.String(), func(t *testing.T) { oneGradientRound(t, h.hosting) })
	}
}

func oneGradientRound(t *testing.T, hosting Hosting) {
	tp := topo.Testbed()
	d := deploy(t, tp, solver.AlgoGRIDPaths)
	st := upRun(t, tp)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctl := startInstalled(ctx, t, st, hosting, d)

	job := d.Jobs[0]
	plan := job.Plan
	aggregatedAt := map[uint16]string{} // node id -> switch that aggregates for it
	for _, s := range d.Switches {
		for _, a := range s.Config.Aggregations {
			aggregatedAt[a.Node] = s.Name
		}
	}
	if len(aggregatedAt) == 0 {
		t.Fatal("grid-paths aggregates nowhere on the testbed; the test would prove nothing")
	}
	const frags = 2
	grads := gradproto.RandomGradients(mrand.New(mrand.NewPCG(1, 2)), len(plan.Members), frags, plan.Values, false)
	ps := udpIn(t, st, job.PS, plan.PSIP)
	workers := make([]*net.UDPConn, len(job.Workers))
	for i, w := range job.Workers {
		workers[i] = udpIn(t, st, w, plan.Members[i].IP)
	}
	toPS := net.UDPAddrFromAddrPort(netip.AddrPortFrom(plan.PSIP, gradproto.UDPPort))
	for i := range plan.Members {
		for _, p := range gradproto.NewWorker(&plan, i, grads[i]).Originals() {
			if _, err := workers[i].WriteToUDP(p.Payload(), toPS); err != nil {
				t.Fatalf("worker %s: %v", job.Workers[i], err)
			}
		}
	}

	model, err := gradproto.NewPS(plan)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2048)
	var results []*gradproto.Packet
	for len(results) < frags {
		ps.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := ps.Read(buf)
		if err != nil {
			t.Fatalf("PS has %d of %d results: %v", len(results), frags, err)
		}
		h, vs, err := gradproto.ParsePayload(buf[:n], plan.Values)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]int32, plan.Values)
		for i, m := range plan.Members {
			if m.Node == h.Node && h.Bitmap&(1<<m.Slot) != 0 {
				for v := range want {
					want[v] += grads[i][h.Frag][v]
				}
			}
		}
		if !slices.Equal(vs, want) {
			t.Fatalf("fragment %d from node %d bitmap %#x: values %v, want the sum of its workers %v", h.Frag, h.Node, h.Bitmap, vs, want)
		}
		if _, ok := aggregatedAt[h.Node]; ok && (!h.Has(gradproto.FlagAggregated) || int(h.Count) != bits.OnesCount64(h.Bitmap)) {
			t.Errorf("fragment %d from node %d: flags %#x count %d bitmap %#x, want an aggregated partial sum", h.Frag, h.Node, h.Flags, h.Count, h.Bitmap)
		}
		res, err := model.Receive(&gradproto.Packet{Header: h, Values: vs})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res...)
	}

	// The PS multicasts each result; the switches copy it to every worker.
	bcast := net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.AddrFrom4([4]byte{255, 255, 255, 255}), gradproto.UDPPort))
	rawPS, err := ps.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rawPS.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_BROADCAST, 1) })
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if _, err := ps.WriteToUDP(r.Payload(), bcast); err != nil {
			t.Fatalf("PS sends result: %v", err)
		}
	}
	exact := gradproto.ExactSums(grads, plan.Values)
	for i, conn := range workers {
		got := map[uint32]bool{}
		for len(got) < frags {
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("worker %s has %d of %d results: %v", job.Workers[i], len(got), frags, err)
			}
			h, vs, err := gradproto.ParsePayload(buf[:n], plan.Values)
			if err != nil || !h.Has(gradproto.FlagResult) {
				t.Fatalf("worker %s got %v (flags %#x), want a result", job.Workers[i], err, h.Flags)
			}
			for v := range vs {
				if int64(vs[v]) != exact[h.Frag][v] {
					t.Fatalf("worker %s: result of fragment %d value %d is %d, want %d", job.Workers[i], h.Frag, v, vs[v], exact[h.Frag][v])
				}
			}
			got[h.Frag] = true
		}
	}

	counters, err := ctl.ReadCounters(ctx, []uint16{plan.Job})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range counters {
		var members int
		for node, sw := range aggregatedAt {
			if sw != c.Switch {
				continue
			}
			for _, m := range plan.Members {
				if m.Node == node {
					members++
				}
			}
		}
		stats := c.Jobs[plan.Job]
		if got, want := stats[gradproto.EvReceived], uint64(members*frags); got != want {
			t.Errorf("switch %s: %d fragments received for aggregation, want %d (%d workers × %d fragments)", c.Switch, got, want, members, frags)
		}
		emitted := uint64(0)
		if members > 0 {
			emitted = frags
		}
		if got := stats[gradproto.EvEmitted]; got != emitted {
			t.Errorf("switch %s: %d partial sums sent, want %d", c.Switch, got, emitted)
		}
		var rx uint64
		for _, p := range c.Ports {
			rx += p.Rx.Packets
		}
		if rx == 0 {
			t.Errorf("switch %s: its ports received nothing: %+v", c.Switch, c.Ports)
		}
	}

	pids := map[string]int{}
	for _, s := range ctl.Switches() {
		pids[s.Name] = s.PID()
	}
	if err := ctl.Close(); err != nil {
		t.Fatal(err)
	}
	for name, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("switch %s (pid %d) still runs after Close", name, pid)
		}
	}
}

// oneSwitch is a topology of one switch with a worker and a PS.
func oneSwitch(t *testing.T) *topo.Topology {
	t.Helper()
	tp, err := topo.Parse([]byte(`name: one
nodes:
  - {name: s1, kind: switch, id: 1, programmable: true, capacity: 1Gbps}
  - {name: w1, kind: host, id: 1, role: worker}
  - {name: ps, kind: host, id: 2, role: ps}
links:
  - {endpoints: ["s1:p1", "w1:eth0"], bandwidth: 1Gbps}
  - {endpoints: ["s1:p2", "ps:eth0"], bandwidth: 1Gbps}
`), "one.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// fakeSwitch writes an executable shell script standing in for grid.
func fakeSwitch(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "grid")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// hostings are the ways of running switches, with the name a failing
// process has in errors on the one-switch topology.
var hostings = []struct {
	hosting Hosting
	who     string
}{{ProcessPerSwitch, "switch s1"}, {HostTogether, "switch-host"}}

func TestASwitchThatExitsAtStartIsNamedWithItsOutput(t *testing.T) {
	controllertest.NeedFabric(t)
	for _, h := range hostings {
		t.Run(h.hosting.String(), func(t *testing.T) {
			st := upRun(t, oneSwitch(t))
			opts := startOptions(t)
			opts.Hosting = h.hosting
			opts.Binary = fakeSwitch(t, `echo "grid switch: bind sw0: no such device" >&2; exit 3`)
			_, err := Start(context.Background(), st, opts)
			if err == nil {
				t.Fatal("Start succeeded with a switch that exits")
			}
			for _, want := range []string{h.who + " exited before it was ready", "exit status 3", "bind sw0: no such device"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			after, err := fabric.LoadState(st.Run)
			if err != nil {
				t.Fatal(err)
			}
			if len(after.Processes) != 0 {
				t.Errorf("the failed start left processes recorded: %+v", after.Processes)
			}
		})
	}
}

func TestASwitchThatNeverGetsReadyTimesOutAndIsStopped(t *testing.T) {
	controllertest.NeedFabric(t)
	for _, h := range hostings {
		t.Run(h.hosting.String(), func(t *testing.T) {
			st := upRun(t, oneSwitch(t))
			opts := startOptions(t)
			opts.Hosting = h.hosting
			pidFile := filepath.Join(t.TempDir(), "pid")
			opts.Binary = fakeSwitch(t, `echo $$ > `+pidFile+`; echo "loading..."; exec sleep 60`)
			opts.StartTimeout = 300 * time.Millisecond
			_, err := Start(context.Background(), st, opts)
			if err == nil {
				t.Fatal("Start succeeded with a switch that never gets ready")
			}
			for _, want := range []string{h.who + " not ready within 300ms", "loading..."} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			var pid int
			fmt.Sscan(string(b), &pid)
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("the switch that timed out (pid %d) was not stopped: kill 0: %v", pid, err)
			}
		})
	}
}

func TestADeploymentForAnotherTopologyIsRefusedNamingTheSwitch(t *testing.T) {
	controllertest.NeedFabric(t)
	st := upRun(t, oneSwitch(t))
	ctx := context.Background()
	ctl, err := Start(ctx, st, startOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	d := deploy(t, topo.Testbed(), solver.AlgoGRIDPaths)
	err = ctl.Install(ctx, d)
	if err == nil || !strings.Contains(err.Error(), "deployment names switch s2, which run "+st.Run+" does not have") {
		t.Errorf("got %v, want the missing switch s2 named", err)
	}
}

func TestReloadEmptiesEveryTableAndGroup(t *testing.T) {
	controllertest.NeedFabric(t)
	tp := oneSwitch(t)
	st := upRun(t, tp)
	ctx := context.Background()
	ctl, err := Start(ctx, st, startOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	if err := ctl.Install(ctx, deploy(t, tp, solver.AlgoGRIDPaths)); err != nil {
		t.Fatal(err)
	}
	cl := ctl.Switch("s1").Client()
	routes, err := cl.ReadEntries(ctx, aggregator.TableIPv4LPM)
	if err != nil || len(routes) != 2 {
		t.Fatalf("after Install: %d routes (%v), want one per host", len(routes), err)
	}
	if err := ctl.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{aggregator.TableIPv4LPM, aggregator.TablePortMAC, aggregator.TableJobMcast} {
		if es, err := cl.ReadEntries(ctx, table); err != nil || len(es) != 0 {
			t.Errorf("after Reload %s has %d entries (%v), want none", table, len(es), err)
		}
	}
	// The same plan installs again: nothing of the first one is left to collide with.
	if err := ctl.Install(ctx, deploy(t, tp, solver.AlgoGRIDPaths)); err != nil {
		t.Fatalf("installing again after Reload: %v", err)
	}
}

// TestASwitchThatLostItsPrimaryIsConnectedAgainAndTheChangeRepeated: a
// change the switch refuses as not from its primary (what a stream ended
// under load leads to: "there is no primary controller") makes the
// controller connect again and repeat it once; the plan then installs.
func TestASwitchThatLostItsPrimaryIsConnectedAgainAndTheChangeRepeated(t *testing.T) {
	controllertest.NeedFabric(t)
	tp := oneSwitch(t)
	st := upRun(t, tp)
	ctx := context.Background()
	ctl, err := Start(ctx, st, startOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	s := ctl.Switch("s1")
	first := s.Client()
	calls := 0
	err = s.asPrimary(ctx, func(cl *client.Client) error {
		calls++
		if calls == 1 {
			return status.Error(codes.PermissionDenied, "election_id: there is no primary controller")
		}
		return InstallSetup(ctx, cl, mustEntries(t, deploy(t, tp, solver.AlgoGRIDPaths), "s1"))
	})
	if err != nil {
		t.Fatalf("after connecting again: %v", err)
	}
	if calls != 2 || s.Client() == first {
		t.Errorf("%d calls, client replaced: %v; want the change repeated once on a new connection", calls, s.Client() != first)
	}
	if first.Err() == nil {
		if _, err := first.ReadEntries(ctx, aggregator.TableIPv4LPM); err == nil {
			t.Error("the old connection still works: it was not closed")
		}
	}
	routes, err := s.Client().ReadEntries(ctx, aggregator.TableIPv4LPM)
	if err != nil || len(routes) != 2 {
		t.Errorf("after the repeated install: %d routes (%v), want one per host", len(routes), err)
	}
}

func mustEntries(t *testing.T, d *aggregator.Deployment, name string) *aggregator.Setup {
	t.Helper()
	sd, ok := d.Switch(name)
	if !ok {
		t.Fatalf("deployment has no switch %s", name)
	}
	setup, err := aggregator.Entries(sd.Config)
	if err != nil {
		t.Fatal(err)
	}
	return setup
}
