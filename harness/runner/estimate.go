package runner

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// What one piece of an experiment costs on this design, from the benchmarks
// that measure them (README, "Benchmarks"). They are deliberately on the
// high side: an estimate that refuses a run the machine could hold is a
// nuisance, one that lets a run exhaust the machine's memory is a crash.
const (
	// memoryPerSwitch is a loaded aggregator pipeline with its ports'
	// sockets and its share of the one switch-host process (measured: 1.7
	// MB PSS per switch at k=8), besides its ports' receive rings
	// (switchRings).
	memoryPerSwitch = 4 << 20
	// memoryPerSwitchProcess is a switch that is a process of its own: a
	// grid switch per process (20 MB measured) or bmv2's
	// simple_switch_grpc (25 MB RSS before a program is loaded).
	memoryPerSwitchProcess = 32 << 20
	// memoryPerEndpoint is a worker or PS in the endpoint host, with its
	// socket buffers and the PS's kept results (measured: 86-170 KB PSS).
	memoryPerEndpoint = 512 << 10
	// memoryPerPort is the kernel's side of one veth end (queues, tbf).
	memoryPerPort = 256 << 10
	// memoryBase is the grid run process itself: solver, monitor, results.
	memoryBase = 256 << 20

	// startPerSwitch, startPerHost and startPerLink are the fabric build
	// and switch start-up per piece, on one core.
	startPerSwitch = 40 * time.Millisecond
	startPerHost   = 10 * time.Millisecond
	startPerLink   = 5 * time.Millisecond

	// hopsPerCoreSecond is what the emulated network forwards, in frames
	// over one link (fragment-hops) per second of one core.
	hopsPerCoreSecond = 30_000
)

// Estimate is what an experiment will take of this machine, worked out from
// the topology and jobs before anything is built.
type Estimate struct {
	Switches, Hosts, Links, Endpoints int
	// Memory is the resident memory the run will need.
	Memory uint64
	// Start is building the fabric and starting the switches and endpoints.
	Start time.Duration
	// PerPlan is one plan's jobs at the emulation's forwarding budget (an
	// upper bound: no aggregation in the network).
	PerPlan time.Duration
	Plans   int
	// FragmentHops is one plan's frames over links, gradients and results.
	FragmentHops float64
	// Machine is what the machine offers.
	Machine Machine
}

// Machine is what this machine offers an experiment.
type Machine struct {
	Cores int
	// MemAvailable is the kernel's estimate of memory available to new
	// work without swapping (/proc/meminfo).
	MemAvailable uint64
	// Files is the soft limit on open files (RLIMIT_NOFILE), Hard its ceiling.
	Files, FilesHard uint64
}

// ReadMachine reads what this machine offers.
func ReadMachine() (Machine, error) {
	m := Machine{Cores: runtime.NumCPU()}
	avail, err := memAvailable()
	if err != nil {
		return m, err
	}
	m.MemAvailable = avail
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return m, fmt.Errorf("open-file limit: %w", err)
	}
	m.Files, m.FilesHard = lim.Cur, lim.Max
	return m, nil
}

