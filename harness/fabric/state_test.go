package fabric

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/grid-ina/grid/harness/topo"
)

// useTempStateDir points StateDir at a fresh directory for one test.
func useTempStateDir(t *testing.T) {
	t.Helper()
	old := StateDir
	StateDir = t.TempDir()
	t.Cleanup(func() { StateDir = old })
}

func fatTreeBlueprint(t *testing.T, k int) *blueprint {
	t.Helper()
	tp, err := topo.FatTree(k, 0)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := tp.Plan()
	if err != nil {
		t.Fatal(err)
	}
	bp, err := newBlueprint("ft", "g123", tp, plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return bp
}

func TestBlueprintOfFatTreeK4NamesPortsAfterP4PortsWithDistinctIndexes(t *testing.T) {
	bp := fatTreeBlueprint(t, 4)
	if len(bp.nodes) != 36 || len(bp.links) != 48 {
		t.Fatalf("%d nodes, %d links; want 36 and 48", len(bp.nodes), len(bp.links))
	}
	ifaces := 0
	indexes := map[int]bool{}
	for _, np := range bp.nodes {
		names := map[string]bool{}
		for _, ip := range np.ifaces {
			ifaces++
			if indexes[ip.index] || ip.index <= ifindexBase {
				t.Errorf("%s %s: ifindex %d reused or below %d", np.ns, ip.name, ip.index, ifindexBase)
			}
			indexes[ip.index] = true
			if names[ip.name] {
				t.Errorf("%s: interface name %s twice", np.ns, ip.name)
			}
			names[ip.name] = true
			if np.node.Kind == topo.KindSwitch && ip.host != nil || np.node.Kind == topo.KindHost && ip.host == nil {
				t.Errorf("%s %s: host addressing on the wrong kind of node", np.ns, ip.name)
			}
		}
		if np.ns != "ft-"+np.node.Name {
			t.Errorf("namespace of %s is %s", np.node.Name, np.ns)
		}
	}
	if ifaces != 96 {
		t.Fatalf("%d interfaces, want 96 (two per link)", ifaces)
	}
	e1 := bp.nodes[indexOfNode(t, bp, "e1")]
	if got := e1.ifaces[0]; got.port != 1 || got.name != "g123s13p1" || got.mac.String() != "02:01:00:0d:00:01" {
		t.Fatalf("e1's first port: port %d name %s mac %s", got.port, got.name, got.mac)
	}
}

func indexOfNode(t *testing.T, bp *blueprint, name string) int {
	for i, np := range bp.nodes {
		if np.node.Name == name {
			return i
		}
	}
	t.Fatalf("no node %s", name)
	return -1
}

func TestStateRoundTripsThroughTheStateFile(t *testing.T) {
	useTempStateDir(t)
	bp := fatTreeBlueprint(t, 4)
	st := bp.state()
	if err := os.Mkdir(runDir("ft"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := st.save(); err != nil {
		t.Fatal(err)
	}
	got, err := LoadState("ft")
	if err != nil {
		t.Fatal(err)
	}
	h1 := got.Node("h1")
	if h1 == nil || h1.Namespace != "ft-h1" || len(h1.Interfaces) != 1 {
		t.Fatalf("h1 = %+v", h1)
	}
	eth0 := h1.Port(0)
	if eth0.IP != "10.0.1.1/24" || eth0.Gateway != "10.0.1.254" || eth0.Peer != (topo.Endpoint{Node: "e1", Port: 1}) || eth0.RateBits != 100e9 {
		t.Fatalf("h1 eth0 = %+v", eth0)
	}
	if got.Node("e1").Port(1).Name != "g123s13p1" {
		t.Fatalf("e1 port 1 = %+v", got.Node("e1").Port(1))
	}
	if runs, _ := Runs(); len(runs) != 1 || runs[0] != "ft" {
		t.Fatalf("Runs() = %v", runs)
	}
	if _, err := LoadState("nope"); err == nil {
		t.Fatal("loading a missing run succeeded")
	}
}

func TestRecordProcessDropsExitedProcesses(t *testing.T) {
	useTempStateDir(t)
	st := &State{Run: "r", Status: StatusUp}
	if err := os.Mkdir(runDir("r"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := st.save(); err != nil {
		t.Fatal(err)
	}
	short := exec.Command("true")
	if err := short.Start(); err != nil {
		t.Fatal(err)
	}
	p, err := ProcessOf(short.Process.Pid, "h1", "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := RecordProcess("r", p); err != nil {
		t.Fatal(err)
	}
	short.Wait()
	self, err := ProcessOf(os.Getpid(), "", "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := RecordProcess("r", self); err != nil {
		t.Fatal(err)
	}
	got, _ := LoadState("r")
	if len(got.Processes) != 1 || got.Processes[0].PID != os.Getpid() {
		t.Fatalf("processes = %+v; want only this test process", got.Processes)
	}
	if err := ForgetProcess("r", os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if got, _ := LoadState("r"); len(got.Processes) != 0 {
		t.Fatalf("processes after forget = %+v", got.Processes)
	}
}

func TestRecordingProcessesLeavesTheStateFileAsItWasAndKeepsOlderRecords(t *testing.T) {
	useTempStateDir(t)
	st := fatTreeBlueprint(t, 4).state()
	st.Status = StatusUp
	older, err := ProcessOf(os.Getppid(), "e1", "older")
	if err != nil {
		t.Fatal(err)
	}
	st.Processes = []Process{older} // as a grid before processes.json kept them
	if err := os.Mkdir(runDir("ft"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := st.save(); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(statePath("ft"))
	if err != nil {
		t.Fatal(err)
	}
	self, err := ProcessOf(os.Getpid(), "h1", "test")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := RecordProcess("ft", self); err != nil {
			t.Fatal(err)
		}
	}
	after, err := os.Stat(statePath("ft"))
	if err != nil {
		t.Fatal(err)
	}
	if !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Errorf("recording processes rewrote state.json (%v, %d bytes -> %v, %d bytes)", before.ModTime(), before.Size(), after.ModTime(), after.Size())
	}
	got, err := LoadState("ft")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Processes) != 4 || got.Processes[0].Role != "older" || got.Processes[3].PID != os.Getpid() {
		t.Errorf("processes %+v, want the older record and this process three times", got.Processes)
	}
	// nodeNamespace reads the state once, and again only once it changes.
	if ns, err := nodeNamespace("ft", "h1"); err != nil || ns != "/run/netns/ft-h1" {
		t.Fatalf("namespace of h1: %q, %v", ns, err)
	}
	st.Status = StatusBuilding
	if err := st.save(); err != nil {
		t.Fatal(err)
	}
	if _, err := nodeNamespace("ft", "h1"); err == nil || !strings.Contains(err.Error(), "is not up") {
		t.Errorf("after the run changed to building: %v, want it refused as not up", err)
	}
}

func TestProcessWithOtherStartTimeIsNotAlive(t *testing.T) {
	self, err := ProcessOf(os.Getpid(), "", "test")
	if err != nil {
		t.Fatal(err)
	}
	if !self.Alive() {
		t.Fatal("this process is not alive")
	}
	recycled := self
	recycled.Start++
	if recycled.Alive() {
		t.Fatal("a PID with another start time counts as the recorded process")
	}
}

func TestStopProcessesEndsRecordedProcesses(t *testing.T) {
	stubborn := exec.Command("sh", "-c", "trap '' TERM; while :; do sleep 0.1; done")
	polite := exec.Command("sleep", "60")
	var procs []Process
	for _, c := range []*exec.Cmd{stubborn, polite} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		time.Sleep(20 * time.Millisecond) // let sh install its trap
		p, err := ProcessOf(c.Process.Pid, "", "test")
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
	}
	if err := stopProcesses(procs); err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if p.Alive() {
			t.Errorf("process %d still alive", p.PID)
		}
	}
}

func TestTbfBurstHoldsTwoFramesAndLimitCoversLatency(t *testing.T) {
	burst, limit := tbfParams(100e6/8, 1500)
	if burst != 12500 {
		t.Errorf("burst at 100 Mbit/s = %d, want 1 ms worth (12500)", burst)
	}
	if want := uint32(12500 + 100e6/8*0.02); limit != want {
		t.Errorf("limit at 100 Mbit/s = %d, want %d (20 ms beyond the burst)", limit, want)
	}
	// A slow link, as an emulation scaled down makes it, still queues
	// tbfMinQueue beyond the burst: the windows of the workers sharing it.
	burst, limit = tbfParams(1e6/8, 1500)
	if burst != 2*1514 || limit != 2*1514+tbfMinQueue {
		t.Errorf("at 1 Mbit/s burst %d, limit %d; want two frames and %d beyond", burst, limit, tbfMinQueue)
	}
	if d := QueueDelay(1e6, 1500); d < 500*time.Millisecond || d > 600*time.Millisecond {
		t.Errorf("a full queue at 1 Mbit/s drains in %v, want about 0.55 s", d)
	}
	burst, _ = tbfParams(100e9/8, 1500)
	if burst != 12_500_000 {
		t.Errorf("burst at 100 Gbit/s = %d, want 1 ms worth (12500000)", burst)
	}
}

// TestRootQdiscSendsTheLinksDelayLossAndRateToNetem checks what a kernel with
// netem would be asked for; this one has none, so the path cannot run here.
func TestRootQdiscSendsTheLinksDelayLossAndRateToNetem(t *testing.T) {
	iface := func(l *topo.Link) *ifacePlan {
		return &ifacePlan{index: 105, mtu: 1500, link: &linkPlan{link: l}}
	}
	impaired := iface(&topo.Link{Bandwidth: 10 * topo.Gbps, Delay: 2 * time.Millisecond, Loss: 0.5})

	q, ok := rootQdisc(impaired, true).(*netlink.Netem)
	if !ok {
		t.Fatalf("with netem, an impaired link gets %T, want *netlink.Netem", rootQdisc(impaired, true))
	}
	if a := q.Attrs(); a.LinkIndex != 105 || a.Parent != netlink.HANDLE_ROOT || a.Handle != netlink.MakeHandle(1, 0) {
		t.Errorf("netem attributes %+v, want root qdisc 1: on ifindex 105", a)
	}
	if want := uint32(2000 * netlink.TickInUsec()); q.Latency != want {
		t.Errorf("latency %d ticks, want 2 ms = %d ticks", q.Latency, want)
	}
	if want := netlink.Percentage2u32(0.5); q.Loss != want {
		t.Errorf("loss %d, want 0.5%% = %d", q.Loss, want)
	}
	if q.Rate64 != 1_250_000_000 {
		t.Errorf("rate %d B/s, want 10 Gbit/s = 1250000000", q.Rate64)
	}
	// 10 Gbit/s over 2 ms delay + 20 ms queueing is 27.5 MB: 18164 frames of 1514 bytes.
	if q.Limit != 18164 {
		t.Errorf("limit %d packets, want 18164 (the frames in flight)", q.Limit)
	}

	lossOnly, ok := rootQdisc(iface(&topo.Link{Loss: 1}), true).(*netlink.Netem)
	if !ok || lossOnly.Rate64 != 0 || lossOnly.Latency != 0 || lossOnly.Limit != netemDefaultLimit || lossOnly.Loss != netlink.Percentage2u32(1) {
		t.Errorf("loss-only link gets %+v, want unlimited rate, no delay, the default limit and 1%% loss", lossOnly)
	}

	if tbf, ok := rootQdisc(impaired, false).(*netlink.Tbf); !ok || tbf.Rate != 1_250_000_000 {
		t.Errorf("without netem, an impaired link gets %+v, want tbf at 1250000000 B/s", rootQdisc(impaired, false))
	}
	if tbf, ok := rootQdisc(iface(&topo.Link{Bandwidth: topo.Gbps}), true).(*netlink.Tbf); !ok || tbf.Rate != 125_000_000 {
		t.Errorf("an unimpaired link gets %+v, want tbf at 125000000 B/s", rootQdisc(iface(&topo.Link{Bandwidth: topo.Gbps}), true))
	}
	if q := rootQdisc(iface(&topo.Link{}), true); q != nil {
		t.Errorf("a link without bandwidth, delay or loss gets %v, want no qdisc", q)
	}
}
