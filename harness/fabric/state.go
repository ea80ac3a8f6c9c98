package fabric

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/topo"
)

// StateDir holds one directory per run with its state.json. It lives on /run
// (tmpfs) like the namespaces themselves, so both vanish together at reboot.
var StateDir = "/run/grid"

// Status is where a run is in its life.
type Status string

const (
	// StatusBuilding: `grid up` is building the run (Builder says which
	// process); if that process is gone the run is a crashed build's leftover.
	StatusBuilding Status = "building"
	// StatusUp: the run is built; its namespaces persist until `grid down`.
	StatusUp Status = "up"
)

// State is a run's record in StateDir/RUN/state.json. It is written before the
// first namespace exists and lists every namespace the run will create, so
// `grid clean` can remove a build killed at any point. Later components (the
// switch back end, the experiment runner) read the interfaces from it and
// record the processes they start with RecordProcess, so `grid down` and
// `grid clean` stop exactly those processes.
type State struct {
	Run          string    `json:"run"`
	Tag          string    `json:"tag"`                 // prefix of every interface name of the run
	TopologyFile string    `json:"topology_file"`       // absolute path; empty for a generated topology
	TopologyName string    `json:"topology_name"`       // Topology.Name
	Status       Status    `json:"status"`              // building or up
	Created      time.Time `json:"created"`             // when `grid up` started
	Builder      *Process  `json:"builder,omitempty"`   // the `grid up` process while building
	Owner        *Process  `json:"owner,omitempty"`     // the process the run lives with (Options.Owned), e.g. `grid run`
	Nodes        []Node    `json:"nodes"`               // in topology order
	Links        []Link    `json:"links"`               // in topology order
	Emulation    Emulation `json:"emulation"`           // what the kernel could not do
	Processes    []Process `json:"processes,omitempty"` // processes attached to the run's namespaces
}

// Node is one namespace of a run.
type Node struct {
	Name       string      `json:"name"`
	Kind       topo.Kind   `json:"kind"`
	ID         int         `json:"id"`
	Namespace  string      `json:"netns"` // name under /run/netns
	Interfaces []Interface `json:"interfaces"`
}

// Interface is one veth end inside a node's namespace. For a switch, Port is
// the P4 port number and Name the interface a switch process attaches to it
// (bmv2: -i PORT@NAME); for a host, Port is the interface number (eth0 is 0).
type Interface struct {
	Name  string `json:"name"`
	Port  int    `json:"port"`
	Index int    `json:"ifindex"` // fixed at creation, see ifindexBase
	MAC   string `json:"mac"`
	MTU   int    `json:"mtu"`
	// Host interfaces only: the address with its prefix and the next hop
	// (the switch port it faces), installed as a static neighbour.
	IP         string `json:"ip,omitempty"`
	Gateway    string `json:"gateway,omitempty"`
	GatewayMAC string `json:"gateway_mac,omitempty"`
	// Peer is the node and port at the other end of the link.
	Peer topo.Endpoint `json:"peer"`
	// RateBits is the tbf rate shaping this interface's egress (bits/s); 0: unshaped.
	RateBits float64 `json:"rate_bps,omitempty"`
}

// Link is one veth pair of a run.
type Link struct {
	A        topo.Endpoint `json:"a"`
	B        topo.Endpoint `json:"b"`
	IfA      string        `json:"if_a"`
	IfB      string        `json:"if_b"`
	RateBits float64       `json:"rate_bps,omitempty"`
	Delay    time.Duration `json:"delay_ns,omitempty"`
	Loss     float64       `json:"loss_percent,omitempty"`
}

// Emulation records what this kernel cannot do for the run, so the switch
// back end knows what it must emulate itself.
type Emulation struct {
	// Netem says whether the kernel has the netem qdisc (probed at `grid up`).
	Netem bool `json:"netem"`
	// NetemError is why adding a netem qdisc failed, when it did.
	NetemError string `json:"netem_error,omitempty"`
	// Pending lists the links whose delay or loss no qdisc applies: the switch
	// back end must emulate them. Empty when netem applied them or no link has any.
	Pending []Link `json:"pending,omitempty"`
}

