package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/internal/repo"
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
		regexp.MustCompile(`(?m)^run ` + run + ` down$`),
		regexp.MustCompile(`(?m)^64 fragments of 32 values per worker$`),
		regexp.MustCompile(`(?m)^grid-paths\s+job1\s+8\s+exact\s`),
		regexp.MustCompile(`(?m)^results in ` + regexp.QuoteMeta(results) + `/` + run + `-`),
	} {
		if !want.Match(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(results, run+"-*"))
	if len(dirs) != 1 {
		t.Fatalf("results folders %v, want one", dirs)
	}
	for _, f := range []string{"summary.json", "traffic.csv", "jobs.csv", "aggregation.csv", "logs/switches/s1.log", "plan.json", "comparison.txt", "topology.svg"} {
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
	if err := fabric.Down(run); err != nil {
		t.Fatal(err)
	}
}
