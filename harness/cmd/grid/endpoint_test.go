package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/endpoint"
	"github.com/grid-ina/grid/harness/p4test/targettest"
)

// loopbackJobSpec writes a spec of a job on random loopback addresses whose
// PS aggregates both workers itself and sends results to each of them.
func loopbackJobSpec(t *testing.T, deadline string) (string, *endpoint.Spec) {
	t.Helper()
	x, y := 1+rand.IntN(250), 1+rand.IntN(250)
	addr := func(n int) string { return fmt.Sprintf("127.%d.%d.%d", x, y, n) }
	text := fmt.Sprintf(`{
  "job": {"id": 3, "ps_node": 0, "ps_ip": %q, "values": 32,
          "members": [{"ip": %q, "node": 0, "slot": 0}, {"ip": %q, "node": 0, "slot": 1}]},
  "fragments": 200, "seed": 1, "window": {"initial": 8, "max": 32},
  "timeout": "50ms", "deadline": %q, "linger": "100ms", "results": "unicast"
}`, addr(1), addr(2), addr(3), deadline)
	path := filepath.Join(t.TempDir(), "job3.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, err := endpoint.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, spec
}

func TestPSCommandVerifiesAJobAndWritesItsReport(t *testing.T) {
	path, spec := loopbackJobSpec(t, "20s")
	reportPath := filepath.Join(t.TempDir(), "ps.json")
	var workers [2]*endpoint.Report
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			time.Sleep(50 * time.Millisecond) // the PS first
			r, err := endpoint.RunWorker(context.Background(), spec, i)
			if err != nil {
				t.Error(err)
			}
			workers[i] = r
		})
	}
	out, code := exitCode(t, "ps", "--spec", path, "--report", reportPath)
	wg.Wait()
	if code != 0 || !strings.HasPrefix(out, "grid ps: listening on "+spec.Job.PSIP+":18258\n") || !strings.Contains(out, "grid ps: job 3 PS") || !strings.Contains(out, "200/200 fragments") || !strings.Contains(out, "all sums exact") {
		t.Errorf("exit %d, output %q", code, out)
	}
	for i, w := range workers {
		if w == nil || !w.Verified {
			t.Errorf("worker %d: %+v", i, w)
		}
	}
	data, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep endpoint.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Verified || rep.Role != "ps" || rep.Completed != 200 || rep.Direct < 400 || rep.Results < 400 {
		t.Errorf("report %s", data)
	}
}