// Process is a process attached to a run: its PID and its start time in clock
// ticks since boot (field 22 of /proc/PID/stat), which tells a recycled PID
// apart from the process that was recorded.
type Process struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start_ticks"`
	Node  string `json:"node,omitempty"` // the node it runs in; empty if none in particular
	Role  string `json:"role"`           // what it is: "grid-up", "bmv2", "exec", ...
}

// Node returns the named node of the run, or nil.
func (s *State) Node(name string) *Node {
	for i := range s.Nodes {
		if s.Nodes[i].Name == name {
			return &s.Nodes[i]
		}
	}
	return nil
}

// Count returns the numbers of hosts and switches of the run.
func (s *State) Count() (hosts, switches int) {
	for _, n := range s.Nodes {
		if n.Kind == topo.KindSwitch {
			switches++
		} else {
			hosts++
		}
	}
	return hosts, switches
}

// EndpointString writes a node's port as topology files do: "s1:p3", "h1:eth0".
func (s *State) EndpointString(e topo.Endpoint) string {
	kind := topo.KindSwitch
	if n := s.Node(e.Node); n != nil {
		kind = n.Kind
	}
	return e.Format(kind)
}

// Port returns the interface of node on port, or nil.
func (n *Node) Port(port int) *Interface {
	for i := range n.Interfaces {
		if n.Interfaces[i].Port == port {
			return &n.Interfaces[i]
		}
	}
	return nil
}

func runDir(run string) string    { return filepath.Join(StateDir, run) }
func statePath(run string) string { return filepath.Join(runDir(run), "state.json") }
func lockPath(run string) string  { return filepath.Join(runDir(run), "lock") }

// processesPath is where a run's processes are recorded, apart from the
// rest of its state: a fabric of hundreds of nodes has a state.json of a
// megabyte, which recording each of hundreds of processes in it would
// read and write again every time.
func processesPath(run string) string { return filepath.Join(runDir(run), "processes.json") }

// ErrNoRun is returned for a run that has no state.
var ErrNoRun = errors.New("no such run")

// LoadState reads a run's state, with its processes.
func LoadState(run string) (*State, error) {
	b, err := os.ReadFile(statePath(run))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("run %q: %w (see 'grid ls')", run, ErrNoRun)
	}
	if err != nil {
		return nil, fmt.Errorf("read state of run %q: %w", run, err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", statePath(run), err)
	}
	procs, recorded, err := loadProcesses(run)
	if err != nil {
		return nil, err
	}
	if recorded {
		s.Processes = procs
	}
	return &s, nil
}

// loadProcesses reads the run's processes.json; recorded is false when
// there is none (no process recorded yet, or a run recorded by an older
// grid in state.json).
func loadProcesses(run string) (procs []Process, recorded bool, err error) {
	b, err := os.ReadFile(processesPath(run))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read processes of run %q: %w", run, err)
	}
	if err := json.Unmarshal(b, &procs); err != nil {
		return nil, false, fmt.Errorf("%s: %w", processesPath(run), err)
	}
	return procs, true, nil
}

// cachedStates keeps the last state read of each run for nodeNamespace,
// which every process started in a node asks for: the state file only
// changes when the run is built or removed (processes are recorded
// apart), so its size and modification time tell a stale copy.
var cachedStates = struct {
	sync.Mutex
	m map[string]cachedState
}{m: map[string]cachedState{}}

type cachedState struct {
	size  int64
	mtime time.Time
	state *State
}

// loadStateCached is LoadState without the processes, from the cache when
// state.json has not changed; the caller must not change what it gets.
func loadStateCached(run string) (*State, error) {
	fi, err := os.Stat(statePath(run))
	if err != nil {
		return LoadState(run) // says what is wrong
	}
	cachedStates.Lock()
	c, ok := cachedStates.m[run]
	cachedStates.Unlock()
	if ok && c.size == fi.Size() && c.mtime.Equal(fi.ModTime()) {
		return c.state, nil
	}
	s, err := LoadState(run)
	if err != nil {
		return nil, err
	}
	cachedStates.Lock()
	cachedStates.m[run] = cachedState{size: fi.Size(), mtime: fi.ModTime(), state: s}
	cachedStates.Unlock()
	return s, nil
}

