package endpointhost

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/endpoint"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/p4test/targettest"
)

// BenchmarkEndpointLaunch launches the endpoints of one job of N hosts
// (a PS and N-1 workers, each host a network namespace with its address)
// the way grid run does, until every socket is bound and the workers wait
// for the start signal: one `grid endpoint-host` process, and, measured
// in the same run as its peer, a `grid ps` / `grid worker` process per
// endpoint started in its namespace, each waited for in turn (how runs
// launched endpoints before). It reports both times, their ratio, and
// each way's proportional memory (PSS) per endpoint. N = 192 is a k=8
// fat-tree's hosts, 500 leaf-spine-60's.
//
//	go test -run '^$' -bench EndpointLaunch -benchtime 1x ./harness/endpointhost
func BenchmarkEndpointLaunch(b *testing.B) {
	bin := targettest.GridBinary(b)
	for _, n := range []int{192, 500} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			addr := func(i int) string { return fmt.Sprintf("10.%d.%d.1", 100+i/250, 1+i%250) }
			namespaces := hostNamespaces(b, n, addr)
			job := bigJob(b, dir, n-1, addr)
			spec := hostSpec(dir, job, n-1, namespaces)
			specPath := filepath.Join(dir, "endpoints.json")
			if err := spec.Write(specPath); err != nil {
				b.Fatal(err)
			}
			var host, each time.Duration
			var hostPSS, eachPSS int
			for b.Loop() {
				began := time.Now()
				p := launch(b, exec.Command(bin, "endpoint-host", specPath), "", "grid endpoint-host: listening")
				host += time.Since(began)
				hostPSS += pss(b, p.Process.Pid)
				stop(p)

				began = time.Now()
				var procs []*exec.Cmd
				for i, e := range spec.Endpoints {
					argv := []string{"ps", "--spec", job, "--report", e.Report}
					ready := "grid ps: listening"
					if e.Role == endpoint.RoleWorker {
						argv = []string{"worker", "--spec", job, "--index", strconv.Itoa(e.Index), "--report", e.Report}
						ready = "grid worker: listening"
					}
					procs = append(procs, launch(b, exec.Command(bin, argv...), namespaces[i], ready))
				}
				each += time.Since(began)
				for _, p := range procs {
					eachPSS += pss(b, p.Process.Pid)
				}
				for _, p := range procs {
					stop(p)
				}
			}
			loops := float64(b.N)
			b.ReportMetric(host.Seconds()/loops, "host-ready-s")
			b.ReportMetric(each.Seconds()/loops, "process-per-endpoint-ready-s")
			b.ReportMetric(each.Seconds()/host.Seconds(), "speedup")
			b.ReportMetric(float64(hostPSS)/loops/float64(n), "host-PSS-KB/endpoint")
			b.ReportMetric(float64(eachPSS)/loops/float64(n), "process-PSS-KB/endpoint")
		})
	}
}

// bigJob is jobSpec for many workers: 64 per aggregation node id, as slots
// allow (nothing is sent, so no node needs to exist).
func bigJob(b *testing.B, dir string, workers int, addr func(int) string) string {
	path := jobSpec(b, dir, 1, 64, addr)
	s, err := endpoint.LoadSpec(path)
	if err != nil {
		b.Fatal(err)
	}
	// Launching hundreds of processes one by one takes longer than the
	// job's deadline, which the PS counts from its own start.
	s.Deadline = endpoint.Duration(10 * time.Minute)
	s.Job.Members = nil
	for i := range workers {
		s.Job.Members = append(s.Job.Members, endpoint.Member{IP: addr(i + 1), Node: uint16(1 + i/64), Slot: i % 64})
	}
	data, err := jsonOf(s)
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// launch starts cmd (in the namespace at nsPath, if not "") and waits for
// its line starting with ready.
func launch(b *testing.B, cmd *exec.Cmd, nsPath, ready string) *exec.Cmd {
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if nsPath != "" {
		err = fabric.InNamespace(nsPath, cmd.Start)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), ready) {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd
		}
	}
	cmd.Wait()
	b.Fatalf("%s exited before %q: %s", strings.Join(cmd.Args, " "), ready, stderr.String())
	return nil
}

// stop ends a launched process and waits for it.
func stop(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// pss is the process's proportional set size in kilobytes.
func pss(b *testing.B, pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
			kb, err := strconv.Atoi(f[1])
			if err != nil {
				b.Fatal(err)
			}
			return kb
		}
	}
	b.Fatalf("no Pss in /proc/%d/smaps_rollup", pid)
	return 0
}
