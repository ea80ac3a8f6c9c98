package cputime

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// spin starts a shell loop that burns CPU until killed.
func spin(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// spinOrphan starts a busy loop that is no descendant of this process (its
// parent shell exits, so init adopts it) and returns its pid.
func spinOrphan(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("sh", "-c", `sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $!`).Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("orphan pid %q: %v", out, err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	st, err := readProcStat("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	return st.cpu
}

func TestShareCountsADescendantsSpinInTheTree(t *testing.T) {
	before, err := Take(0)
	if err != nil {
		t.Fatal(err)
	}
	child := spin(t)
	time.Sleep(400 * time.Millisecond)
	childCPU := processCPU(t, child.Process.Pid)
	after, err := Take(0)
	if err != nil {
		t.Fatal(err)
	}
	sh := after.Since(before)
	if childCPU < 50*time.Millisecond {
		t.Skipf("the busy child got only %v of CPU in 400 ms: the machine is too loaded to tell", childCPU)
	}
	if sh.Tree < childCPU {
		t.Fatalf("tree CPU %v, less than its busy child's %v", sh.Tree, childCPU)
	}
	if sh.TreeCores() <= 0 || sh.Wall < 400*time.Millisecond {
		t.Fatalf("share %+v: no cores or too short", sh)
	}
}

func TestShareCountsAnOrphansSpinAsOthers(t *testing.T) {
	pid := spinOrphan(t)
	start := processCPU(t, pid)
	before, err := Take(0)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	after, err := Take(0)
	if err != nil {
		t.Fatal(err)
	}
	used := processCPU(t, pid) - start
	sh := after.Since(before)
	if used < 50*time.Millisecond {
		t.Skipf("the busy orphan got only %v of CPU in 400 ms: the machine is too loaded to tell", used)
	}
	// The orphan is not ours: its time shows as others', not the tree's.
	if sh.Others < used-2*clockTick {
		t.Fatalf("others' CPU %v, less than the orphan's %v", sh.Others, used)
	}
	if sh.Tree > sh.Wall { // this test process only sleeps
		t.Fatalf("tree CPU %v over a %v sleep: the orphan was counted as ours", sh.Tree, sh.Wall)
	}
}

func TestTakeRefusesAProcessThatIsNotRunning(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := Take(cmd.Process.Pid); err == nil {
		t.Fatalf("snapshot of exited process %d: no error", cmd.Process.Pid)
	}
}

func TestReadProcStatSkipsACommandNameWithSpacesAndParentheses(t *testing.T) {
	p := filepath.Join(t.TempDir(), "stat")
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
	line := "4242 (a) b (c)) S 17 4242 4242 0 -1 4194304 1 0 0 0 30 20 5 5 20 0 1 0 100 0 0\n"
	if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := readProcStat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != 17 || st.cpu != 60*clockTick {
		t.Fatalf("got ppid %d cpu %v, want 17 and %v", st.ppid, st.cpu, 60*clockTick)
	}
}

func TestSinceNeverReportsNegativeTimes(t *testing.T) {
	now := time.Now()
	before := Snapshot{At: now, MachineBusy: time.Second, Tree: time.Second, Stalled: time.Second, PressureKnown: true}
	after := Snapshot{At: now.Add(time.Second), MachineBusy: time.Second, Tree: time.Second + clockTick, Stalled: time.Second, PressureKnown: true}
	sh := after.Since(before)
	if sh.Others != 0 || sh.Tree != clockTick || sh.Stalled != 0 || !sh.PressureKnown {
		t.Fatalf("share %+v", sh)
	}
}
