package runner

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

func defaultJobs(t *testing.T, tp *topo.Topology) []workload.Job {
	t.Helper()
	jobs, err := workload.Default(tp)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// loadShipped loads one of the project's topology files.
func loadShipped(t *testing.T, name string) *topo.Topology {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	tp, err := topo.Load(filepath.Join(root, "topologies", name))
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

var roomyMachine = Machine{Cores: 2, MemAvailable: 24 << 30, Files: 1 << 20, FilesHard: 1 << 20}

func TestEstimateCountsTheTestbedsPiecesAndHops(t *testing.T) {
	tp := topo.Testbed()
	e := EstimateRun(tp, defaultJobs(t, tp), EstimateOptions{Fragments: 100, Plans: 1, Machine: roomyMachine})
	if e.Switches != 3 || e.Endpoints != 9 || e.Hosts != 9 {
		t.Fatalf("estimate %+v: want 3 switches, 9 hosts, 9 endpoints", e)
	}
	// Every worker of the testbed is 2 to 4 links from the PS; up and
	// back down, 100 fragments each.
	if e.FragmentHops < 8*2*100*2 || e.FragmentHops > 8*2*100*4 {
		t.Fatalf("fragment-hops %v for 8 workers of 100 fragments, 2-4 hops from the PS", e.FragmentHops)
	}
	if warn, err := e.Check(); err != nil || len(warn) > 0 {
		t.Fatalf("a 12-node run on a roomy machine: warnings %v, error %v", warn, err)
	}
}

func TestEstimateGrowsWithTheWorkAndTheFabric(t *testing.T) {
	tb := topo.Testbed()
	k8 := loadShipped(t, "fattree-k8.yaml")
	small := EstimateRun(tb, defaultJobs(t, tb), EstimateOptions{Fragments: 64, Plans: 1, Machine: roomyMachine})
	more := EstimateRun(tb, defaultJobs(t, tb), EstimateOptions{Fragments: 640, Plans: 1, Machine: roomyMachine})
	big := EstimateRun(k8, defaultJobs(t, k8), EstimateOptions{Fragments: 64, Plans: 6, Machine: roomyMachine})
	if more.PerPlan <= small.PerPlan || more.FragmentHops != 10*small.FragmentHops {
		t.Fatalf("10x the fragments: %v -> %v, %v -> %v fragment-hops", small.PerPlan, more.PerPlan, small.FragmentHops, more.FragmentHops)
	}
	if big.Memory <= small.Memory || big.Start <= small.Start || big.Switches != 80 || big.Endpoints != 192 {
		t.Fatalf("k=8 against the testbed: %+v vs %+v", big, small)
	}
	if s := big.String(); !strings.Contains(s, "80 switches") || !strings.Contains(s, "6 plan(s)") {
		t.Fatalf("summary %q", s)
	}
}

func TestEstimateRefusesARunTheMemoryCannotHold(t *testing.T) {
	k8 := loadShipped(t, "fattree-k8.yaml")
	m := roomyMachine
	m.MemAvailable = 256 << 20
	_, err := EstimateRun(k8, defaultJobs(t, k8), EstimateOptions{Fragments: 64, Plans: 1, Machine: m}).Check()
	if err == nil || !strings.Contains(err.Error(), "memory") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("k=8 in 256 MiB: %v", err)
	}
	m.MemAvailable = EstimateRun(k8, defaultJobs(t, k8), EstimateOptions{Fragments: 64, Plans: 1, Machine: roomyMachine}).Memory * 3 / 2
	warn, err := EstimateRun(k8, defaultJobs(t, k8), EstimateOptions{Fragments: 64, Plans: 1, Machine: m}).Check()
	if err != nil || len(warn) != 1 || !strings.Contains(warn[0], "memory") {
		t.Fatalf("k=8 in 1.5x its estimate: warnings %v, error %v", warn, err)
	}
}

func TestEstimateRefusesTooFewOpenFiles(t *testing.T) {
	tp := topo.Testbed()
	m := roomyMachine
	m.Files, m.FilesHard = 64, 64
	if _, err := EstimateRun(tp, defaultJobs(t, tp), EstimateOptions{Fragments: 64, Plans: 1, Machine: m}).Check(); err == nil || !strings.Contains(err.Error(), "ulimit") {
		t.Fatalf("a hard limit of 64 files: %v", err)
	}
}

func TestEstimateWarnsOfAPlanLongerThanAMinute(t *testing.T) {
	tp := topo.Testbed()
	e := EstimateRun(tp, defaultJobs(t, tp), EstimateOptions{Fragments: 10_000_000, Plans: 1, Machine: roomyMachine})
	warn, err := e.Check()
	if err != nil || len(warn) != 1 || !strings.Contains(warn[0], "--fragments") || e.PerPlan < time.Minute {
		t.Fatalf("10M fragments: %v per plan, warnings %v, error %v", e.PerPlan, warn, err)
	}
}

func TestReadMachineSeesThisMachine(t *testing.T) {
	m, err := ReadMachine()
	if err != nil {
		t.Fatal(err)
	}
	if m.Cores < 1 || m.MemAvailable < 1<<20 || m.Files == 0 || m.FilesHard < m.Files {
		t.Fatalf("machine %+v", m)
	}
}

func TestEstimateCountsASwitchProcessAboveASwitchInTheHost(t *testing.T) {
	k8 := loadShipped(t, "fattree-k8.yaml")
	hosted := EstimateRun(k8, defaultJobs(t, k8), EstimateOptions{Fragments: 64, Plans: 1, Machine: roomyMachine})
	separate := EstimateRun(k8, defaultJobs(t, k8), EstimateOptions{Fragments: 64, Plans: 1, SwitchProcesses: true, Machine: roomyMachine})
	if separate.Memory < hosted.Memory+80*(memoryPerSwitchProcess-memoryPerSwitch) {
		t.Fatalf("80 switch processes: %s, one host: %s", formatBytes(separate.Memory), formatBytes(hosted.Memory))
	}
}

func TestPlanTimeIsTheSlowestWorkersFragmentsAtTheScaledLambda(t *testing.T) {
	p := &solver.Plan{Algorithm: "geryon", LambdaGbps: 1}
	// 1 Gbps at 1e-3 is 1 Mbit/s: 1000 frames of 1520 bits take 1.52 s.
	if got := PlanTime(p, 1000, 32, 1e-3); got != 1520*time.Millisecond {
		t.Errorf("1000 fragments at 1 Mbit/s: %v, want 1.52s", got)
	}
	if got := PlanTime(&solver.Plan{}, 1000, 32, 1e-3); got != 0 {
		t.Errorf("a plan without lambda: %v, want 0", got)
	}
}
