// Package lab runs teaching exercises in the folder format of p4lang/tutorials
// on grid, without a VM, Mininet or bmv2: what `make run` does there, `grid
// lab EXERCISE_DIR` does here. An exercise folder holds P4 programs, a
// topology.json (hosts with address, MAC and commands; switches with a
// runtime_json of table entries or a cli_input of simple_switch_CLI
// commands; links with latency and bandwidth) and a Makefile whose TOPO and
// DEFAULT_PROG say which topology and program to use.
//
// Start compiles every program into build/ (NAME.json and
// NAME.p4.p4info.txtpb, as the tutorials' Makefile has p4c write them),
// builds the topology as network namespaces (package fabric) with the
// hosts' own addresses and ARP, runs a `grid switch` per switch with bmv2's
// command line (device id N-1 and P4Runtime on 127.0.0.1:50051+N-1 for the
// Nth switch of the file, reachable from the root namespace where the
// student's controller runs; logs/sN.log and pcaps/sN-ethP_in.pcap as bmv2
// names them), runs the hosts' commands and programs every switch from its
// runtime_json and cli_input. Stop removes it all.
//
// A running lab is driven as Mininet's CLI drives its network: Shell and
// Lab.Exec run on a host (host names standing for their addresses, as in
// "h1 ping h2"), Lab.PingAll is pingall, Lab.Tmux opens a window per host.
// The runtime CLI (Session) speaks simple_switch_CLI's commands over
// P4Runtime, for cli_input files and for `grid cli`, and set_queue_rate
// and set_queue_depth to grid switch's egress queues.
//
// grid's own labs (p4/labs) add a check.json that Check grades a
// student's program or topology by: STF packet tests on the engine and
// checks of the solver's plan.
package lab

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Exercise is an exercise folder.
type Exercise struct {
	Dir      string // absolute
	Topology *Topology
	// Sources are the P4 programs of the folder (NAME.p4), all compiled
	// as the tutorials' Makefile compiles them; Default is the one
	// switches run unless their "program" says otherwise.
	Sources []string
	Default string
	// NoP4 is the Makefile's NO_P4 (the tutorials' p4runtime exercise):
	// switches start without a program (--no-p4) until a controller sets
	// one, unless their "program" names one.
	NoP4 bool
}

// Load reads an exercise folder: its Makefile's TOPO and DEFAULT_PROG
// (defaults: topology.json and the folder's only .p4 file) and the topology.
func Load(dir string) (*Exercise, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: not an exercise folder (%v)", dir, err)
	}
	ex := &Exercise{Dir: abs}
	vars, err := makeVars(filepath.Join(abs, "Makefile"))
	if err != nil {
		return nil, err
	}
	ex.NoP4 = vars["NO_P4"] != ""
	ex.Sources, _ = filepath.Glob(filepath.Join(abs, "*.p4"))
	slices.Sort(ex.Sources)
	switch prog := vars["DEFAULT_PROG"]; {
	case prog != "":
		ex.Default = filepath.Join(abs, prog)
		if !slices.Contains(ex.Sources, ex.Default) {
			return nil, fmt.Errorf("%s: DEFAULT_PROG %s is not a .p4 file of the folder", filepath.Join(dir, "Makefile"), prog)
		}
	case len(ex.Sources) == 1:
		ex.Default = ex.Sources[0]
	case len(ex.Sources) == 0:
		return nil, fmt.Errorf("%s: no .p4 program", dir)
	default:
		return nil, fmt.Errorf("%s: %d .p4 programs and no DEFAULT_PROG in the Makefile to say which switches run", dir, len(ex.Sources))
	}
	topo := vars["TOPO"]
	if topo == "" {
		topo = "topology.json"
	}
	if ex.Topology, err = LoadTopology(filepath.Join(abs, topo)); err != nil {
		return nil, err
	}
	return ex, nil
}

// Name is the folder's name.
func (ex *Exercise) Name() string { return filepath.Base(ex.Dir) }

// Path resolves a path of the exercise's files (relative to the folder).
func (ex *Exercise) Path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(ex.Dir, p)
}

// DefaultJSON is where the default program's bmv2 JSON is built.
func (ex *Exercise) DefaultJSON() string { return ex.buildPath(ex.Default, ".json") }

func (ex *Exercise) buildPath(source, suffix string) string {
	return filepath.Join(ex.Dir, "build", strings.TrimSuffix(filepath.Base(source), ".p4")+suffix)
}

var makeVarRE = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\?=|:=|=)\s*(.*?)\s*$`)

// makeVars reads the simple assignments of a Makefile (a missing Makefile
// has none). Only literal values are taken; the tutorials' Makefiles set
// TOPO, DEFAULT_PROG and BMV2_SWITCH_EXE this way.
func makeVars(path string) (map[string]string, error) {
	vars := map[string]string{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return vars, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if m := makeVarRE.FindStringSubmatch(line); m != nil && !strings.Contains(m[2], "$(") {
			vars[m[1]] = m[2]
		}
	}
	return vars, sc.Err()
}

// UseProgram makes the switches run program (a path relative to the
// folder, e.g. solution/NAME.p4) in place of the folder's program of the
// same name, which is left untouched: build/NAME.json is then built from it.
func (ex *Exercise) UseProgram(program string) error {
	path := ex.Path(program)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("--program: %w", err)
	}
	name := filepath.Base(path)
	sources := []string{path}
	for _, s := range ex.Sources {
		if filepath.Base(s) != name {
			sources = append(sources, s)
		}
	}
	ex.Sources = sources
	if filepath.Base(ex.Default) == name || len(sources) == 1 {
		ex.Default = path
	}
	return nil
}
