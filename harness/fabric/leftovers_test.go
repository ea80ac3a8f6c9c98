package fabric

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/topo"
)

// sleepIn starts `sleep` inside a namespace without recording it in any
// run's state, as a process a killed grid left behind would be; the test
// reaps it.
func sleepIn(t *testing.T, ns string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", ns, "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// ip netns exec replaces itself with sleep once inside.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", cmd.Process.Pid)); strings.TrimSpace(string(comm)) == "sleep" {
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatal("sleep did not start inside the namespace")
		}
	}
}

// exited reports whether cmd's process is gone (or a zombie) within 5 s.
func exited(cmd *exec.Cmd) bool {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

func TestCleanOfARunWhoseStateFileIsGoneFindsItsNamespacesAndProcessesInTheKernel(t *testing.T) {
	needRoot(t)
	st := upRun(t, topo.Testbed())
	sleeper := sleepIn(t, st.Node("w1").Namespace)
	if err := os.Remove(statePath(st.Run)); err != nil {
		t.Fatal(err)
	}
	rep, err := Clean(st.Run)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 {
		t.Fatalf("clean reported %+v", rep)
	}
	r := rep.Runs[0]
	if len(r.Namespaces) != len(st.Nodes) || !strings.HasPrefix(r.State, "missing") {
		t.Errorf("removed %d namespaces of %d, state %q", len(r.Namespaces), len(st.Nodes), r.State)
	}
	if len(r.Processes) != 1 || r.Processes[0].PID != sleeper.Process.Pid || r.Processes[0].Node != st.Node("w1").Namespace {
		t.Errorf("stopped %+v, want the sleep in %s", r.Processes, st.Node("w1").Namespace)
	}
	if !strings.Contains(r.Summary(), "removed 12 namespaces") || !strings.Contains(r.Summary(), "sleep in "+st.Run+"-w1") {
		t.Errorf("summary %q does not say what was removed", r.Summary())
	}
	if !exited(sleeper) {
		t.Error("the process inside the run's namespace still runs")
	}
	requireNothingLeft(t, st.Run, st.Tag)
}

func TestCleanOfACorruptStateRemovesTheRunAndSaysWhy(t *testing.T) {
	needRoot(t)
	st := upRun(t, topo.Testbed())
	if err := os.WriteFile(statePath(st.Run), []byte("garbage{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Down(st.Run); err == nil || !strings.Contains(err.Error(), "'grid clean "+st.Run+"' removes what the run left") {
		t.Errorf("down with a corrupt state: %v", err)
	}
	rep, err := Clean(st.Run)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || !strings.HasPrefix(rep.Runs[0].State, "unreadable") || len(rep.Runs[0].Namespaces) != len(st.Nodes) {
		t.Fatalf("clean reported %+v", rep.Runs)
	}
	requireNothingLeft(t, st.Run, st.Tag)
}

func TestCleanByNameFindsARunWhoseStateDirectoryIsGone(t *testing.T) {
	needRoot(t)
	st := upRun(t, topo.Testbed())
	if err := os.RemoveAll(runDir(st.Run)); err != nil {
		t.Fatal(err)
	}
	rep, err := Clean(st.Run)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || len(rep.Runs[0].Namespaces) != len(st.Nodes) {
		t.Fatalf("clean reported %+v", rep.Runs)
	}
	requireNothingLeft(t, st.Run, st.Tag)
}

// A run named like another run's prefix ("gtX" and "gtX-b") must not take
// the other's namespaces when its own state is lost.
func TestCleanOfALostRunLeavesALongerNamedRunAlone(t *testing.T) {
	needRoot(t)
	st := upRun(t, topo.Testbed())
	longer := st.Run + "-b"
	t.Cleanup(func() { Clean(longer) })
	other, err := Up(t.Context(), topo.Testbed(), Options{Name: longer})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(statePath(st.Run)); err != nil {
		t.Fatal(err)
	}
	if _, err := Clean(st.Run); err != nil {
		t.Fatal(err)
	}
	for _, n := range other.Nodes {
		if !namespaceExists(n.Namespace) {
			t.Fatalf("cleaning %s removed %s of run %s", st.Run, n.Namespace, longer)
		}
	}
	// Even when the longer run's state is lost too, its directory claims
	// the namespaces named after it.
	if err := os.Remove(statePath(longer)); err != nil {
		t.Fatal(err)
	}
	if err := Down(st.Run); err == nil {
		t.Fatal("down of a cleaned run succeeded")
	}
	if rep, err := Clean(st.Run); err != nil || len(rep.Runs) != 0 {
		t.Fatalf("a second clean of %s: %+v, %v", st.Run, rep.Runs, err)
	}
	if !namespaceExists(other.Nodes[0].Namespace) {
		t.Fatalf("cleaning %s again removed %s's namespaces", st.Run, longer)
	}
}

func TestARunWhoseOwnerIsGoneIsDeadAndItsTempFoldersGoWithIt(t *testing.T) {
	needRoot(t)
	run := newRunName(t)
	t.Cleanup(func() { Clean(run) })
	st, err := Up(t.Context(), topo.Testbed(), Options{Name: run, Owned: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Owner == nil || st.Owner.PID != os.Getpid() || st.Dead() || st.Describe() != "up" {
		t.Fatalf("owner %+v, described %q", st.Owner, st.Describe())
	}
	mine, err := TempDir(run)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(mine) })
	if !strings.HasPrefix(filepath.Base(mine), "grid-run-"+run+".") {
		t.Fatalf("temporary folder %s is not named after the run", mine)
	}
	// A folder of the same run made by a process that is gone, as a
	// killed `grid run` leaves it.
	orphan := filepath.Join(os.TempDir(), fmt.Sprintf("grid-run-%s.%d.%d-x", run, os.Getpid(), st.Owner.Start+1))
	if err := os.Mkdir(orphan, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(orphan) })

	// The owner is gone: pretend so by recording another start time.
	st.Owner.Start++
	if err := st.save(); err != nil {
		t.Fatal(err)
	}
	saved, err := LoadState(run)
	if err != nil {
		t.Fatal(err)
	}
	if !saved.Dead() || !strings.HasPrefix(saved.Describe(), "dead") {
		t.Fatalf("a run whose owner is gone is described %q", saved.Describe())
	}
	if err := Disown(run); err != nil {
		t.Fatal(err)
	}
	if disowned, err := LoadState(run); err != nil || disowned.Dead() || disowned.Describe() != "up" {
		t.Fatalf("a disowned run: %v, %v", disowned, err)
	}
	rep, err := Clean(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || !slices.Equal(rep.Runs[0].TempDirs, []string{orphan}) {
		t.Fatalf("clean removed temporary folders %v, want only the dead maker's %s", rep.Runs, orphan)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("the folder of a live process was removed: %v", err)
	}
	requireNothingLeft(t, run, st.Tag)
}

// A process in the root namespace working on the run's temporary folder
// (as a switch host reading its configuration there) is the run's too.
func TestCleanStopsAProcessWorkingOnTheRunsFolder(t *testing.T) {
	needRoot(t)
	st := upRun(t, topo.Testbed())
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("grid-run-%s.%d.%d-host", st.Run, os.Getpid(), 1))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	host := exec.Command("sh", "-c", "sleep 60", filepath.Join(dir, "switches.json"))
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Process.Kill(); host.Wait() })
	if err := os.Remove(statePath(st.Run)); err != nil {
		t.Fatal(err)
	}
	rep, err := Clean(st.Run)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || !slices.ContainsFunc(rep.Runs[0].Processes, func(p Process) bool { return p.PID == host.Process.Pid }) {
		t.Fatalf("clean stopped %+v, not the process on %s (pid %d)", rep.Runs, dir, host.Process.Pid)
	}
	if !exited(host) {
		t.Error("the process on the run's folder still runs")
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s is left", dir)
	}
	requireNothingLeft(t, st.Run, st.Tag)
}
