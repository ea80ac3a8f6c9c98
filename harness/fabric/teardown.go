package fabric

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// stopGrace is how long recorded processes get to exit after SIGTERM before SIGKILL.
const stopGrace = 2 * time.Second

// Down removes run: it stops the processes recorded in its state, removes its
// namespaces (and with them every interface and qdisc) and its state.
func Down(run string) error {
	if err := CheckRoot(); err != nil {
		return err
	}
	return globalLock(func() error {
		s, err := LoadState(run)
		if errors.Is(err, ErrNoRun) {
			if _, derr := os.Stat(runDir(run)); derr == nil {
				return fmt.Errorf("run %q has no state.json; 'grid clean %s' removes what it left (found in the kernel)", run, run)
			}
			return err
		}
		if err != nil {
			return fmt.Errorf("%w; 'grid clean %s' removes what the run left (found in the kernel)", err, run)
		}
		if s.Status == StatusBuilding && s.Builder != nil && s.Builder.Alive() {
			return fmt.Errorf("run %q is being built by process %d; interrupt it (it rolls back) or wait", run, s.Builder.PID)
		}
		return teardown(run)
	})
}

// teardown removes everything of run. Parts already gone are not errors, so
// it also finishes a teardown that was interrupted. It holds the run's lock
// throughout: a process being recorded meanwhile is either in the state read
// here, and stopped, or finds the run gone (Start then kills it itself).
func teardown(run string) error {
	return withLock(lockPath(run), func() error {
		s, err := LoadState(run)
		if err != nil {
			return err
		}
		others, err := Runs()
		if err != nil {
			return err
		}
		return sweep(run, s, others, false).Err()
	})
}

// stopProcesses sends SIGTERM to every recorded process still alive, waits
// stopGrace for them together, then SIGKILLs the rest.
func stopProcesses(procs []Process) error {
	var alive []Process
	for _, p := range procs {
		if p.Alive() {
			if err := unix.Kill(p.PID, unix.SIGTERM); err != nil && err != unix.ESRCH {
				return fmt.Errorf("stop %s process %d: %w", p.Role, p.PID, err)
			}
			alive = append(alive, p)
		}
	}
	deadline := time.Now().Add(stopGrace)
	for len(alive) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		kept := alive[:0]
		for _, p := range alive {
			if p.Alive() {
				kept = append(kept, p)
			}
		}
		alive = kept
	}
	var errs []error
	for _, p := range alive {
		errs = append(errs, p.kill())
	}
	return errors.Join(errs...)
}

// warnSquatters logs processes that are inside the given namespaces without
// being recorded in the run's state (recorded). Down does not kill them (it stops only
// the processes grid recorded; Clean stops them too), but they keep their
// namespace, and its interfaces, alive after it is unmounted, so the user
// must know.
func warnSquatters(names []string, recorded []Process) {
	for _, p := range processesIn(names) {
		if slices.ContainsFunc(recorded, func(q Process) bool { return q.PID == p.PID && q.Start == p.Start }) {
			continue // about to be stopped
		}
		slog.Warn("process not recorded by grid is inside a namespace being removed; it keeps the namespace alive until it exits (grid clean stops it)",
			"pid", p.PID, "command", p.Role, "netns", p.Node)
	}
}

// removeRootInterfaces deletes the interfaces of the root namespace whose
// names match. The fabric creates none there, but a crashed or foreign tool
// might move one out; clean removes them.
func removeRootInterfaces(match func(string) bool) ([]string, error) {
	links, err := netlink.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list interfaces of the root namespace: %w", err)
	}
	var removed []string
	var errs []error
	for _, l := range links {
		if name := l.Attrs().Name; match(name) {
			// ENODEV: it went with its veth peer, deleted just before.
			if err := netlink.LinkDel(l); err != nil && !errors.Is(err, unix.ENODEV) {
				errs = append(errs, fmt.Errorf("delete interface %s: %w", name, err))
				continue
			}
			removed = append(removed, name)
		}
	}
	return removed, errors.Join(errs...)
}

// CleanReport says what Clean removed and what it could not.
type CleanReport struct {
	Runs []*RunReport // runs cleaned, each with what was removed and what failed
	Busy []string     // runs skipped because a live `grid up` is building them
	// Interfaces are stray interfaces removed from the root namespace,
	// TempDirs temporary folders of runs that are gone (no patterns only).
	Interfaces []string
	TempDirs   []string
}