func TestWorkerCommandWithoutPSExitsOneAndReportsTheDeadline(t *testing.T) {
	path, _ := loopbackJobSpec(t, "200ms")
	reportPath := filepath.Join(t.TempDir(), "w1.json")
	out, code := exitCode(t, "worker", "--spec", path, "--index", "1", "--report", reportPath)
	if code != 1 || !strings.Contains(out, "deadline 200ms passed (0 of 200 fragments complete)") || !strings.Contains(out, "NOT verified") {
		t.Errorf("exit %d, output %q", code, out)
	}
	data, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"verified": false`) || !strings.Contains(string(data), `"index": 1`) {
		t.Errorf("report %s", data)
	}
}

func TestEndpointCommandsNameTheBadSpecFieldAndExitTwo(t *testing.T) {
	path, _ := loopbackJobSpec(t, "1s")
	data, _ := os.ReadFile(path)
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(strings.Replace(string(data), `"window": {"initial": 8`, `"window": {"initial": 0`, 1)), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ps", "--spec", bad}, "grid ps: " + bad + ": window.initial: 0, want at least 1"},
		{[]string{"worker", "--spec", bad, "--index", "0"}, "grid worker: " + bad + ": window.initial: 0"},
		{[]string{"worker", "--spec", path}, "grid worker: " + path + ": no worker index: give --index or the spec's index"},
		{[]string{"worker", "--spec", path, "--index", "2"}, "--index 2: the job has members 0..1"},
		{[]string{"ps", "--spec", filepath.Join(t.TempDir(), "none.json")}, "no such file"},
		{[]string{"ps"}, "grid ps: --spec FILE is required"},
		{[]string{"ps", "--spec", path, "extra"}, `unexpected argument "extra"`},
	} {
		out, code := exitCode(t, tc.args...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("grid %s: exit %d, output %q, want 2 and %q", strings.Join(tc.args, " "), code, out, tc.want)
		}
	}
}

// endpointProcess is a grid ps or grid worker process of a test.
type endpointProcess struct {
	cmd    *exec.Cmd
	stdout *bufio.Scanner
	stderr bytes.Buffer
}

// startEndpointProcess starts the grid binary with args and waits for its
// first line, which must be ready; the process is killed when the test ends.
func startEndpointProcess(t *testing.T, ready string, args ...string) *endpointProcess {
	t.Helper()
	p := &endpointProcess{cmd: exec.Command(targettest.GridBinary(t), args...)}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill() })
	p.stdout = bufio.NewScanner(stdout)
	if !p.stdout.Scan() || p.stdout.Text() != ready {
		t.Fatalf("grid %s: first line %q, want %q; stderr %s", strings.Join(args, " "), p.stdout.Text(), ready, p.stderr.String())
	}
	return p
}

// wait reads the rest of the output and waits for the process to exit.
func (p *endpointProcess) wait() error {
	for p.stdout.Scan() {
	}
	return p.cmd.Wait()
}

// What the runner relies on: the ready line once the socket is bound, and
// on SIGTERM a report that says so and exit status 1.
func TestPSProcessPrintsItsReadyLineAndStopsOnSIGTERMWithAReport(t *testing.T) {
	path, spec := loopbackJobSpec(t, "1m")
	reportPath := filepath.Join(t.TempDir(), "ps.json")
	p := startEndpointProcess(t, "grid ps: listening on "+spec.Job.PSIP+":18258", "ps", "--spec", path, "--report", reportPath)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := p.wait()
	stderr := &p.stderr
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1; stderr %s", err, stderr.String())
	}
	data, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"error": "interrupted: `) || !strings.Contains(string(data), `"verified": false`) {
		t.Errorf("report %s", data)
	}
	if !strings.Contains(stderr.String(), "grid ps: job 3 PS") || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr %q does not say why it failed", stderr.String())
	}
}

// A worker whose spec says "start": "signal" sends only after SIGUSR1,
// which it catches from before its ready line on.
func TestWorkerProcessStartsOnSIGUSR1(t *testing.T) {
	path, spec := loopbackJobSpec(t, "20s")
	data, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(data), `"results": "unicast"`, `"results": "unicast", "start": "signal"`, 1)), 0o644)
	spec.Start = endpoint.StartSignal
	var ps, other *endpoint.Report
	var wg sync.WaitGroup
	psReady := make(chan struct{})
	wg.Go(func() {
		var err error
		if ps, err = endpoint.RunPS(context.Background(), spec, endpoint.OnListening(func(netip.AddrPort) { close(psReady) })); err != nil {
			t.Error(err)
			close(psReady)
		}
	})
	<-psReady
	start := make(chan struct{})
	wg.Go(func() {
		var err error
		if other, err = endpoint.RunWorker(context.Background(), spec, 1, endpoint.StartOn(start)); err != nil {
			t.Error(err)
		}
	})
	reportPath := filepath.Join(t.TempDir(), "w0.json")
	p := startEndpointProcess(t, "grid worker: listening on "+spec.Job.Members[0].IP+":18258",
		"worker", "--spec", path, "--index", "0", "--report", reportPath)
	signalled := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	close(start)
	if err := p.wait(); err != nil {
		t.Fatalf("grid worker: %v\n%s", err, p.stderr.String())
	}
	wg.Wait()
	var rep endpoint.Report
	if data, err := os.ReadFile(reportPath); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Verified || rep.Start.Before(signalled) {
		t.Errorf("report: verified %v, start %v, signal at %v", rep.Verified, rep.Start, signalled)
	}
	if ps == nil || !ps.Verified || other == nil || !other.Verified {
		t.Errorf("PS %+v, worker 1 %+v", ps, other)
	}
}
