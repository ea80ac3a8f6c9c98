package main

import (
	"context"
	"net"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/topo"
)

func TestMonitorRejectsBadArgumentsWithExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"monitor"},
		{"monitor", "a", "b"},
		{"monitor", "r", "--sort", "speed"},
		{"monitor", "r", "--interval", "0s"},
		{"monitor", "r", "--top", "-1"},
	} {
		out, code := exitCode(t, args...)
		if code != 2 || !strings.HasPrefix(out, "grid monitor: ") {
			t.Errorf("grid %s: exit %d, output %q; want exit 2 and one grid monitor error", strings.Join(args, " "), code, out)
		}
	}
}

func TestMonitorOnceShowsTheFramesAHostSentOnItsLink(t *testing.T) {
	if err := fabric.CanBuild(); err != nil {
		t.Skipf("cannot build network namespaces here (CI runs the tests as root): %v", err)
	}
	tp, err := topo.Parse([]byte(`name: pair
nodes:
  - {name: s1, kind: switch}
  - {name: h1, kind: host}
  - {name: h2, kind: host}
links:
  - {endpoints: ["s1:p1", "h1:eth0"]}
  - {endpoints: ["s1:p2", "h2:eth0"]}
`), "pair.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run := newRunName()
	t.Cleanup(func() { fabric.Clean(run) })
	st, err := fabric.Up(context.Background(), tp, fabric.Options{Name: run})
	if err != nil {
		t.Fatal(err)
	}
	// Frames go out while grid monitor waits its one interval.
	h1 := st.Node("h1")
	fd, err := h1.OpenPort(0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	gw, _ := net.ParseMAC(h1.Port(0).GatewayMAC)
	frame := make([]byte, 1000)
	copy(frame, gw)
	frame[12], frame[13] = 0x88, 0xb5
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
				unix.Write(fd, frame)
			}
		}
	}()
	out, err := runGrid(t, "monitor", run, "--once", "--interval", "300ms", "--sort", "total", "--top", "1")
	close(stop)
	<-stopped
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if !regexp.MustCompile(`^run ` + run + `: 2 links, 2 samples over 3\d\dms, every 300ms$`).MatchString(lines[0]) {
		t.Errorf("title %q", lines[0])
	}
	// The busiest link first: h1 sending (<=), s1 silent.
	if !regexp.MustCompile(`^\s+1 s1:p1 +=> +0b +0b +0b +0b +0B$`).MatchString(lines[3]) ||
		!regexp.MustCompile(`^\s+h1:eth0 +<= +[0-9.]+[KMG]b .* [0-9.]+[KMG]B$`).MatchString(lines[4]) {
		t.Errorf("link rows:\n%s\n%s", lines[3], lines[4])
	}
	if !strings.Contains(out, "(1 more links not shown)") || strings.Contains(out, "h2:eth0") {
		t.Errorf("--top 1 showed more than one link:\n%s", out)
	}
}
