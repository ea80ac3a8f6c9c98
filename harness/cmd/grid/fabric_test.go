package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/p4test/targettest"
)

// These tests drive the grid binary as a user would, including killing it in
// the middle of a build. They need root and skip without it.

// buildGrid compiles the grid command into a directory every user can read.
func buildGrid(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "grid")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// Let the unprivileged-user test execute it.
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	return bin
}

func newRunName() string {
	b := make([]byte, 3)
	rand.Read(b)
	return "gt" + hex.EncodeToString(b)
}

// nothingLeft fails the test if anything of run remains.
func nothingLeft(t *testing.T, run string) {
	t.Helper()
	entries, _ := os.ReadDir(fabric.NetnsDir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), run+"-") {
			t.Fatalf("namespace %s left behind", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(fabric.StateDir, run)); err == nil {
		t.Fatalf("state of run %s left behind", run)
	}
}

func countNamespaces(run string) int {
	entries, _ := os.ReadDir(fabric.NetnsDir)
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), run+"-") {
			n++
		}
	}
	return n
}

// startUpAndStopMidBuild starts `grid up` on the k=8 fat-tree (272
// namespaces), waits until it has created some namespaces, and sends sig.
func startUpAndStopMidBuild(t *testing.T, bin, run string, sig syscall.Signal) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "up", shippedTopology(t, "fattree-k8.yaml"), "--name", run)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for countNamespaces(run) < 10 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("grid up created no namespaces within 20 s: %s", stderr.String())
		}
		time.Sleep(200 * time.Microsecond)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

