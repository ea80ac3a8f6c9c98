package fabric

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A run's state file is one witness of what it left; the kernel and the
// disk are the others. A `grid run` killed by SIGKILL, a state file removed
// or corrupted by hand, still leave namespaces named RUN-NODE, processes
// inside them and temporary folders named after the run. The functions
// here find those, so cleanup never reports success while they remain.

// tempPrefix starts the name of a run's temporary folders (TempDir):
// grid-run-RUN.PID.START-RANDOM. Run names have no '.', so the run's name
// ends at the first one; PID and START (clock ticks since boot) name the
// process that made it, which is alive as long as the folder is in use.
const tempPrefix = "grid-run-"

// TempDir creates a temporary folder for run's files (logs, specs,
// reports) in os.TempDir(), named after the run and the calling process.
// Down and Clean remove it once that process is gone, so a killed `grid
// run` leaves none behind; while it lives, the folder is its own to remove.
func TempDir(run string) (string, error) {
	if err := CheckRunName(run); err != nil {
		return "", err
	}
	self, err := ProcessOf(os.Getpid(), "", "")
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%s.%d.%d-*", tempPrefix, run, self.PID, self.Start))
	if err != nil {
		return "", fmt.Errorf("temporary folder of run %s: %w", run, err)
	}
	return dir, nil
}

// tempDir is a temporary folder found on disk with what its name says.
type tempDir struct {
	path  string
	run   string
	maker Process
}

// tempDirs lists the temporary folders of the runs for which match holds.
func tempDirs(match func(run string) bool) []tempDir {
	entries, err := os.ReadDir(os.TempDir())
	if err != nil {
		return nil
	}
	var dirs []tempDir
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		run, rest, ok := strings.Cut(rest, ".")
		if !ok || !match(run) {
			continue
		}
		pid, rest, _ := strings.Cut(rest, ".")
		start, _, _ := strings.Cut(rest, "-")
		d := tempDir{path: filepath.Join(os.TempDir(), e.Name()), run: run}
		d.maker.PID, _ = strconv.Atoi(pid)
		d.maker.Start, _ = strconv.ParseUint(start, 10, 64)
		dirs = append(dirs, d)
	}
	return dirs
}

// removeDeadTempDirs removes the temporary folders of the runs matched
// whose maker is gone, returning the ones removed.
func removeDeadTempDirs(match func(run string) bool) ([]string, error) {
	var removed []string
	var errs []error
	for _, d := range tempDirs(match) {
		if d.maker.Alive() {
			continue
		}
		if err := os.RemoveAll(d.path); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", d.path, err))
			continue
		}
		removed = append(removed, d.path)
	}
	return removed, errors.Join(errs...)
}

// runNamespaces lists the namespaces under NetnsDir named RUN-*, leaving
// out those another run claims: a namespace listed in another run's state,
// or one whose name starts with a longer run's name (run "a" and run "a-b"
// both match "a-b-h1"; it is a-b's).
func runNamespaces(run string, others []string) ([]string, error) {
	entries, err := os.ReadDir(NetnsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", NetnsDir, err)
	}
	claimed := map[string]bool{}
	var longer []string
	for _, o := range others {
		if o == run {
			continue
		}
		if s, err := LoadState(o); err == nil {
			for _, n := range s.Nodes {
				claimed[n.Namespace] = true
			}
		}
		if strings.HasPrefix(o, run+"-") {
			longer = append(longer, o)
		}
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, run+"-") || claimed[name] {
			continue
		}
		if slices.ContainsFunc(longer, func(o string) bool { return strings.HasPrefix(name, o+"-") }) {
			continue
		}
		names = append(names, name)
	}
	return names, nil
}

// processesIn finds the processes whose network namespace is one of the
// named ones, by the namespace's inode, with the namespace as their Node
// and their command as their Role. The calling process is left out.
func processesIn(names []string) []Process {
	return findProcesses(names, "")
}

// processesOf finds the processes of run: those inside its namespaces
// (names) and those whose command line names one of its folders, its
// temporary folders or its state directory, as a switch host that runs in
// the root namespace and reads its configuration there does.
func processesOf(run string, names []string) []Process {
	return findProcesses(names, run)
}

// findProcesses scans /proc for processes inside the named namespaces
// and, when run is set, for those whose command line names run's folders.
func findProcesses(names []string, run string) []Process {
	inodes := map[uint64]string{}
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(NetnsDir, n), &st); err == nil {
			inodes[st.Ino] = n
		}
	}
	if len(inodes) == 0 && run == "" {
		return nil
	}
	folders := []string{filepath.Join(os.TempDir(), tempPrefix+run+"."), runDir(run) + "/"}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var found []Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		node, ok := "", false
		if link, err := os.Readlink("/proc/" + e.Name() + "/ns/net"); err == nil {
			var ino uint64
			if _, err := fmt.Sscanf(link, "net:[%d]", &ino); err == nil {
				node, ok = inodes[ino]
			}
		}
		if !ok && run != "" {
			cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			ok = slices.ContainsFunc(folders, func(f string) bool { return strings.Contains(string(cmdline), f) })
		}
		if !ok {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		p, err := ProcessOf(pid, node, strings.TrimSpace(string(comm)))
		if err != nil {
			continue // it exited meanwhile
		}
		found = append(found, p)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].PID < found[j].PID })
	return found
}

