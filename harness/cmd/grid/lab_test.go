package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/lab"
)

// A student's session through the binary: grid lab, a shell on a host,
// Mininet's "h2 ping h1" and pingall, simple_switch_CLI commands by Thrift
// port, grid lab stop, all from the exercise's folder. On port 2 s2 counts
// what comes from h1's side: the shell's ping, h1's reply to h2 and pingall's two.
func TestLabCommandsRunAnExerciseFromItsFolder(t *testing.T) {
	if err := fabric.CanBuild(); err != nil {
		t.Skipf("needs network namespaces: %v", err)
	}
	bin := buildGrid(t)
	dir := filepath.Join(t.TempDir(), fmt.Sprintf("ex%d", os.Getpid()))
	if out, err := exec.Command("cp", "-r", "../../lab/testdata/twoswitch", dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	run := lab.RunName(dir)
	t.Cleanup(func() {
		if _, err := fabric.LoadState(run); err == nil {
			lab.Stop(run)
		}
	})
	grid := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("grid %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := grid("", "lab", ".", "--grpc-port", fmt.Sprint(port)); !strings.Contains(out, fmt.Sprintf("s1 -> gRPC port: %d (device id 0)", port)) {
		t.Fatalf("grid lab:\n%s", out)
	}
	if out := grid("ip -br addr show eth0\nping -c 1 -W 3 10.0.2.2 >/dev/null && echo reached\n", "lab", "shell", "h1"); !strings.Contains(out, "10.0.1.1/24") || !strings.Contains(out, "reached") {
		t.Errorf("grid lab shell h1:\n%s", out)
	}
	if out := grid("", "lab", "exec", "h2", "--", "ping", "-c", "1", "-W", "3", "h1"); !strings.Contains(out, "1 received") {
		t.Errorf("grid lab exec h2 -- ping h1 (by name, as Mininet's CLI):\n%s", out)
	}
	if out := grid("", "lab", "pingall"); !strings.Contains(out, "h1 -> h2") || !strings.Contains(out, "*** Results: 0% dropped (2/2 received)") {
		t.Errorf("grid lab pingall:\n%s", out)
	}
	if _, err := exec.LookPath("tmux"); err == nil {
		if out := grid("", "lab", "tmux"); !strings.Contains(out, "tmux attach -t "+run) {
			t.Errorf("grid lab tmux:\n%s", out)
		}
		t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", run).Run() })
		windows, _ := exec.Command("tmux", "list-windows", "-t", run, "-F", "#{window_name}").Output()
		if got := strings.Fields(string(windows)); strings.Join(got, " ") != "lab h1 h2" {
			t.Errorf("tmux windows %q, want lab h1 h2", got)
		}
		// h2's window is a shell on h2.
		probe := filepath.Join(dir, "h2-window")
		exec.Command("tmux", "send-keys", "-t", run+":h2", "ip -br addr show eth0 > "+probe, "Enter").Run()
		for range 50 {
			if b, _ := os.ReadFile(probe); strings.Contains(string(b), "10.0.2.2/24") {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if b, _ := os.ReadFile(probe); !strings.Contains(string(b), "10.0.2.2/24") {
			t.Errorf("the h2 window's shell is not on h2: %q", b)
		}
	}
	// s2 is the second switch: bmv2 would have given it Thrift port 9091.
	if out := grid("counter_read MyIngress.rx_port 2\n", "cli", "--thrift-port", "9091"); !strings.Contains(out, "MyIngress.rx_port[2]=  BmCounterValue(packets=4, bytes=392)") {
		t.Errorf("grid cli --thrift-port 9091:\n%s", out)
	}
	if out := grid("", "lab", "stop"); !strings.Contains(out, "lab "+run+" stopped") {
		t.Errorf("grid lab stop:\n%s", out)
	}
	if _, err := fabric.LoadState(run); err == nil {
		t.Error("the lab's run is still there after grid lab stop")
	}
}
