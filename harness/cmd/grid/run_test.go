package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/results"
	"github.com/grid-ina/grid/harness/topo"
)

func TestRunWithAnUnknownAlgorithmNamesTheChoices(t *testing.T) {
	_, err := runGrid(t, "run", "--topo", shippedTopology(t, "testbed.yaml"), "--algo", "fastest")
	if err == nil || !strings.Contains(err.Error(), `--algo "fastest": unknown algorithm`) || !strings.Contains(err.Error(), "or all") {
		t.Errorf("got %v", err)
	}
}

// TestRunSendsRealGradientsThroughTheTestbedAndLeavesNothing runs the
// default experiment as a user does (the grid binary, from the repository
// root): the testbed with grid-paths' plan, 64 fragments per worker.
func TestRunSendsRealGradientsThroughTheTestbedAndLeavesNothing(t *testing.T) {
	if err := fabric.CanBuild(); err != nil {
		t.Skipf("cannot build network namespaces here (CI runs the tests as root): %v", err)
	}
	bin := buildGrid(t)
	run := newRunName()
	t.Cleanup(func() { fabric.Clean(run) })
	results := t.TempDir()
	cmd := exec.Command(bin, "run", "--name", run, "--results", results, "--fragments", "64")
	cmd.Dir = repo.RootOrFail(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("grid run: %v\n%s", err, out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\s*grid-paths\s+links\s`), // the comparison
		regexp.MustCompile(`(?m)^built in \d`),
		regexp.MustCompile(`(?m)^run ` + run + ` \(up\), topology .*: 9 hosts, 3 switches, \d+ links \(every node and interface: --nodes`),
		regexp.MustCompile(`(?m)^run ` + run + ` down$`),
		regexp.MustCompile(`(?m)^64 fragments of 32 values per worker$`),
		regexp.MustCompile(`(?m)^grid-paths\s+job1\s+8\s+exact\s`),
		regexp.MustCompile(`(?m)^results in ` + regexp.QuoteMeta(results) + `/` + run + `-`),
	} {
		if !want.Match(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if bytes.Contains(out, []byte("NODE  KIND")) {
		t.Errorf("the node table is listed without --nodes:\n%s", out)
	}
	dirs, _ := filepath.Glob(filepath.Join(results, run+"-*"))
	if len(dirs) != 1 {
		t.Fatalf("results folders %v, want one", dirs)
	}
	for _, f := range []string{"summary.json", "traffic.csv", "jobs.csv", "aggregation.csv", "logs/switches/switch-host.log", "logs/switches/switches.json", "plan.json", "comparison.txt", "topology.svg"} {
		if _, err := os.Stat(filepath.Join(dirs[0], f)); err != nil {
			t.Errorf("results: %v", err)
		}
	}
	nothingLeft(t, run)
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.HasPrefix(string(b), bin+"\x00") {
			t.Errorf("process %s is left: %q", filepath.Base(filepath.Dir(p)), strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}

func TestLinkRateReplacesEveryLinksRateAndNeedsAUnit(t *testing.T) {
	tp, err := topo.Load(shippedTopology(t, "testbed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := setLinkRates(tp, "20"); err == nil || !strings.Contains(err.Error(), `--link-rate: bandwidth "20" without a unit`) {
		t.Errorf("--link-rate 20: %v", err)
	}
	if err := setLinkRates(tp, "20Mbps"); err != nil {
		t.Fatal(err)
	}
	for _, l := range tp.Links {
		if l.Bandwidth != 20e6 {
			t.Errorf("link %v - %v: %v bit/s, want 20 Mbit/s", l.A, l.B, float64(l.Bandwidth))
		}
	}
}

// TestRunWithLinkRateShapesTheLinks keeps a run with --link-rate up and
// reads the PS's qdisc: tbf at the given rate, not the topology's 100 Gbps.
func TestRunWithLinkRateShapesTheLinks(t *testing.T) {
	if err := fabric.CanBuild(); err != nil {
		t.Skipf("cannot build network namespaces here (CI runs the tests as root): %v", err)
	}
	bin := buildGrid(t)
	run := newRunName()
	t.Cleanup(func() { fabric.Clean(run) })
	cmd := exec.Command(bin, "run", "--name", run, "--results", t.TempDir(), "--fragments", "16", "--link-rate", "20Mbps", "--keep")
	cmd.Dir = repo.RootOrFail(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("grid run: %v\n%s", err, out)
	}
	out, err := exec.Command("ip", "netns", "exec", fabric.NamespaceName(run, "ps"), "tc", "qdisc", "show", "dev", "eth0").CombinedOutput()
	if err != nil {
		t.Fatalf("tc qdisc show: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "tbf") || !strings.Contains(string(out), "rate 20Mbit") {
		t.Errorf("the PS's eth0 is not shaped to 20 Mbit/s:\n%s", out)
	}
	if st, err := fabric.LoadState(run); err != nil || st.Describe() != "up" {
		t.Errorf("the kept run after grid run exited: %v", err)
	}
	// The kept switches log into the run's temporary folder, which goes
	// with the run.
	logs, _ := filepath.Glob(filepath.Join(os.TempDir(), "grid-run-"+run+".*", "switches"))
	if len(logs) != 1 {
		t.Errorf("the kept run's switch logs: %v", logs)
	}
	if err := fabric.Down(run); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "grid-run-"+run+".*")); len(left) != 0 {
		t.Errorf("grid down left %v", left)
	}
}

func TestRunRefusesBadFlagsBeforeAnythingIsBuilt(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--fragments", "0"}, "--fragments 0: each worker sends at least 1 fragment"},
		{[]string{"--fragments", "-5"}, "--fragments -5"},
		{[]string{"--deadline", "0s"}, "--deadline 0s: want a positive duration"},
		{[]string{"--timeout", "-1s"}, "--timeout -1s: want a positive duration"},
		{[]string{"--values", "48"}, "--values 48: the aggregator carries 32 or 64"},
		{[]string{"--seed", "0"}, "--seed 0"},
		{[]string{"--name", "Upper"}, `--name: run name "Upper"`},
		{[]string{"--link-rate", "20"}, `--link-rate: bandwidth "20" without a unit`},
		{[]string{"--scale", "2"}, `--scale "2": want a factor in (0, 1] or "auto"`},
		{[]string{"--link-rate", "1bps"}, "--link-rate: 1bps is outside the 1Kbps..100Tbps the kernel's tbf can shape"},
		{[]string{"--topo", "/nonexistent/topo.yaml"}, "--topo: stat /nonexistent/topo.yaml"},
		{[]string{"--program", "/nonexistent/agg.p4"}, "--program: stat /nonexistent/agg.p4"},
		{[]string{"--results", "/etc/hostname"}, "--results /etc/hostname: not a directory"},
		{[]string{"--backend", "tofino"}, `--backend "tofino": want grid or bmv2`},
		{[]string{"--compiler", "p4c-dpdk"}, `--compiler "p4c-dpdk": want grid or p4c`},
	} {
		run := newRunName()
		args := append([]string{"run", "--topo", shippedTopology(t, "testbed.yaml"), "--name", run}, c.args...)
		if c.args[0] == "--name" {
			args = append([]string{"run", "--topo", shippedTopology(t, "testbed.yaml")}, c.args...)
		}
		_, err := runGrid(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("grid run %s: %v, want %q", strings.Join(c.args, " "), err, c.want)
		}
		if _, err := os.Stat(filepath.Join(fabric.StateDir, run)); err == nil {
			fabric.Clean(run)
			t.Errorf("grid run %s built run %s before refusing it", strings.Join(c.args, " "), run)
		}
	}
}

// startRun starts the grid binary's `grid run` from the repository root
// with results under a fresh folder, its output going to a buffer.
func startRun(t *testing.T, bin, run string, args ...string) (cmd *exec.Cmd, out *syncBuffer, root string) {
	t.Helper()
	root = t.TempDir()
	out = &syncBuffer{}
	cmd = exec.Command(bin, append([]string{"run", "--name", run, "--results", root}, args...)...)
	cmd.Dir = repo.RootOrFail(t)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out, root
}

// startSendingRun starts a grid run that outlasts any test (a million
// fragments per worker at 10 Mbps) and waits until its endpoints send; it
// skips the test where namespaces cannot be built.
func startSendingRun(t *testing.T) (bin, run string, cmd *exec.Cmd, out *syncBuffer, root string) {
	t.Helper()
	if err := fabric.CanBuild(); err != nil {
		t.Skipf("cannot build network namespaces here (CI runs the tests as root): %v", err)
	}
	bin = buildGrid(t)
	run = newRunName()
	t.Cleanup(func() { fabric.Clean(run) })
	cmd, out, root = startRun(t, bin, run, "--fragments", "1000000", "--link-rate", "10Mbps")
	waitOutput(t, out, "endpoints started")
	return bin, run, cmd, out, root
}

// syncBuffer is a bytes.Buffer a test reads while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitOutput waits until out holds want, failing after a minute.
func waitOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(out.String(), want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output:\n%s", want, out)
		}
	}
}

// checkEvidence checks that a run that stopped short left one results
// folder marked with status, holding the reason, the plan, the traffic,
// the finished jobs and every log, and that every log file the output
// names exists.
func checkEvidence(t *testing.T, root, run, output string, status results.Status) results.Summary {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, run+"-*-"+string(status)))
	if len(dirs) != 1 {
		t.Fatalf("results folders %v, want one marked %s; output:\n%s", dirs, status, output)
	}
	if !strings.Contains(output, dirs[0]) {
		t.Errorf("the output does not say where the results are (%s):\n%s", dirs[0], output)
	}
	for _, f := range []string{"summary.json", "failure.txt", "plan.json", "traffic.csv", "jobs.csv", "comparison.txt", "logs/grid-run.log", "logs/switches/switch-host.log", "logs/1-grid-paths/job1.json", "logs/1-grid-paths/job1-ps.log", "logs/1-grid-paths/job1-worker0.log"} {
		if _, err := os.Stat(filepath.Join(dirs[0], f)); err != nil {
			t.Errorf("results: %v", err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dirs[0], "logs", "grid-run.log")); err != nil || !strings.Contains(string(b), "building the fabric") {
		t.Errorf("logs/grid-run.log lacks grid run's own log: %v\n%s", err, b)
	}
	for _, m := range regexp.MustCompile(`\((/[^ ()]+\.log)\)`).FindAllStringSubmatch(output, -1) {
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("the output names %s, which does not exist", m[1])
		}
	}
	b, err := os.ReadFile(filepath.Join(dirs[0], "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s results.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	// The plan failed (an error stopped it), or it ran and a job says why
	// it did not verify.
	planFailed := len(s.Algorithms) == 1 && (s.Algorithms[0].Failed != "" || len(s.Algorithms[0].Jobs) == 1 && len(s.Algorithms[0].Jobs[0].Failures) > 0)
	if s.Status != status || s.Reason == "" || s.Verified || !planFailed {
		t.Errorf("summary: status %q, reason %q, verified %v, algorithms %+v", s.Status, s.Reason, s.Verified, s.Algorithms)
	}
	return s
}

// TestRunWhoseWorkerDiesFailsAtOnceAndKeepsWhatItLearned kills a worker
// while the endpoints send: it leaves no report, the run fails at once
// (not at the far deadline), and its folder keeps the reason, the logs the
// error names and the traffic until then.
// TestRunThatFailsKeepsWhatItLearned: with a 1 ms deadline the workers
// give up right after the start signal; the run fails, and its folder
// keeps the reason, the job that finished (unverified), the logs the error
// names.
func TestRunThatFailsKeepsWhatItLearned(t *testing.T) {
	if err := fabric.CanBuild(); err != nil {
		t.Skipf("cannot build network namespaces here (CI runs the tests as root): %v", err)
	}
	bin := buildGrid(t)
	run := newRunName()
	t.Cleanup(func() { fabric.Clean(run) })
	cmd, out, root := startRun(t, bin, run, "--deadline", "1ms")
	if err := cmd.Wait(); err == nil {
		t.Fatalf("grid run with a 1 ms deadline succeeded:\n%s", out)
	}
	s := checkEvidence(t, root, run, out.String(), results.StatusFailed)
	if len(s.Algorithms) == 1 && (len(s.Algorithms[0].Jobs) != 1 || s.Algorithms[0].Jobs[0].Verified) {
		t.Errorf("the job whose endpoints all reported is not kept as unverified: %+v", s.Algorithms[0].Jobs)
	}
	nothingLeft(t, run)
}

// TestRunWhoseEndpointsDieFailsAtOnceAndKeepsWhatItLearned kills the
// process running the workers and PSs (the endpoint host) while they send:
// the run fails at once, naming it and an endpoint left without a report.
func TestRunWhoseEndpointsDieFailsAtOnceAndKeepsWhatItLearned(t *testing.T) {
	bin, run, cmd, out, root := startSendingRun(t)
	host := runningProcess(t, bin, "endpoint-host")
	if err := syscall.Kill(host, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatalf("grid run whose endpoints were killed succeeded:\n%s", out)
	}
	s := checkEvidence(t, root, run, out.String(), results.StatusFailed)
	if !strings.Contains(s.Reason, "endpoint-host") || !strings.Contains(s.Reason, "exited without job1-ps's report") {
		t.Errorf("the reason does not name the process and the endpoint that failed: %s", s.Reason)
	}
	nothingLeft(t, run)
}

// runningProcess finds the PID of the running bin process whose command
// line holds all of args.
func runningProcess(t *testing.T, bin string, args ...string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		argv := strings.Split(string(b), "\x00")
		if err != nil || argv[0] != bin {
			continue
		}
		line := " " + strings.Join(argv, " ") + " "
		found := true
		for _, a := range args {
			found = found && strings.Contains(line, " "+a+" ")
		}
		if found {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return pid
		}
	}
	t.Fatalf("no %s process with %v", bin, args)
	return 0
}

// TestRunInterruptedKeepsWhatItLearned stops a long run with SIGTERM once
// its endpoints send: the folder is marked interrupted and keeps the
// traffic sampled so far and every log.
func TestRunInterruptedKeepsWhatItLearned(t *testing.T) {
	_, run, cmd, out, root := startSendingRun(t)
	time.Sleep(300 * time.Millisecond) // a few monitor samples
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err == nil {
		t.Fatalf("an interrupted grid run exited 0:\n%s", out)
	}
	s := checkEvidence(t, root, run, out.String(), results.StatusInterrupted)
	if len(s.Algorithms) == 1 && s.Algorithms[0].Traffic.Samples < 2 {
		t.Errorf("traffic: %d samples kept, want the ones taken before the interruption", s.Algorithms[0].Traffic.Samples)
	}
	nothingLeft(t, run)
}

// TestRunFindsItsDefaultFilesFromAnyDirectory runs bin/grid, as the README
// builds it, from a directory outside the tree: the default topology,
// program and results folder resolve against the tree (the --seed 0 it is
// given is refused only after the files were checked).
func TestRunFindsItsDefaultFilesFromAnyDirectory(t *testing.T) {
	root := repo.RootOrFail(t)
	bin := filepath.Join(root, "bin", fmt.Sprintf("grid-test-%d", os.Getpid()))
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Cleanup(func() { os.Remove(bin) })
	cmd := exec.Command(bin, "run", "--seed", "0")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--seed 0") {
		t.Fatalf("grid run --seed 0 from %s: %v\n%s", cmd.Dir, err, out)
	}
}