// Clean removes the runs whose names match any of the shell patterns (all
// runs when none is given), whatever state they are in: finished, half built
// by a killed `grid up`, left by a killed `grid run`, or half torn down. It
// does not trust the state file alone: a run whose state is missing or
// unreadable is cleaned from what the kernel and the disk show (namespaces
// named RUN-*, the processes inside them, its temporary folders), and a
// pattern without wildcards names a run even when its state directory is
// gone. Processes found inside a run's namespaces are stopped as well as
// the recorded ones. Runs that a live `grid up` is still building are
// skipped. With no patterns it also removes interfaces named like the
// fabric's from the root namespace and the temporary folders of runs that
// are gone. The error joins what could not be removed, run by run.
func Clean(patterns ...string) (*CleanReport, error) {
	if err := CheckRoot(); err != nil {
		return nil, err
	}
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("bad run pattern %q: %w", p, err)
		}
	}
	rep := &CleanReport{}
	err := globalLock(func() error {
		runs, err := Runs()
		if err != nil {
			return err
		}
		var candidates []string
		for _, run := range runs {
			if matchAny(patterns, run) {
				candidates = append(candidates, run)
			}
		}
		for _, p := range patterns {
			if !strings.ContainsAny(p, `*?[\`) && CheckRunName(p) == nil && !slices.Contains(runs, p) {
				candidates = append(candidates, p)
			}
		}
		var errs []error
		for _, run := range candidates {
			r, busy := cleanRun(run, runs)
			if busy {
				rep.Busy = append(rep.Busy, run)
				continue
			}
			if r == nil {
				continue
			}
			rep.Runs = append(rep.Runs, r)
			errs = append(errs, r.Err())
		}
		if len(patterns) == 0 {
			removed, err := removeRootInterfaces(ifnameRE.MatchString)
			rep.Interfaces = removed
			errs = append(errs, err)
			dirs, err := removeDeadTempDirs(func(run string) bool { return !slices.Contains(runs, run) })
			rep.TempDirs = dirs
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
	return rep, err
}

// cleanRun sweeps one run, under its lock when it has a state directory;
// busy when a live `grid up` builds it. A run without a state directory
// that left nothing gives no report.
func cleanRun(run string, runs []string) (rep *RunReport, busy bool) {
	if _, err := os.Stat(runDir(run)); err != nil {
		rep = sweep(run, nil, runs, true)
		if len(rep.Processes)+len(rep.Namespaces)+len(rep.TempDirs)+len(rep.Failed) == 0 {
			return nil, false
		}
		rep.State = "gone (no directory in " + StateDir + ")"
		return rep, false
	}
	err := withLock(lockPath(run), func() error {
		s, err := LoadState(run)
		problem := ""
		switch {
		case errors.Is(err, ErrNoRun):
			// Killed between creating the run directory and writing its
			// state, or the file was removed: the kernel shows the rest.
			s, problem = nil, "missing ("+statePath(run)+")"
		case err != nil:
			s, problem = nil, "unreadable ("+err.Error()+")"
		case s.Status == StatusBuilding && s.Builder != nil && s.Builder.Alive():
			busy = true
			return nil
		}
		rep = sweep(run, s, runs, true)
		rep.State = problem
		return nil
	})
	if err != nil {
		return &RunReport{Run: run, Failed: []error{err}}, false
	}
	return rep, busy
}

func matchAny(patterns []string, name string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// Describe says where a run is in its life, for listings: "up", "building
// (pid N)", "crashed while building" when its `grid up` is gone, or "dead"
// when the process it lived with (State.Owner) is gone.
func (s *State) Describe() string {
	if s.Status == StatusBuilding {
		if s.Builder != nil && s.Builder.Alive() {
			return fmt.Sprintf("building (pid %d)", s.Builder.PID)
		}
		return "crashed while building (remove with 'grid clean')"
	}
	if s.Dead() {
		return fmt.Sprintf("dead: process %d, which it lived with, is gone (remove with 'grid clean %s')", s.Owner.PID, s.Run)
	}
	return string(s.Status)
}

// Dead reports whether the run was built for a process (Options.Owned)
// that has gone without removing it, e.g. a `grid run` killed by SIGKILL.
func (s *State) Dead() bool {
	return s.Status == StatusUp && s.Owner != nil && !s.Owner.Alive()
}