// Leftovers are what a run left in the kernel and on disk, found without
// its state: namespaces named after it, processes inside them or working
// on its folders, temporary folders (alive or not).
type Leftovers struct {
	Namespaces []string
	Processes  []Process
	TempDirs   []string
}

// FindLeftovers looks for what run left, for listings of runs whose state
// is lost.
func FindLeftovers(run string) (*Leftovers, error) {
	others, err := Runs()
	if err != nil {
		return nil, err
	}
	names, err := runNamespaces(run, others)
	if err != nil {
		return nil, err
	}
	l := &Leftovers{Namespaces: names, Processes: processesOf(run, names)}
	for _, d := range tempDirs(func(r string) bool { return r == run }) {
		l.TempDirs = append(l.TempDirs, d.path)
	}
	return l, nil
}

// RunReport is what cleaning one run removed and what it could not.
type RunReport struct {
	Run string
	// State says what the run's state file was like when it was not
	// readable ("missing", "unreadable: ..."); empty when it was.
	State string
	// Processes were stopped: the ones recorded in the state and the ones
	// found inside the run's namespaces (Node is the namespace then).
	Processes []Process
	// Namespaces were removed, TempDirs deleted (TempDir).
	Namespaces []string
	TempDirs   []string
	// Failed is what could not be removed, and why; the run's state is
	// kept then, so that 'grid clean' can retry.
	Failed []error
}

// sweep removes what run left: the processes recorded in s (nil when the
// state is lost) and, when stopFound, those found inside its namespaces;
// the namespaces listed in s and those found by the run's name; the run's
// interfaces strayed into the root namespace; its temporary folders whose
// maker is gone; and, when all of that went, its state directory.
func sweep(run string, s *State, others []string, stopFound bool) *RunReport {
	rep := &RunReport{Run: run}
	fail := func(err error) {
		if err != nil {
			rep.Failed = append(rep.Failed, err)
		}
	}
	var names []string
	listed := map[string]bool{}
	if s != nil {
		for _, n := range s.Nodes {
			names = append(names, n.Namespace)
			listed[n.Namespace] = true
		}
	}
	found, err := runNamespaces(run, others)
	fail(err)
	for _, n := range found {
		if !listed[n] {
			names = append(names, n)
		}
	}
	recorded := []Process(nil)
	if s != nil {
		recorded = s.Processes
	} else {
		// Processes are recorded apart from the state, which may be lost
		// while they are not.
		recorded, _, _ = loadProcesses(run)
	}
	var procs []Process
	for _, p := range recorded {
		if p.Alive() {
			procs = append(procs, p)
		}
	}
	if stopFound {
		for _, p := range processesOf(run, names) {
			if !slices.ContainsFunc(procs, func(q Process) bool { return q.PID == p.PID && q.Start == p.Start }) {
				procs = append(procs, p)
			}
		}
	} else {
		warnSquatters(names, procs)
	}
	if err := stopProcesses(procs); err != nil {
		fail(err)
	}
	for _, p := range procs {
		if !p.Alive() {
			rep.Processes = append(rep.Processes, p)
		}
	}
	var existing []string
	for _, n := range names {
		if namespaceExists(n) {
			existing = append(existing, n)
		}
	}
	fail(removeNamespaces(existing, 0))
	for _, n := range existing {
		if !namespaceExists(n) {
			rep.Namespaces = append(rep.Namespaces, n)
		}
	}
	if s != nil {
		_, err := removeRootInterfaces(func(name string) bool { return strings.HasPrefix(name, s.Tag) && ifnameRE.MatchString(name) })
		fail(err)
	}
	dirs, err := removeDeadTempDirs(func(r string) bool { return r == run })
	rep.TempDirs = dirs
	fail(err)
	if len(rep.Failed) == 0 {
		if err := os.RemoveAll(runDir(run)); err != nil {
			fail(fmt.Errorf("remove state of run %q: %w", run, err))
		}
	}
	return rep
}

// Err joins what could not be removed, naming the run.
func (r *RunReport) Err() error {
	if len(r.Failed) == 0 {
		return nil
	}
	return fmt.Errorf("run %s: %w (state kept; retry with 'grid clean %s')", r.Run, errors.Join(r.Failed...), r.Run)
}

// Summary says in one line what was removed: "3 processes stopped, 12
// namespaces, 1 temporary folder (/tmp/grid-run-...)".
func (r *RunReport) Summary() string {
	var parts []string
	if r.State != "" {
		parts = append(parts, "its state was "+r.State)
	}
	if n := len(r.Processes); n > 0 {
		var who []string
		for _, p := range r.Processes {
			w := fmt.Sprintf("%d %s", p.PID, p.Role)
			if p.Node != "" {
				w += " in " + p.Node
			}
			who = append(who, w)
		}
		parts = append(parts, fmt.Sprintf("stopped %s (%s)", plural(n, "process", "processes"), strings.Join(who, ", ")))
	}
	parts = append(parts, "removed "+plural(len(r.Namespaces), "namespace", "namespaces"))
	if n := len(r.TempDirs); n > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s)", plural(n, "temporary folder", "temporary folders"), strings.Join(r.TempDirs, ", ")))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