func TestFabricCommands(t *testing.T) {
	if err := fabric.CanBuild(); err != nil {
		t.Skipf("cannot build network namespaces here (CI runs the tests as root): %v", err)
	}
	bin := buildGrid(t)
	grid := func(args ...string) *exec.Cmd { return exec.Command(bin, args...) }

	t.Run("NotRootCreatesNothing", func(t *testing.T) {
		run := newRunName()
		t.Cleanup(func() { fabric.Clean(run) })
		cmd := grid("up", shippedTopology(t, "testbed.yaml"), "--name", run)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("grid up as nobody: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "needs root") {
			t.Fatalf("error does not say root is needed:\n%s", out)
		}
		nothingLeft(t, run)
	})

	// The classes of bad input: nodes s1, h1, h2 on lines 3-5, links from line 7.
	const nodes = "name: bad\nnodes:\n  - {name: s1, kind: switch}\n  - {name: h1, kind: host}\n  - {name: h2, kind: host}\nlinks:\n"
	const link1 = `  - {endpoints: ["s1:p1", "h1:eth0"]}` + "\n"
	for _, c := range []struct{ name, file, want string }{
		{"UnknownNode", nodes + link1 + `  - {endpoints: ["s1:p2", "h9:eth0"]}`, `:8: links[1].endpoints: unknown node "h9"`},
		{"DuplicateName", strings.Replace(nodes, "h2", "h1", 1) + link1, `:5: nodes[2].name: duplicate node name "h1" (first defined at line 4)`},
		{"PortClash", nodes + link1 + `  - {endpoints: ["s1:p1", "h2:eth0"]}`,
			`:8: links[1].endpoints: port clash: s1:p1 is already used by the link s1:p1--h1:eth0 at line 7`},
		{"UnknownField", nodes + link1 + `  - {endpoints: ["s1:p2", "h2:eth0"], colour: red}`, `:8: links[1].colour: unknown field "colour"`},
		{"BandwidthWithoutUnit", nodes + link1 + `  - {endpoints: ["s1:p2", "h2:eth0"], bandwidth: 100}`, `:8: links[1].bandwidth: bandwidth "100" without a unit`},
	} {
		t.Run("BadTopologyCreatesNothing/"+c.name, func(t *testing.T) {
			run := newRunName()
			t.Cleanup(func() { fabric.Clean(run) })
			bad := filepath.Join(t.TempDir(), "bad.yaml")
			if err := os.WriteFile(bad, []byte(c.file+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := grid("up", bad, "--name", run).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("grid up on\n%s\nexited with %v:\n%s", c.file, err, out)
			}
			if want := "grid: " + bad + c.want; !strings.HasPrefix(string(out), want) || strings.Count(string(out), "\n") != 1 {
				t.Fatalf("output is not the one line %q...:\n%s", want, out)
			}
			nothingLeft(t, run)
		})
	}

	t.Run("KilledUpIsRemovedByClean", func(t *testing.T) {
		run := newRunName()
		t.Cleanup(func() { fabric.Clean(run) })
		cmd, stderr := startUpAndStopMidBuild(t, bin, run, syscall.SIGKILL)
		cmd.Wait()
		st, err := fabric.LoadState(run)
		if err != nil {
			t.Fatalf("no state after the killed build: %v (%s)", err, stderr)
		}
		if st.Status != fabric.StatusBuilding {
			t.Fatalf("run status %q after SIGKILL mid-build, want building", st.Status)
		}
		if countNamespaces(run) == 0 {
			t.Fatal("the killed build left no namespaces: nothing to prove clean on")
		}
		if out, err := grid("ls").CombinedOutput(); err != nil || !strings.Contains(string(out), run) || !strings.Contains(string(out), "crashed") {
			t.Fatalf("grid ls does not show the crashed run: %v\n%s", err, out)
		}
		out, err := grid("clean", run).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "removed run "+run) {
			t.Fatalf("grid clean %s: %v\n%s", run, err, out)
		}
		nothingLeft(t, run)
		ifs, err := net.Interfaces()
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range ifs {
			if strings.HasPrefix(i.Name, st.Tag) {
				t.Errorf("interface %s of the killed run is in the root namespace", i.Name)
			}
		}
	})

	for name, sig := range map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM} {
		t.Run("UpRollsBackByItselfOn"+name, func(t *testing.T) {
			run := newRunName()
			t.Cleanup(func() { fabric.Clean(run) })
			cmd, stderr := startUpAndStopMidBuild(t, bin, run, sig)
			err := cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("grid up stopped by %v exited with %v; stderr:\n%s", sig, err, stderr)
			}
			if !strings.Contains(stderr.String(), "interrupted") {
				t.Fatalf("stderr does not report the interruption:\n%s", stderr)
			}
			nothingLeft(t, run)
		})
	}

	t.Run("LsListsTheLinksWhoseDelayAndLossAwaitTheSwitch", func(t *testing.T) {
		run := newRunName()
		t.Cleanup(func() { fabric.Clean(run) })
		file := filepath.Join(t.TempDir(), "delay.yaml")
		yaml := "nodes:\n  - {name: s1, kind: switch}\n  - {name: h1, kind: host}\n  - {name: h2, kind: host}\nlinks:\n" +
			"  - {endpoints: [\"s1:p1\", \"h1:eth0\"], bandwidth: 1Gbps, delay: 2ms, loss: 0.5%}\n  - {endpoints: [\"s1:p2\", \"h2:eth0\"]}\n"
		if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := grid("up", file, "--name", run).CombinedOutput(); err != nil {
			t.Fatalf("grid up: %v\n%s", err, out)
		}
		st, err := fabric.LoadState(run)
		if err != nil {
			t.Fatal(err)
		}
		out, err := grid("ls", run).CombinedOutput()
		if err != nil {
			t.Fatalf("grid ls: %v\n%s", err, out)
		}
		listed := strings.Contains(string(out), "delay and loss NOT applied on 1 link(s)") &&
			strings.Contains(string(out), "\n  s1:p1--h1:eth0  delay 2ms  loss 0.5%\n")
		if listed == st.Emulation.Netem {
			t.Fatalf("netem present: %v, but grid ls lists the link awaiting emulation: %v:\n%s", st.Emulation.Netem, listed, out)
		}
	})

	t.Run("ExecPassesStreamsAndExitStatus", func(t *testing.T) {
		run := newRunName()
		t.Cleanup(func() { fabric.Clean(run) })
		if out, err := grid("up", shippedTopology(t, "testbed.yaml"), "--name", run).CombinedOutput(); err != nil {
			t.Fatalf("grid up: %v\n%s", err, out)
		}
		cmd := grid("exec", run, "w1", "--", "sh", "-c", "cat; ip -o -4 addr show; exit 3")
		cmd.Stdin = strings.NewReader("from stdin\n")
		out, err := cmd.Output()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 3 {
			t.Fatalf("exit status %v, want 3", err)
		}
		if !strings.HasPrefix(string(out), "from stdin\n") {
			t.Fatalf("stdin did not reach the command: %q", out)
		}
		st, _ := fabric.LoadState(run)
		w1 := st.Node("w1").Port(0)
		if !strings.Contains(string(out), w1.IP) || !strings.Contains(string(out), w1.Name) {
			t.Fatalf("command did not run in w1's namespace (want %s on %s):\n%s", w1.IP, w1.Name, out)
		}
		if strings.Contains(string(out), st.Node("w2").Port(0).IP) {
			t.Fatalf("w1's namespace shows w2's address:\n%s", out)
		}
		if out, err := grid("ls", run).CombinedOutput(); err != nil || !regexp.MustCompile(`(?m)^w1 +host +`+run+`-w1 +eth0 +0 .* s1:p1$`).Match(out) {
			t.Fatalf("grid ls %s: %v\n%s", run, err, out)
		}
		if out, err := grid("down", run).CombinedOutput(); err != nil {
			t.Fatalf("grid down: %v\n%s", err, out)
		}
		nothingLeft(t, run)
	})
}

