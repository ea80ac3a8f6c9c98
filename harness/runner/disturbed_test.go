package runner

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/endpoint"
	"github.com/grid-ina/grid/harness/internal/cputime"
	"github.com/grid-ina/grid/harness/solver"
)

func TestAQuietOutcomeIsNotDisturbed(t *testing.T) {
	o := &Outcome{CPU: cputime.Share{Wall: time.Second, Cores: 2, Tree: 800 * time.Millisecond, Others: 100 * time.Millisecond},
		Jobs: []JobOutcome{{Workers: []*endpoint.Report{{Sent: 1000, Resent: 5}}}}}
	if why := disturbances(o); len(why) != 0 {
		t.Fatalf("a run using 0.8 of 2 cores, others 0.1, 0.5%% resent: disturbed by %q", why)
	}
}

func TestOtherLoadACPUBoundRunAndResendsEachDisturbAnOutcome(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Outcome
		want string
	}{
		{"other load", Outcome{CPU: cputime.Share{Wall: time.Second, Cores: 2, Others: 600 * time.Millisecond}}, "other processes used 0.60"},
		{"CPU-bound", Outcome{CPU: cputime.Share{Wall: time.Second, Cores: 2, Tree: 1900 * time.Millisecond}}, "CPU-bound"},
		{"resends", Outcome{Jobs: []JobOutcome{{Workers: []*endpoint.Report{{Sent: 1000, Resent: 30}, nil}}}}, "30 of 1000 fragments (3.0%)"},
	} {
		why := disturbances(&tc.o)
		if len(why) != 1 || !strings.Contains(why[0], tc.want) {
			t.Errorf("%s: disturbed by %q, want one reason with %q", tc.name, why, tc.want)
		}
	}
}

// spinElsewhere starts n busy loops that are not this process's
// descendants (their shell exits, init adopts them), as another
// experiment or job on the machine would be.
func spinElsewhere(t *testing.T, n int) {
	t.Helper()
	for range n {
		out, err := exec.Command("sh", "-c", `sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $!`).Output()
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatalf("busy loop pid %q: %v", out, err)
		}
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	}
}

func TestAnExperimentBesideOtherLoadSaysItWasDisturbed(t *testing.T) {
	cfg := testConfig(t, solver.AlgoGRIDPaths)
	// Long enough for the CPU accounting's 10 ms ticks to see the load.
	cfg.Fragments = 1024
	spinElsewhere(t, 2)
	exp := runOK(t, cfg)
	o := exp.Outcomes[0]
	if o.CPU.Wall <= 0 || o.CPU.Tree <= 0 || o.CPU.Cores < 1 {
		t.Fatalf("CPU share %+v: the run's own use was not measured", o.CPU)
	}
	found := false
	for _, why := range o.Disturbed {
		found = found || strings.Contains(why, "other processes")
	}
	if !found {
		t.Fatalf("two busy loops beside the run (others used %.2f cores): disturbed by %q", o.CPU.OthersCores(), o.Disturbed)
	}
	r := exp.Results("x", nil).Algorithms[0]
	if r.CPU == nil || r.CPU.Others < othersCoresLimit || len(r.Disturbed) == 0 {
		t.Fatalf("results record CPU %+v, disturbed %q", r.CPU, r.Disturbed)
	}
}
