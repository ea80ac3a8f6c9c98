package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/controller/controllertest"
	"github.com/grid-ina/grid/harness/internal/cputime"
	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/switchhost"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// BenchmarkStartAndInstallOnTheTestbed measures the control plane's part
// of an experiment on a built testbed fabric: starting the three switch
// processes, connecting, loading the aggregator, installing grid-paths'
// plan, and stopping them.
func BenchmarkStartAndInstallOnTheTestbed(b *testing.B) {
	controllertest.NeedFabric(b)
	tp := topo.Testbed()
	d := deploy(b, tp, solver.AlgoGRIDPaths)
	st := upRun(b, tp)
	opts := startOptions(b)
	ctx := context.Background()
	for b.Loop() {
		ctl, err := Start(ctx, st, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := ctl.Install(ctx, d); err != nil {
			b.Fatal(err)
		}
		if err := ctl.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartFatTreeK8 measures what starting a k=8 fat-tree's 80
// switches costs, each design in the same run: building the fabric
// (namespaces, veths, shaping: the same for every design), starting the
// switches until each has the aggregator loaded (Start), installing
// grid-paths' plan (Install), and the proportional memory (PSS) of the
// switch processes afterwards, per switch. Later designs report their
// ratio to the first (today's).
//
//	go test -run '^$' -bench StartFatTreeK8 -benchtime 1x ./harness/controller
func BenchmarkStartFatTreeK8(b *testing.B) { benchmarkStart(b, "fattree-k8.yaml") }

// BenchmarkStartLeafSpine60 is BenchmarkStartFatTreeK8 on
// topologies/leafspine-60.yaml: 60 switches, 500 hosts, so grid-paths'
// plan holds many more entries per switch.
//
//	go test -run '^$' -bench StartLeafSpine60 -benchtime 1x ./harness/controller
func BenchmarkStartLeafSpine60(b *testing.B) { benchmarkStart(b, "leafspine-60.yaml") }

func benchmarkStart(b *testing.B, topology string) {
	controllertest.NeedFabric(b)
	tp := loadTopology(b, topology)
	d := deploy(b, tp, solver.AlgoGRIDPaths)
	ctx := context.Background()
	opts := startOptions(b) // builds grid once, before anything is timed
	designs := switchDesigns(b)
	var up time.Duration
	start := make([]time.Duration, len(designs))
	memory := make([]float64, len(designs)) // bytes per switch
	for b.Loop() {
		began := time.Now()
		st := upRun(b, tp)
		up += time.Since(began)
		for i, design := range designs {
			began := time.Now()
			ctl, err := Start(ctx, st, design.opts(opts))
			if err != nil {
				b.Fatalf("%s: %v", design.name, err)
			}
			if err := ctl.Install(ctx, d); err != nil {
				ctl.Close()
				b.Fatalf("%s: %v", design.name, err)
			}
			start[i] += time.Since(began)
			memory[i] += float64(processPSS(b, ctl)) / float64(len(ctl.Switches()))
			if err := ctl.Close(); err != nil {
				b.Fatalf("%s: %v", design.name, err)
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(up.Seconds()/n, "s-fabric-up")
	for i, design := range designs {
		b.ReportMetric(start[i].Seconds()/n, "s-start-"+design.name)
		b.ReportMetric(memory[i]/n/(1<<20), "MB/switch-"+design.name)
		for _, j := range peersOf(designs, i) {
			b.ReportMetric(start[j].Seconds()/start[i].Seconds(), "x-start-"+design.name+"-vs-"+designs[j].name)
			b.ReportMetric(memory[j]/memory[i], "x-memory-"+design.name+"-vs-"+designs[j].name)
		}
	}
}

// fatTreeK8 is topologies/fattree-k8.yaml.
func fatTreeK8(b *testing.B) *topo.Topology { return loadTopology(b, "fattree-k8.yaml") }

// loadTopology loads the named file of topologies/.
func loadTopology(b *testing.B, name string) *topo.Topology {
	root, err := repo.Root()
	if err != nil {
		b.Fatal(err)
	}
	tp, err := topo.Load(filepath.Join(root, "topologies", name))
	if err != nil {
		b.Fatal(err)
	}
	return tp
}

// processPSS is the proportional set size of the controller's switch
// processes, in bytes: their memory, with what they share split between
// the processes sharing it.
func processPSS(b testing.TB, ctl *Controller) uint64 {
	b.Helper()
	var total uint64
	for _, p := range ctl.procs {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", p.PID()))
		if err != nil {
			b.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
				kb, _ := strconv.ParseUint(f[1], 10, 64)
				total += kb << 10
			}
		}
	}
	return total
}

// hopsWindow is how many fragments the fragment-hops benchmark keeps in
// flight: enough that neither design waits for fragments, few enough that
// no switch port's ring (256 frames at k=8) overflows. With the packet
// generator, 1024 lost 0.2-0.9% of the fragments on the way (4.78-4.80
// hops counted per fragment that arrived, where the paths give 4.77), 512
// none in 12 of 13 designs' runs and 0.16% in one, at the same
// fragment-hops/s. The benchmark logs the share lost.
const hopsWindow = 512

// hopsMeasure is how long each design forwards in the fragment-hops
// benchmark, after a warm-up of a tenth of that.
const hopsMeasure = 3 * time.Second

// switchDesign is one way of running a fabric's switches, as the
// fragment-hops benchmark compares them.
type switchDesign struct {
	name    string
	base    string // the name of today's design this one is, or runs
	build   string // the earlier build that runs it (its name); "" for today's
	command string // the grid command that runs the switches
	opts    func(Options) Options
}

// todaysDesigns are the designs the benchmarks compare, the peer first.
var todaysDesigns = []switchDesign{
	{"process-per-switch", "process-per-switch", "", "switch", func(o Options) Options { o.Hosting = ProcessPerSwitch; return o }},
	{"one-process", "one-process", "", "switch-host", func(o Options) Options { o.Hosting = HostTogether; return o }},
}

// switchDesigns are todaysDesigns and, with GRID_BENCH_BEFORE set to
// other builds of grid (earlier commits'), each design run by each of
// those builds too, after today's, in the same run: a before/after table
// without the machine's load changing in between. GRID_BENCH_BEFORE is a
// comma-separated list of NAME=PATH (or a PATH alone, named "before"); a
// design run by build NAME is named DESIGN-NAME. A build runs only the
// designs whose command it has (grid switch-host came later than grid
// switch), and must take today's command lines and switch-host spec (a
// build before --exclusive-ports needs it accepted, if only to ignore it).
// GRID_BENCH_DESIGNS, a comma-separated list of those names, runs only
// the designs it names (say, one-process against one-process-main while
// working on the switch host).
func switchDesigns(b *testing.B) []switchDesign {
	b.Helper()
	designs, err := withBefore(todaysDesigns, os.Getenv("GRID_BENCH_BEFORE"), func(build, command string) bool {
		if exec.Command(build, command, "--help").Run() != nil {
			b.Logf("%s has no grid %s: the designs that need it do not run on it", build, command)
			return false
		}
		return true
	})
	if err == nil {
		designs, err = only(designs, os.Getenv("GRID_BENCH_DESIGNS"))
	}
	if err != nil {
		b.Fatal(err)
	}
	return designs
}

// withBefore adds to designs each one run by each earlier build listed in
// before (see switchDesigns) that has its command, as has(build, command)
// tells.
func withBefore(designs []switchDesign, before string, has func(build, command string) bool) ([]switchDesign, error) {
	designs = designs[:len(designs):len(designs)]
	if before == "" {
		return designs, nil
	}
	today := len(designs)
	seen := map[string]bool{}
	for _, item := range strings.Split(before, ",") {
		name, build, named := strings.Cut(item, "=")
		if !named {
			name, build = "before", item
		}
		switch {
		case name == "" || build == "":
			return nil, fmt.Errorf("GRID_BENCH_BEFORE: %q: want NAME=PATH or PATH", item)
		case seen[name]:
			return nil, fmt.Errorf("GRID_BENCH_BEFORE: build name %q given twice", name)
		}
		seen[name] = true
		for _, d := range designs[:today] {
			if !has(build, d.command) {
				continue
			}
			designs = append(designs, switchDesign{d.name + "-" + name, d.base, name, d.command, func(o Options) Options {
				o = d.opts(o)
				o.Binary = build
				return o
			}})
		}
	}
	return designs, nil
}

// only keeps, in their order, the designs that names (comma-separated)
// lists; all of them when names is empty. A name that is no design's is
// an error that lists the designs.
func only(designs []switchDesign, names string) ([]switchDesign, error) {
	if names == "" {
		return designs, nil
	}
	wanted := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		wanted[n] = true
	}
	var kept []switchDesign
	for _, d := range designs {
		if wanted[d.name] {
			kept = append(kept, d)
			delete(wanted, d.name)
		}
	}
	if len(wanted) > 0 {
		unknown := slices.Sorted(maps.Keys(wanted))
		return nil, fmt.Errorf("GRID_BENCH_DESIGNS: no design named %s; the designs are %s", strings.Join(unknown, ", "), strings.Join(designNames(designs), ", "))
	}
	return kept, nil
}

// designNames are the names of designs, in order.
func designNames(designs []switchDesign) []string {
	names := make([]string, len(designs))
	for i, d := range designs {
		names[i] = d.name
	}
	return names
}

// peersOf are the indexes of the designs designs[i] reports its ratios
// to: the peer (today's first design) as run by today's binary and by
// each earlier build, and the same design as run by each earlier build
// (so a design's gain over an earlier peer, or over its own earlier
// version, is one figure of one run); none for the peer itself, or for a
// design run by an earlier build.
func peersOf(designs []switchDesign, i int) []int {
	d, peer := designs[i], todaysDesigns[0].name
	if d.build != "" || d.base == peer {
		return nil
	}
	var peers []int
	for j, e := range designs {
		if e.base == peer || e.base == d.base && e.build != "" {
			peers = append(peers, j)
		}
	}
	return peers
}

// BenchmarkFragmentHopsFatTreeK8 measures what the emulated network
// forwards: fragment-hops per second (a fragment through one switch) in a
// k=8 fat-tree (topologies/fattree-k8.yaml: 80 switches, 191 workers and a
// PS) under Geryon's plan for hopsJobs jobs spread over the hosts, where
// every fragment crosses every switch on its path to its PS (1, 3 or 5:
// most cross the core). The 188 workers send from their hosts, keeping
// hopsWindow fragments in flight, for hopsMeasure per design; the hops are
// the switches' own port_rx counters (read over P4Runtime before and
// after), so a fragment dropped halfway counts the hops it made. Every
// design runs on the same fabric with the same load in the same run, and
// each later one reports its ratio to the first (today's).
//
// The load comes from a packet generator in this process (hopsLoad): what
// it spends of the two cores the switches do not get. Each worker's
// fragment is a whole GRID frame built once and sent by a packet socket in
// the worker's host, through the host's link and its shaping; a round of
// the workers, one fragment each in turn, leaves in one io_uring
// submission. A tc filter on each PS host's interface counts the frames
// that are fragments of the PS's job, in memory this process reads, and
// drops them before the host's IP stack; every millisecond the generator
// reads the counts and tops the window up. gen-cpu-µs/hop is what it
// costs per fragment-hop; about half of it is the first switch's receive
// of each fragment, which the kernel does in the sender's context (the
// switches do it for every further hop). It was 1.7-3.6 µs with a kernel
// UDP write per fragment, one goroutine per PS and Go's poller, which then
// took a third of a core from the switches.
//
// On a machine shared with other work the scheduler shares the CPU per
// thread. The switch host takes the weight of the processes it replaces
// (switchhost.TakeWeightOf), and so does the load generator here, so that
// neither design is held back by other work's share or by a starved
// generator. cpu-µs/hop, the switch processes' CPU time per fragment-hop,
// compares the designs whatever share they got.
//
//	go test -run '^$' -bench FragmentHops -benchtime 1x ./harness/controller
func BenchmarkFragmentHopsFatTreeK8(b *testing.B) {
	controllertest.NeedFabric(b)
	tp := fatTreeK8(b)
	d, err := aggregator.FromSolverPlan(tp, controllertest.SolveJobs(b, tp, spreadJobs(tp, hopsJobs), solver.AlgoGeryon), aggregator.PlanOptions{})
	if err != nil {
		b.Fatal(err)
	}
	st := upRun(b, tp)
	load := newHopsLoad(b, st, d)
	ctx := context.Background()
	opts := startOptions(b)
	// The load generator (this process) must not be what limits the
	// forwarding on a machine shared with other work: it takes the weight
	// of the switches it feeds.
	if nice, err := switchhost.TakeWeightOf(len(st.Nodes)); err != nil {
		b.Logf("the workers and PSs keep an ordinary process's CPU weight: %v", err)
	} else {
		b.Logf("the workers and PSs run at nice %d", nice)
	}
	designs := switchDesigns(b)
	rates := make([]float64, len(designs))
	perHop := make([]float64, len(designs))    // switch processes' CPU µs per fragment-hop
	genPerHop := make([]float64, len(designs)) // the generator's (this process's) CPU µs per fragment-hop
	for b.Loop() {
		for i, design := range designs {
			ctl, err := Start(ctx, st, design.opts(opts))
			if err != nil {
				b.Fatalf("%s: %v", design.name, err)
			}
			if err := ctl.Install(ctx, d); err != nil {
				ctl.Close()
				b.Fatalf("%s: %v", design.name, err)
			}
			_, err = load.flood(hopsMeasure / 10) // warm-up
			waitsBefore, before := contextSwitches(b, ctl), totalRx(b, ctl)
			cpuBefore, ownBefore, switchesBefore := readCPU(b), cputime.Used(), processCPU(b, ctl)
			began := time.Now()
			arrived, ferr := load.flood(hopsMeasure)
			// The CPU times before the counters: reading them over
			// P4Runtime is no part of forwarding or of the generator.
			took, own, switchCPU, cpu := time.Since(began), cputime.Used()-ownBefore, processCPU(b, ctl)-switchesBefore, readCPU(b).minus(cpuBefore)
			waits := contextSwitches(b, ctl)
			hops := totalRx(b, ctl) - before
			lost := load.lost() // after the counters: waiting for the last arrivals is no part of the figures
			if err := errors.Join(err, ferr, ctl.Close()); err != nil {
				b.Fatalf("%s: %v", design.name, err)
			}
			if arrived == 0 {
				b.Fatalf("%s: no fragment reached the PS", design.name)
			}
			rates[i] += float64(hops) / took.Seconds()
			perHop[i] += float64(switchCPU.Microseconds()) / float64(hops)
			genPerHop[i] += float64(own.Microseconds()) / float64(hops)
			b.Logf("%s: %d fragment-hops, %d fragments at the PS (%.2f hops each; of all sent, %.2f%% were lost on the way) in %v; machine CPU %s; switch processes %.0f%% of a core, their threads waited %.0f and were preempted %.0f times per 1000 hops; the workers and PSs (this process) %.0f%%, %.2f µs per hop",
				design.name, hops, arrived, float64(hops)/float64(arrived), 100*float64(lost)/float64(load.sent), took.Round(time.Millisecond), cpu,
				100*switchCPU.Seconds()/took.Seconds(), 1000*float64(waits.voluntary-waitsBefore.voluntary)/float64(hops), 1000*float64(waits.involuntary-waitsBefore.involuntary)/float64(hops),
				100*own.Seconds()/took.Seconds(), float64(own.Microseconds())/float64(hops))
		}
	}
	for i, design := range designs {
		b.ReportMetric(rates[i]/float64(b.N), "hops/s-"+design.name)
		b.ReportMetric(perHop[i]/float64(b.N), "cpu-µs/hop-"+design.name)
		b.ReportMetric(genPerHop[i]/float64(b.N), "gen-cpu-µs/hop-"+design.name)
		for _, j := range peersOf(designs, i) {
			b.ReportMetric(rates[i]/rates[j], "x-"+design.name+"-vs-"+designs[j].name)
			b.ReportMetric(perHop[j]/perHop[i], "x-cpu-"+design.name+"-vs-"+designs[j].name)
		}
	}
}

// hopsJobs is how many jobs share the hosts in the fragment-hops benchmark:
// four PSs of 47 workers each, as in its first measurements (then a PS
// could take at most one bitmap's 64 workers; now it takes more under
// further node ids, but the figures stay comparable).
const hopsJobs = 4

// spreadJobs deals tp's hosts out to n jobs in turn, so every job has
// workers in every pod; each job's last host is its PS.
func spreadJobs(tp *topo.Topology, n int) []workload.Job {
	jobs := make([]workload.Job, n)
	i := 0
	for _, node := range tp.Nodes {
		if node.Kind != topo.KindHost {
			continue
		}
		j := &jobs[i%n]
		j.Workers = append(j.Workers, node.Name)
		i++
	}
	for i := range jobs {
		j := &jobs[i]
		j.Name = fmt.Sprintf("job%d", i+1)
		j.PS, j.Workers = j.Workers[len(j.Workers)-1], j.Workers[:len(j.Workers)-1]
	}
	return jobs
}

// totalRx is the number of frames every switch port has received, by the
// program's port_rx counters.
func totalRx(b testing.TB, ctl *Controller) uint64 {
	b.Helper()
	counters, err := ctl.ReadCounters(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	var n uint64
	for _, sw := range counters {
		for _, p := range sw.Ports {
			n += p.Rx.Packets
		}
	}
	return n
}

// cpuTicks are the machine's CPU times by kind, from /proc/stat's cpu line.
type cpuTicks struct{ user, system, softirq, idle uint64 }

func readCPU(b *testing.B) cpuTicks {
	b.Helper()
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq ...
	if len(f) < 8 {
		b.Fatalf("/proc/stat: unexpected first line %q", line)
	}
	n := func(i int) uint64 { v, _ := strconv.ParseUint(f[i], 10, 64); return v }
	return cpuTicks{user: n(1) + n(2), system: n(3) + n(6), softirq: n(7), idle: n(4) + n(5)}
}

func (c cpuTicks) minus(o cpuTicks) cpuTicks {
	return cpuTicks{c.user - o.user, c.system - o.system, c.softirq - o.softirq, c.idle - o.idle}
}

// String is the split in percent of all CPU time.
func (c cpuTicks) String() string {
	all := float64(c.user + c.system + c.softirq + c.idle)
	if all == 0 {
		return "unmeasured"
	}
	pct := func(v uint64) float64 { return 100 * float64(v) / all }
	return fmt.Sprintf("user %.0f%%, system %.0f%%, softirq %.0f%%, idle %.0f%%", pct(c.user), pct(c.system), pct(c.softirq), pct(c.idle))
}

// processCPU is the CPU time the controller's switch processes have used.
func processCPU(b *testing.B, ctl *Controller) time.Duration {
	b.Helper()
	var total time.Duration
	for _, p := range ctl.procs {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID()))
		if err != nil {
			b.Fatal(err)
		}
		// The fields after the command's closing parenthesis; utime and
		// stime are the 12th and 13th, in clock ticks (100 a second).
		f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		utime, _ := strconv.ParseUint(f[11], 10, 64)
		stime, _ := strconv.ParseUint(f[12], 10, 64)
		total += time.Duration(utime+stime) * 10 * time.Millisecond
	}
	return total
}

// switches is what the switch processes' threads have been switched out,
// summed from /proc/PID/task/*/status: voluntary (a thread waiting, to be
// woken again) and involuntary (a thread preempted).
type switches struct{ voluntary, involuntary uint64 }

func contextSwitches(b *testing.B, ctl *Controller) switches {
	b.Helper()
	var total switches
	for _, p := range ctl.procs {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", p.PID()))
		if err != nil || len(tasks) == 0 {
			b.Fatalf("threads of switch process %d: %v", p.PID(), err)
		}
		for _, task := range tasks {
			data, err := os.ReadFile(task)
			if err != nil {
				continue // the thread has ended
			}
			for _, line := range strings.Split(string(data), "\n") {
				name, value, _ := strings.Cut(line, ":")
				n, _ := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
				switch name {
				case "voluntary_ctxt_switches":
					total.voluntary += n
				case "nonvoluntary_ctxt_switches":
					total.involuntary += n
				}
			}
		}
	}
	return total
}
