package fabric

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ProcessOf describes the running process pid for RecordProcess.
func ProcessOf(pid int, node, role string) (Process, error) {
	start, _, err := procStat(pid)
	if err != nil {
		return Process{}, err
	}
	return Process{PID: pid, Start: start, Node: node, Role: role}, nil
}

// procStat returns the start time (clock ticks since boot) and the state
// letter of pid from /proc/PID/stat.
func procStat(pid int) (start uint64, state byte, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("process %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces or
	// parentheses itself: the fields after it start after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("process %d: malformed /proc stat", pid)
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state); field 22 (starttime) is fields[19].
	if len(fields) < 20 {
		return 0, 0, fmt.Errorf("process %d: short /proc stat", pid)
	}
	start, err = strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("process %d: start time: %w", pid, err)
	}
	return start, fields[0][0], nil
}

// Alive reports whether the recorded process still runs: same PID, same start
// time, and not a zombie waiting for its parent.
func (p Process) Alive() bool {
	start, state, err := procStat(p.PID)
	return err == nil && start == p.Start && state != 'Z' && state != 'X'
}

// kill sends SIGKILL to the recorded process, if it still runs, and waits
// up to a second for it to go. A PID that now belongs to another process is
// left alone.
func (p Process) kill() error {
	if !p.Alive() {
		return nil
	}
	slog.Debug("killing process", "pid", p.PID, "role", p.Role, "node", p.Node)
	if err := unix.Kill(p.PID, unix.SIGKILL); err != nil && err != unix.ESRCH {
		return fmt.Errorf("kill %s process %d: %w", p.Role, p.PID, err)
	}
	for i := 0; i < 100 && p.Alive(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if p.Alive() {
		return fmt.Errorf("%s process %d survived SIGKILL", p.Role, p.PID)
	}
	return nil
}
