package cputime

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc's CPU times (USER_HZ). Linux fixes it at
// 100 for user space on every architecture grid runs on.
const clockTick = 10 * time.Millisecond

// Snapshot is the machine's CPU accounting at one instant: what the whole
// machine has spent busy, what one process tree (a process and its
// descendants) has spent, and how long runnable tasks have waited for a CPU.
// Two snapshots give a Share.
type Snapshot struct {
	At time.Time
	// Root is the process whose tree Tree counts.
	Root int
	// MachineBusy is every CPU's non-idle time since boot.
	MachineBusy time.Duration
	// Tree is the CPU time of Root and every live descendant, including
	// what their already reaped children used.
	Tree time.Duration
	// Stalled is the kernel's CPU pressure (PSI "some" total): time in
	// which at least one runnable task waited for a CPU. Valid only when
	// PressureKnown (kernels without CONFIG_PSI have no /proc/pressure).
	Stalled       time.Duration
	PressureKnown bool
}

// Take reads a snapshot for the process tree rooted at root (0 means this
// process).
func Take(root int) (Snapshot, error) {
	if root == 0 {
		root = os.Getpid()
	}
	s := Snapshot{At: time.Now(), Root: root}
	busy, err := machineBusy()
	if err != nil {
		return s, err
	}
	s.MachineBusy = busy
	if s.Tree, err = treeTime(root); err != nil {
		return s, err
	}
	s.Stalled, s.PressureKnown = cpuPressure()
	return s, nil
}

// Share is how the CPU was shared between two snapshots.
type Share struct {
	Wall time.Duration
	// Cores is how many CPUs the machine has.
	Cores int
	// Tree is the CPU time the process tree used; Others what every other
	// process on the machine used (the machine's busy time less Tree).
	Tree, Others time.Duration
	// Stalled is how long at least one runnable task waited for a CPU
	// (zero and PressureKnown false without PSI).
	Stalled       time.Duration
	PressureKnown bool
}

// Since is the share between an earlier snapshot and this one.
func (s Snapshot) Since(before Snapshot) Share {
	sh := Share{Wall: s.At.Sub(before.At), Cores: runtime.NumCPU(), Tree: max(0, s.Tree-before.Tree)}
	// /proc/stat and the per-process times tick separately; the tree can
	// appear to have used a tick more than the machine.
	sh.Others = max(0, (s.MachineBusy-before.MachineBusy)-sh.Tree)
	if s.PressureKnown && before.PressureKnown {
		sh.Stalled, sh.PressureKnown = max(0, s.Stalled-before.Stalled), true
	}
	return sh
}

// TreeCores is the tree's average CPU use in cores over the interval.
func (sh Share) TreeCores() float64 { return perWall(sh.Tree, sh.Wall) }

// OthersCores is everything else's average CPU use in cores.
func (sh Share) OthersCores() float64 { return perWall(sh.Others, sh.Wall) }

// StalledFraction is the part of the interval in which some runnable task
// waited for a CPU.
func (sh Share) StalledFraction() float64 { return perWall(sh.Stalled, sh.Wall) }

func perWall(d, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return d.Seconds() / wall.Seconds()
}

// machineBusy sums the non-idle fields of /proc/stat's first line (user,
// nice, system, irq, softirq, steal; guest time is already inside user).
func machineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("machine CPU time: %w", err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("machine CPU time: /proc/stat starts %q, not the cpu line", line)
	}
	var ticks uint64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("machine CPU time: /proc/stat field %d: %w", i, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// procStat is what treeTime needs of /proc/PID/stat.
type procStat struct {
	ppid int
	cpu  time.Duration // utime + stime + cutime + cstime
}

// readProcStat parses /proc/PID/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted after its last ')'.
func readProcStat(path string) (procStat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("%s: no command name", path)
	}
	f := strings.Fields(string(b[i+1:]))
	// After the name: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("%s: %d fields", path, len(f)+2)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, fmt.Errorf("%s: ppid: %w", path, err)
	}
	var ticks int64
	for _, s := range f[11:15] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("%s: cpu times: %w", path, err)
		}
		ticks += n
	}
	return procStat{ppid: ppid, cpu: time.Duration(ticks) * clockTick}, nil
}

// treeTime is the CPU time of root and its live descendants. A process that
// exits while /proc is read is skipped: its time reaches its parent's
// cutime once reaped, so a later snapshot counts it.
func treeTime(root int) (time.Duration, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, err
	}
	stats := make(map[int]procStat, len(dirs))
	for _, p := range dirs {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		st, err := readProcStat(p)
		if err != nil {
			continue // gone since the listing
		}
		stats[pid] = st
	}
	if _, ok := stats[root]; !ok {
		return 0, fmt.Errorf("process %d: not running", root)
	}
	children := make(map[int][]int, len(stats))
	for pid, st := range stats {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	var total time.Duration
	for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
		pid := queue[0]
		total += stats[pid].cpu
		queue = append(queue, children[pid]...)
	}
	return total, nil
}

// cpuPressure reads the "some" line's total (µs) of /proc/pressure/cpu.
func cpuPressure() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/pressure/cpu")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "some ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "total="); ok {
				us, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return 0, false
				}
				return time.Duration(us) * time.Microsecond, true
			}
		}
	}
	return 0, false
}