func memAvailable() (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("available memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("available memory: /proc/meminfo MemAvailable %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("available memory: /proc/meminfo has no MemAvailable")
}

// EstimateOptions are what an estimate depends on besides the topology
// and its jobs.
type EstimateOptions struct {
	// Fragments each worker sends; Plans how many run one after another.
	Fragments, Plans int
	// SwitchProcesses says every switch is a process of its own (bmv2, or
	// grid switch one per process) rather than a pipeline of one host.
	SwitchProcesses bool
	Machine         Machine
}

// EstimateRun works out what running o.Plans plans of jobs on t will take
// of the machine.
func EstimateRun(t *topo.Topology, jobs []workload.Job, o EstimateOptions) Estimate {
	fragments, m := o.Fragments, o.Machine
	e := Estimate{Switches: len(t.Switches()), Hosts: len(t.Hosts()), Links: len(t.Links), Plans: o.Plans, Machine: m}
	hops := hopCounts(t)
	for _, j := range jobs {
		e.Endpoints += 1 + len(j.Workers)
		for _, w := range j.Workers {
			// Up to the PS and a result back down, when nothing aggregates
			// on the way (Geryon's plan, the busiest).
			e.FragmentHops += 2 * float64(fragments) * float64(hops[w][j.PS])
		}
	}
	perSwitch := uint64(memoryPerSwitch)
	if o.SwitchProcesses {
		perSwitch = memoryPerSwitchProcess
	}
	e.Memory = memoryBase + uint64(e.Switches)*perSwitch + switchRings(t) + uint64(e.Endpoints)*memoryPerEndpoint +
		uint64(2*e.Links)*memoryPerPort
	e.Start = time.Duration(e.Switches)*startPerSwitch + time.Duration(e.Hosts)*startPerHost +
		time.Duration(e.Links)*startPerLink
	cores := max(1, m.Cores)
	e.PerPlan = time.Duration(e.FragmentHops / float64(hopsPerCoreSecond*cores) * float64(time.Second))
	return e
}

// hopCounts is the number of links on a shortest path between every pair of
// hosts, through switches only (hosts do not forward).
// switchRings is the memory of the switches' receive rings
// (dataplane.RingMemory), each switch's sized for its largest MTU.
func switchRings(t *topo.Topology) uint64 {
	ports, mtu := map[string]int{}, map[string]int{}
	for _, l := range t.Links {
		for _, end := range []string{l.A.Node, l.B.Node} {
			ports[end]++
			mtu[end] = max(mtu[end], l.EffectiveMTU())
		}
	}
	var total uint64
	for _, s := range t.Switches() {
		total += uint64(dataplane.RingMemory(ports[s.Name], mtu[s.Name]))
	}
	return total
}

func hopCounts(t *topo.Topology) map[string]map[string]int {
	out := make(map[string]map[string]int)
	for _, h := range t.Hosts() {
		dist := map[string]int{h.Name: 0}
		for queue := []string{h.Name}; len(queue) > 0; queue = queue[1:] {
			n := queue[0]
			if n != h.Name && t.Node(n).Kind == topo.KindHost {
				continue
			}
			for _, a := range t.Neighbors(n) {
				if _, seen := dist[a.Peer.Node]; !seen {
					dist[a.Peer.Node] = dist[n] + 1
					queue = append(queue, a.Peer.Node)
				}
			}
		}
		out[h.Name] = dist
	}
	return out
}

// Files is how many descriptors the run's processes may hold at once, per
// process: a switch host holds a socket per port and connection; an
// endpoint host one per endpoint.
func (e Estimate) Files() uint64 {
	return uint64(2*e.Links+e.Endpoints) + 256
}

// Check says whether the machine can hold the run: warnings for what is
// tight, an error for what it cannot hold.
func (e Estimate) Check() (warnings []string, err error) {
	if avail := e.Machine.MemAvailable; avail > 0 {
		switch {
		case e.Memory > avail*9/10:
			return nil, fmt.Errorf("the run needs about %s of memory and this machine has %s available: "+
				"use a smaller topology or fewer jobs, or --force to try anyway", formatBytes(e.Memory), formatBytes(avail))
		case e.Memory > avail/2:
			warnings = append(warnings, fmt.Sprintf("the run needs about %s of the %s of memory available",
				formatBytes(e.Memory), formatBytes(avail)))
		}
	}
	if need := e.Files(); e.Machine.FilesHard > 0 && need > e.Machine.FilesHard {
		return warnings, fmt.Errorf("the run needs about %d open files per process and the hard limit is %d (ulimit -Hn): raise it, or --force", need, e.Machine.FilesHard)
	}
	if hops := float64(hopsPerCoreSecond * max(1, e.Machine.Cores)); e.FragmentHops > 0 && e.PerPlan > time.Minute {
		warnings = append(warnings, fmt.Sprintf("each plan moves about %.3g fragment-hops, about %v at this machine's %.0f per second: fewer --fragments finish sooner",
			e.FragmentHops, e.PerPlan.Round(time.Second), hops))
	}
	return warnings, nil
}

// String is the one-line summary grid run prints before it builds.
func (e Estimate) String() string {
	total := e.Start + time.Duration(e.Plans)*e.PerPlan
	return fmt.Sprintf("%d switches, %d hosts, %d links, %d endpoints: about %s of memory (%s available), start %v, %d plan(s) of up to %v each, about %v in all",
		e.Switches, e.Hosts, e.Links, e.Endpoints, formatBytes(e.Memory), formatBytes(e.Machine.MemAvailable),
		roundEstimate(e.Start), e.Plans, roundEstimate(e.PerPlan), roundEstimate(total))
}

func roundEstimate(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(10 * time.Millisecond)
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond)
	default:
		return d.Round(time.Second)
	}
}

func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit*unit {
		return fmt.Sprintf("%d KiB", n/unit)
	}
	exp := int(math.Log(float64(n)) / math.Log(unit))
	exp = min(exp, 4)
	return fmt.Sprintf("%.1f %ciB", float64(n)/math.Pow(unit, float64(exp)), "KMGT"[exp-1])
}

// PlanTime is how long plan p's slowest worker takes for fragments
// fragments of values values at the plan's lambda emulated at scale: what
// a rate-faithful run of the plan lasts at least, whatever the CPU (0 when
// the plan has no lambda).
func PlanTime(p *solver.Plan, fragments, values int, scale float64) time.Duration {
	if p.LambdaGbps <= 0 || scale <= 0 {
		return 0
	}
	return seconds(float64(fragments) * frameBits(values) / (p.LambdaGbps * 1e9 * scale))
}