// save writes the state atomically: readers see the old or the new file, never half of one.
func (s *State) save() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state of run %q: %w", s.Run, err)
	}
	tmp := statePath(s.Run) + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write state of run %q: %w", s.Run, err)
	}
	if err := os.Rename(tmp, statePath(s.Run)); err != nil {
		return fmt.Errorf("write state of run %q: %w", s.Run, err)
	}
	return nil
}

// Runs lists the names of all runs with a directory in StateDir, sorted.
func Runs() ([]string, error) {
	entries, err := os.ReadDir(StateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var runs []string
	for _, e := range entries {
		if e.IsDir() {
			runs = append(runs, e.Name())
		}
	}
	sort.Strings(runs)
	return runs, nil
}

// withLock runs f holding an exclusive flock on path, so concurrent grid
// processes (two `grid up`s choosing tags, a switch recording its PID while
// `grid down` runs) never interleave their read-modify-write of the state.
func withLock(path string, f func() error) error {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("open lock %s: %w", path, err)
	}
	defer unix.Close(fd)
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	return f()
}

// globalLock serialises run creation and removal across grid processes.
func globalLock(f func() error) error {
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", StateDir, err)
	}
	return withLock(filepath.Join(StateDir, ".lock"), f)
}

// RecordProcess adds p to the processes of run, so that `grid down` and `grid
// clean` stop it. Use ProcessOf to fill in the start time. Records of
// processes that have exited are dropped on the way, so the list does not
// grow with every `grid exec`.
func RecordProcess(run string, p Process) error {
	return updateProcesses(run, func(procs []Process) []Process {
		kept := procs[:0]
		for _, q := range procs {
			// kill 0, cheaper than Alive for hundreds of records: a PID
			// reused since is kept until teardown, which checks Alive.
			if err := unix.Kill(q.PID, 0); err != unix.ESRCH {
				kept = append(kept, q)
			}
		}
		return append(kept, p)
	})
}

// Disown lets run outlive the process it was built for (Options.Owned): it
// stays up until 'grid down', and is no longer shown dead once that
// process is gone.
func Disown(run string) error {
	return withLock(lockPath(run), func() error {
		s, err := LoadState(run)
		if err != nil {
			return err
		}
		s.Owner = nil
		return s.save()
	})
}

// ForgetProcess removes the process with pid from run's state (it has exited).
func ForgetProcess(run string, pid int) error {
	return updateProcesses(run, func(procs []Process) []Process {
		kept := procs[:0]
		for _, p := range procs {
			if p.PID != pid {
				kept = append(kept, p)
			}
		}
		return kept
	})
}

// updateProcesses changes the run's recorded processes under its lock,
// reading and writing processes.json alone.
func updateProcesses(run string, change func([]Process) []Process) error {
	if _, err := os.Stat(runDir(run)); err != nil {
		return fmt.Errorf("run %q: %w", run, ErrNoRun)
	}
	return withLock(lockPath(run), func() error {
		procs, recorded, err := loadProcesses(run)
		if err != nil {
			return err
		}
		if !recorded {
			// The first record: take over those an older grid kept in
			// state.json.
			s, err := LoadState(run)
			if err != nil {
				return err
			}
			procs = s.Processes
		}
		b, err := json.MarshalIndent(change(procs), "", "  ")
		if err != nil {
			return fmt.Errorf("encode processes of run %q: %w", run, err)
		}
		tmp := processesPath(run) + ".tmp"
		if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("write processes of run %q: %w", run, err)
		}
		if err := os.Rename(tmp, processesPath(run)); err != nil {
			return fmt.Errorf("write processes of run %q: %w", run, err)
		}
		return nil
	})
}
