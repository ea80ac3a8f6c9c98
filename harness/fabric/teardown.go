package fabric

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strconv"
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
		if err != nil {
			return err
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
		var errs []error
		if err := stopProcesses(s.Processes); err != nil {
			errs = append(errs, err)
		}
		var names []string
		for _, n := range s.Nodes {
			names = append(names, n.Namespace)
		}
		warnSquatters(names)
		if err := removeNamespaces(names, 0); err != nil {
			errs = append(errs, err)
		}
		if _, err := removeRootInterfaces(func(name string) bool { return strings.HasPrefix(name, s.Tag) && ifnameRE.MatchString(name) }); err != nil {
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("tear down run %q (state kept, retry with 'grid clean'): %w", run, err)
		}
		if err := os.RemoveAll(runDir(run)); err != nil {
			return fmt.Errorf("remove state of run %q: %w", run, err)
		}
		return nil
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
// being recorded in the run's state. They are not killed (grid stops only the
// processes it recorded), but they keep their namespace, and its interfaces,
// alive after it is unmounted, so the user must know.
func warnSquatters(names []string) {
	inodes := map[uint64]string{}
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(NetnsDir, n), &st); err == nil {
			inodes[st.Ino] = n
		}
	}
	if len(inodes) == 0 {
		return
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		link, err := os.Readlink("/proc/" + e.Name() + "/ns/net")
		if err != nil {
			continue
		}
		var ino uint64
		if _, err := fmt.Sscanf(link, "net:[%d]", &ino); err != nil {
			continue
		}
		if ns, ok := inodes[ino]; ok {
			comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
			slog.Warn("process not recorded by grid is inside a namespace being removed; it keeps the namespace alive until it exits",
				"pid", pid, "command", strings.TrimSpace(string(comm)), "netns", ns)
		}
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

// CleanReport says what Clean removed.
type CleanReport struct {
	Runs       []string // runs removed
	Busy       []string // runs skipped because a live `grid up` is building them
	Interfaces []string // stray interfaces removed from the root namespace
}

// Clean removes the runs whose names match any of the shell patterns (all
// runs when none is given), whatever state they are in: finished, half built
// by a killed `grid up`, or half torn down. Runs that a live `grid up` is
// still building are skipped. With no patterns it also removes interfaces
// named like the fabric's from the root namespace.
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
		var errs []error
		for _, run := range runs {
			if !matchAny(patterns, run) {
				continue
			}
			s, err := LoadState(run)
			if errors.Is(err, ErrNoRun) {
				// Killed between creating the run directory and writing its
				// state: nothing else exists yet.
				if err := os.RemoveAll(runDir(run)); err != nil {
					errs = append(errs, err)
				} else {
					rep.Runs = append(rep.Runs, run)
				}
				continue
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if s.Status == StatusBuilding && s.Builder != nil && s.Builder.Alive() {
				rep.Busy = append(rep.Busy, run)
				continue
			}
			if err := teardown(run); err != nil {
				errs = append(errs, err)
				continue
			}
			rep.Runs = append(rep.Runs, run)
		}
		if len(patterns) == 0 {
			removed, err := removeRootInterfaces(ifnameRE.MatchString)
			rep.Interfaces = removed
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
	return rep, err
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