// TestCleanAfterTheStateFileWasRemovedRemovesTheNamespaces is the issue's
// case: `grid up`, rm state.json, `grid clean RUN` must remove the
// namespaces and say so, not report success while they remain.
func TestCleanAfterTheStateFileWasRemovedRemovesTheNamespaces(t *testing.T) {
	if err := fabric.CanBuild(); err != nil {
		t.Skipf("cannot build network namespaces here (CI runs the tests as root): %v", err)
	}
	bin := buildGrid(t)
	run := newRunName()
	t.Cleanup(func() { fabric.Clean(run) })
	if out, err := exec.Command(bin, "up", shippedTopology(t, "testbed.yaml"), "--name", run).CombinedOutput(); err != nil {
		t.Fatalf("grid up: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(fabric.StateDir, run, "state.json"), []byte("garbage{"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "ls").CombinedOutput()
	if err != nil || !regexp.MustCompile(run+`\s+unreadable state: 12 namespaces, 0 processes, 0 temporary folders left \(remove with 'grid clean `+run+`'\)`).Match(out) {
		t.Errorf("grid ls with a corrupt state: %v\n%s", err, out)
	}
	if err := os.Remove(filepath.Join(fabric.StateDir, run, "state.json")); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(bin, "clean", run).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "removed run "+run+": its state was missing") || !strings.Contains(string(out), "removed 12 namespaces") {
		t.Errorf("grid clean: %v\n%s", err, out)
	}
	nothingLeft(t, run)
}

// TestAKilledRunIsListedDeadAndCleanRemovesItsTempFolder kills `grid run`
// with SIGKILL while its endpoints send: `grid ls` shows the run dead and
// `grid clean` removes it with its temporary folder.
func TestAKilledRunIsListedDeadAndCleanRemovesItsTempFolder(t *testing.T) {
	bin, run, cmd, _, _ := startSendingRun(t)
	temps, _ := filepath.Glob(filepath.Join(os.TempDir(), "grid-run-"+run+".*"))
	if len(temps) != 1 {
		t.Fatalf("temporary folders of the run: %v", temps)
	}
	cmd.Process.Kill()
	cmd.Wait()
	ls, err := exec.Command(bin, "ls").CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)^`+run+`\s+dead: process \d+, which it lived with, is gone`).Match(ls) {
		t.Errorf("grid ls after SIGKILL: %v\n%s", err, ls)
	}
	clean, err := exec.Command(bin, "clean", run).CombinedOutput()
	if err != nil || !strings.Contains(string(clean), "removed run "+run) || !strings.Contains(string(clean), temps[0]) {
		t.Errorf("grid clean: %v\n%s", err, clean)
	}
	if _, err := os.Stat(temps[0]); err == nil {
		t.Errorf("%s is left", temps[0])
	}
	nothingLeft(t, run)
}

func TestUpAndSimulateRefuseBadCountsAndNamesBeforeBuilding(t *testing.T) {
	run := newRunName()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"up", shippedTopology(t, "testbed.yaml"), "--name", run, "--workers", "-3"}, "grid up: --workers -3: want a positive count"},
		{[]string{"up", shippedTopology(t, "testbed.yaml"), "--name", "Upper"}, `grid up: --name: run name "Upper"`},
		{[]string{"up", shippedTopology(t, "testbed.yaml"), "--name", run, "--switches", "tofino"}, `grid up: --switches "tofino": want grid or bmv2`},
	} {
		out, code := exitCode(t, c.args...)
		if code == 0 || !strings.Contains(out, c.want) {
			t.Errorf("grid %s: exit %d, %q, want %q", strings.Join(c.args, " "), code, out, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(fabric.StateDir, run)); err == nil {
		fabric.Clean(run)
		t.Errorf("grid up --workers -3 built run %s", run)
	}
	if _, err := runGrid(t, "simulate", "--runs", "0", "--results", t.TempDir()); err == nil || !strings.Contains(err.Error(), "--runs 0: at least 1 instance per point") {
		t.Errorf("grid simulate --runs 0: %v", err)
	}
}

// TestUpWithSwitchesLeavesRealBmv2RunningUntilDown builds the testbed with
// a simple_switch_grpc per switch loaded with the aggregator: each serves
// P4Runtime in its namespace after grid up returns, and grid down stops it.
func TestUpWithSwitchesLeavesRealBmv2RunningUntilDown(t *testing.T) {
	targettest.Bmv2OrSkip(t)
	run := newRunName()
	out, err := runGrid(t, "up", shippedTopology(t, "testbed.yaml"), "--name", run, "--switches", "bmv2")
	if err != nil {
		t.Fatal(err)
	}
	defer fabric.Down(run)
	if !strings.Contains(out, "switches: 3 bmv2") {
		t.Errorf("grid up says %q, want the 3 bmv2 switches", out)
	}
	st, err := fabric.LoadState(run)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range st.Processes {
		pids = append(pids, p.PID)
	}
	if len(pids) != 3 {
		t.Fatalf("the run records %d processes, want a switch per switch node", len(pids))
	}
	if _, err := runGrid(t, "down", run); err != nil {
		t.Fatal(err)
	}
	// grid ran in this process, whose goroutines reap the switches.
	deadline := time.Now().Add(3 * time.Second)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("switch process %d still runs after grid down", pid)
		}
	}
}
