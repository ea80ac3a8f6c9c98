package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/monitor/monitortest"
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
	st := monitortest.Up(t, monitortest.Pair)
	// Frames go out all the while grid monitor waits its one interval.
	h1 := monitortest.NewSender(t, st, "h1", 1000)
	defer h1.Close()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
				h1.Send()
			}
		}
	}()
	out, err := runGrid(t, "monitor", st.Run, "--once", "--interval", "300ms", "--sort", "total", "--top", "1")
	close(stop)
	<-stopped
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if !regexp.MustCompile(`^run ` + st.Run + `: 2 links, 2 samples over 3\d\dms, every 300ms$`).MatchString(lines[0]) {
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
