package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/p4rt/client"
	"github.com/grid-ina/grid/harness/topo"
)

// DefaultGRPCBasePort is the first switch's P4Runtime port, as in the
// tutorials (P4RuntimeSwitch.next_grpc_port); DefaultThriftBasePort the
// Thrift port bmv2 would have (grid cli --thrift-port maps it back).
const (
	DefaultGRPCBasePort   = 50051
	DefaultThriftBasePort = 9090
)

// Options tune Start.
type Options struct {
	// Name is the run's name; RunName(dir) when empty.
	Name string
	// GRPCBasePort is the first switch's P4Runtime port on 127.0.0.1;
	// DefaultGRPCBasePort when 0.
	GRPCBasePort int
	// SwitchCommand runs a switch with simple_switch_grpc's command line
	// appended; {this executable, "switch"} when empty.
	SwitchCommand []string
	// Out receives progress and the summary; nil discards them.
	Out io.Writer
	// Backend runs the switches: BackendGrid ("" too) or BackendBmv2.
	Backend string
	// Compiler compiles the programs: CompilerGrid ("" too) or CompilerP4c.
	Compiler string
	// Grid is the grid executable that runs the lab's helper processes
	// (grid lab forward for bmv2); this executable when empty.
	Grid string
}

// Lab is a running exercise: its run of namespaces and its switches.
type Lab struct {
	Run      string          `json:"run"`
	Dir      string          `json:"dir"`
	Switches []SwitchProcess `json:"switches"`
	Hosts    []LabHost       `json:"hosts"`
	Backend  string          `json:"backend"`
}

// LabHost is a host of a lab and its address.
type LabHost struct {
	Name string `json:"name"`
	IP   string `json:"ip"`
}

// SwitchProcess is one switch of a lab.
type SwitchProcess struct {
	Name       string `json:"name"`
	DeviceID   uint64 `json:"device_id"`
	GRPCAddr   string `json:"grpc_addr"`
	ThriftPort int    `json:"thrift_port"`
	PID        int    `json:"pid"`
	Log        string `json:"log"`
}

var runNameUnsafe = regexp.MustCompile(`[^a-z0-9-]+`)

// RunName is the run name of the exercise in dir: "lab-" and its folder's
// name, so `grid lab shell` and `grid lab stop` find it from there.
func RunName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	name := "lab-" + strings.Trim(runNameUnsafe.ReplaceAllString(strings.ToLower(filepath.Base(abs)), "-"), "-")
	if len(name) > 32 {
		name = name[:32]
	}
	return strings.TrimRight(name, "-")
}

// statePath is where a lab records its switches, beside the run's state.
func statePath(run string) string { return filepath.Join(fabric.StateDir, run, "lab.json") }

// LoadLab returns the running lab of a run.
func LoadLab(run string) (*Lab, error) {
	data, err := os.ReadFile(statePath(run))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no lab %q is running (start it with 'grid lab EXERCISE_DIR')", run)
	}
	if err != nil {
		return nil, err
	}
	var l Lab
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", statePath(run), err)
	}
	return &l, nil
}

// Stop stops a lab's switches and removes its namespaces, and closes its
// tmux session (grid lab tmux), whose shells would keep the namespaces
// alive.
func Stop(run string) error {
	if tmux, err := exec.LookPath("tmux"); err == nil {
		exec.Command(tmux, "kill-session", "-t", run).Run() // none is fine
	}
	return fabric.Down(run)
}

// fabricTopology is the exercise's topology as grid builds it, with the
// hosts' own addresses.
func (ex *Exercise) fabricTopology() (*topo.Topology, map[topo.Endpoint]fabric.HostAddress) {
	t := &topo.Topology{Name: ex.Name(), Source: ex.Topology.Path}
	addrs := map[topo.Endpoint]fabric.HostAddress{}
	for i, h := range ex.Topology.Hosts {
		t.Nodes = append(t.Nodes, &topo.Node{Name: h.Name, Kind: topo.KindHost, ID: i + 1})
		addrs[topo.Endpoint{Node: h.Name, Port: 0}] = fabric.HostAddress{IP: h.IP, MAC: h.MAC}
	}
	for i, s := range ex.Topology.Switches {
		t.Nodes = append(t.Nodes, &topo.Node{Name: s.Name, Kind: topo.KindSwitch, ID: i + 1})
	}
	end := func(e Endpoint) topo.Endpoint {
		if e.Port < 0 {
			return topo.Endpoint{Node: e.Node, Port: 0}
		}
		return topo.Endpoint{Node: e.Node, Port: e.Port}
	}
	for _, l := range ex.Topology.Links {
		// Latency is emulated by the switches (see switchArgs): the kernel
		// here has no netem.
		t.Links = append(t.Links, &topo.Link{A: end(l.A), B: end(l.B), Bandwidth: topo.Bandwidth(l.Bandwidth * 1e6)})
	}
	return t, addrs
}

// Start runs the exercise: compile, build the network, start and program
// the switches, run the hosts' commands. On error everything built is
// removed again (the logs stay).
func Start(ctx context.Context, ex *Exercise, opts Options) (_ *Lab, err error) {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	if opts.Name == "" {
		opts.Name = RunName(ex.Dir)
	}
	switch opts.Backend {
	case "", BackendGrid, BackendBmv2:
	default:
		return nil, fmt.Errorf("backend %q: want grid or bmv2", opts.Backend)
	}
	if opts.GRPCBasePort == 0 {
		opts.GRPCBasePort = DefaultGRPCBasePort
	}
	if opts.Grid == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		opts.Grid = self
	}
	if len(opts.SwitchCommand) == 0 {
		opts.SwitchCommand = []string{opts.Grid, "switch"}
	}
	// What would stop the lab half-way is checked before anything is built.
	if _, err := fabric.LoadState(opts.Name); err == nil {
		return nil, fmt.Errorf("lab %s is running: stop it first with 'grid lab stop' (or give another --name)", opts.Name)
	}
	for i, sw := range ex.Topology.Switches {
		if addr := "127.0.0.1:" + strconv.Itoa(opts.GRPCBasePort+i); listening(addr) {
			return nil, fmt.Errorf("switch %s: %s is taken by another process (another lab? 'grid lab stop' there, or --grpc-port)", sw.Name, addr)
		}
	}
	fmt.Fprintf(out, "Compiling %d program(s) into build/\n", len(ex.Sources))
	progs, err := ex.CompileWith(opts.Compiler)
	if err != nil {
		return nil, err
	}
	for _, sw := range ex.Topology.Switches {
		if p := ex.switchProgram(sw); p != ex.DefaultJSON() {
			if _, err := os.Stat(p); err != nil {
				return nil, fmt.Errorf("%s: switches.%s.program: %w", ex.Topology.Path, sw.Name, err)
			}
		}
	}
	for _, d := range []string{"logs", "pcaps"} {
		if err := os.MkdirAll(filepath.Join(ex.Dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	t, addrs := ex.fabricTopology()
	fmt.Fprintf(out, "Building the network: %d hosts, %d switches, %d links\n", len(ex.Topology.Hosts), len(ex.Topology.Switches), len(ex.Topology.Links))
	st, err := fabric.Up(ctx, t, fabric.Options{Name: opts.Name, HostAddresses: addrs, MininetNames: true})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			if derr := fabric.Down(st.Run); derr != nil {
				err = fmt.Errorf("%w; removing run %s failed too: %w", err, st.Run, derr)
			}
		}
	}()
	lab := &Lab{Run: st.Run, Dir: ex.Dir, Backend: opts.Backend}
	for _, h := range ex.Topology.Hosts {
		lab.Hosts = append(lab.Hosts, LabHost{Name: h.Name, IP: h.IP.Addr().String()})
	}
	start := ex.startSwitch
	if opts.Backend == BackendBmv2 {
		start = ex.startBmv2Switch
	}
	var waits []func() error
	for i, sw := range ex.Topology.Switches {
		sp, wait, err := start(st, i, sw, opts)
		if err != nil {
			return nil, err
		}
		lab.Switches = append(lab.Switches, sp)
		waits = append(waits, wait)
	}
	for i, wait := range waits {
		if err := wait(); err != nil {
			return nil, fmt.Errorf("switch %s: %w", lab.Switches[i].Name, err)
		}
	}
	for _, h := range ex.Topology.Hosts {
		ex.runHostCommands(st, h, out)
	}
	for i, sw := range ex.Topology.Switches {
		if opts.Backend != BackendBmv2 || sw.CLIInput == "" {
			if err := ex.program(ctx, sw, lab.Switches[i], progs, out); err != nil {
				return nil, err
			}
			continue
		}
		// bmv2 takes cli_input over Thrift, as in the tutorials.
		if sw.RuntimeJSON != "" {
			viaP4Runtime := sw
			viaP4Runtime.CLIInput = ""
			if err := ex.program(ctx, viaP4Runtime, lab.Switches[i], progs, out); err != nil {
				return nil, err
			}
		}
		fmt.Fprintf(out, "Configuring switch %s with file %s\n", sw.Name, sw.CLIInput)
		if err := ex.runBmv2CLI(st, sw, lab.Switches[i]); err != nil {
			return nil, err
		}
	}
	data, err := json.MarshalIndent(lab, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(statePath(st.Run), data, 0o644); err != nil {
		return nil, err
	}
	lab.describe(ex, out)
	return lab, nil
}

// switchProgram is the bmv2 JSON a switch starts with.
func (ex *Exercise) switchProgram(sw Switch) string {
	if sw.Program != "" {
		return ex.Path(sw.Program)
	}
	return ex.DefaultJSON()
}

// startSwitch starts switch number i with simple_switch_grpc's command
// line as the tutorials' launcher writes it, its ports in the switch's
// namespace and its P4Runtime server on 127.0.0.1 in the root namespace.
// wait returns once it serves, or why it could not.
func (ex *Exercise) startSwitch(st *fabric.State, i int, sw Switch, opts Options) (SwitchProcess, func() error, error) {
	node := st.Node(sw.Name)
	sp := SwitchProcess{Name: sw.Name, DeviceID: uint64(i), GRPCAddr: "127.0.0.1:" + strconv.Itoa(opts.GRPCBasePort+i),
		ThriftPort: DefaultThriftBasePort + i, Log: filepath.Join(ex.Dir, "logs", sw.Name+".log")}
	args := append([]string{}, opts.SwitchCommand[1:]...)
	args = append(args, "--port-netns", node.NamespacePath())
	// Each port's link: its latency delays what the switch sends, and its
	// bandwidth drains the port's egress queue, which fills as bmv2's does
	// behind a slow link.
	links := map[int]Link{}
	for _, l := range ex.Topology.Links {
		for _, e := range []Endpoint{l.A, l.B} {
			if e.Node == sw.Name {
				links[e.Port] = l
			}
		}
	}
	for _, ifc := range node.Interfaces {
		args = append(args, "-i", fmt.Sprintf("%d@%s", ifc.Port, ifc.Name))
		if d := links[ifc.Port].Latency; d > 0 {
			args = append(args, "--delay", fmt.Sprintf("%d=%s", ifc.Port, d))
		}
		if bw := links[ifc.Port].Bandwidth; bw > 0 {
			args = append(args, "--rate", fmt.Sprintf("%d=%sbps", ifc.Port, strconv.FormatFloat(bw*1e6, 'f', -1, 64)))
		}
	}
	program := ex.switchProgram(sw)
	if ex.NoP4 && sw.Program == "" {
		program = "--no-p4"
	}
	args = append(args, "--pcap", filepath.Join(ex.Dir, "pcaps"), "--nanolog", fmt.Sprintf("ipc:///tmp/bm-%d-log.ipc", i),
		"--device-id", strconv.Itoa(i), program, "--log-console", "--thrift-port", strconv.Itoa(sp.ThriftPort),
		"--", "--grpc-server-addr", sp.GRPCAddr)
	if sw.CPUPort > 0 {
		args = append(args, "--cpu-port", strconv.Itoa(sw.CPUPort))
	}
	if sw.PriorityQueues > 0 {
		args = append(args, "--priority-queues", strconv.Itoa(sw.PriorityQueues))
	}
	logFile, err := os.Create(sp.Log)
	if err != nil {
		return sp, nil, err
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "%s %s\n", opts.SwitchCommand[0], strings.Join(args, " "))
	cmd := exec.Command(opts.SwitchCommand[0], args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = ex.Dir
	// Its own session: the switch outlives `grid lab` and a Ctrl-C in
	// the student's terminal, until `grid lab stop`.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return sp, nil, fmt.Errorf("switch %s: %w", sw.Name, err)
	}
	sp.PID = cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	p, err := fabric.ProcessOf(sp.PID, sw.Name, "grid-switch")
	if err == nil {
		err = fabric.RecordProcess(st.Run, p)
	}
	if err != nil {
		cmd.Process.Kill()
		return sp, nil, err
	}
	wait := func() error {
		deadline := time.After(30 * time.Second)
		for {
			if data, _ := os.ReadFile(sp.Log); strings.Contains(string(data), "grid switch: listening on") {
				return nil
			}
			select {
			case err := <-exited:
				return fmt.Errorf("exited (%v); its log %s says:\n%s", err, sp.Log, tail(sp.Log, 20))
			case <-deadline:
				return fmt.Errorf("not serving after 30 s; its log %s says:\n%s", sp.Log, tail(sp.Log, 20))
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return sp, wait, nil
}

func tail(path string, lines int) string {
	data, _ := os.ReadFile(path)
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// runHostCommands runs a host's commands with sh inside its namespace, in
// the exercise folder, as Mininet's h.cmd does. A failing command is
// reported and the rest still run, as there.
func (ex *Exercise) runHostCommands(st *fabric.State, h Host, out io.Writer) {
	for _, c := range h.Commands {
		var output []byte
		err := st.Node(h.Name).Do(func() error {
			cmd := exec.Command("sh", "-c", c)
			cmd.Dir = ex.Dir
			var err error
			output, err = cmd.CombinedOutput()
			return err
		})
		if err != nil {
			hint := ""
			if strings.Contains(string(output), "not found") {
				hint = " (route and arp come with Debian's net-tools: apt-get install net-tools)"
			}
			fmt.Fprintf(out, "warning: %s: %q: %v%s\n%s", h.Name, c, err, hint, output)
			slog.Warn("host command failed", "host", h.Name, "command", c, "err", err)
		}
	}
}

// program applies a switch's runtime_json and cli_input over P4Runtime,
// logging as the tutorials do (logs/sN-p4runtime-requests.txt,
// logs/sN_cli_output.log).
func (ex *Exercise) program(ctx context.Context, sw Switch, sp SwitchProcess, progs map[string]*Program, out io.Writer) error {
	if sw.RuntimeJSON == "" && sw.CLIInput == "" {
		fmt.Fprintf(out, "Warning: No control plane file provided for switch %s.\n", sw.Name)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// Every request goes to logs/sN-p4runtime-requests.txt, as the
	// tutorials' controller dumps them.
	requests, err := os.Create(filepath.Join(ex.Dir, "logs", sw.Name+"-p4runtime-requests.txt"))
	if err != nil {
		return err
	}
	defer requests.Close()
	c, err := client.Dial(ctx, sp.GRPCAddr, sp.DeviceID, 1, grpc.WithChainUnaryInterceptor(requestLogger(requests)))
	if err != nil {
		return fmt.Errorf("switch %s: %w", sw.Name, err)
	}
	// The controller leaves, so the student's own controller can be primary.
	defer c.Close()
	if sw.RuntimeJSON != "" {
		fmt.Fprintf(out, "Configuring switch %s using P4Runtime with file %s\n", sw.Name, sw.RuntimeJSON)
		rc, err := LoadRuntimeConfig(ex.Path(sw.RuntimeJSON))
		if err != nil {
			return err
		}
		if err := rc.Apply(ctx, c, ex.Dir, out); err != nil {
			return fmt.Errorf("switch %s: %w", sw.Name, err)
		}
	}
	if sw.CLIInput != "" {
		fmt.Fprintf(out, "Configuring switch %s with file %s\n", sw.Name, sw.CLIInput)
		if sw.RuntimeJSON == "" {
			// bmv2 runs the program of its command line, whose tables the
			// Thrift CLI fills; over P4Runtime the pipeline must be set.
			prog := progs[ex.switchProgram(sw)]
			if prog == nil {
				return fmt.Errorf("switch %s: cli_input needs a program of the exercise (its P4Info), not %s", sw.Name, sw.Program)
			}
			js, err := os.ReadFile(prog.JSON)
			if err != nil {
				return err
			}
			if err := c.SetPipeline(ctx, prog.P4Info, js); err != nil {
				return fmt.Errorf("switch %s: %w", sw.Name, err)
			}
		}
		in, err := os.Open(ex.Path(sw.CLIInput))
		if err != nil {
			return fmt.Errorf("%s: switches.%s.cli_input: %w", ex.Topology.Path, sw.Name, err)
		}
		defer in.Close()
		log, err := os.Create(filepath.Join(ex.Dir, "logs", sw.Name+"_cli_output.log"))
		if err != nil {
			return err
		}
		defer log.Close()
		s, err := NewSession(ctx, c, log)
		if err != nil {
			return fmt.Errorf("switch %s: %w", sw.Name, err)
		}
		if err := s.Run(ctx, in, ex.Path(sw.CLIInput)); err != nil {
			return fmt.Errorf("switch %s: %w", sw.Name, err)
		}
	}
	return nil
}

// maxLoggedRequest is the longest request the requests log quotes, as the
// tutorials' logger (a pipeline config, with its whole program, is not).
const maxLoggedRequest = 1024

// requestLogger writes every P4Runtime request a client makes to w in
// protobuf text, with the time and method, as the tutorials' gRPC request
// logger does.
func requestLogger(w io.Writer) grpc.UnaryClientInterceptor {
	var mu sync.Mutex
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if m, ok := req.(proto.Message); ok {
			text := prototext.Format(m)
			mu.Lock()
			fmt.Fprintf(w, "\n[%s] %s\n---\n", time.Now().UTC().Format("2006-01-02 15:04:05.000"), method)
			if len(text) < maxLoggedRequest {
				fmt.Fprintln(w, text)
			} else {
				fmt.Fprintf(w, "Message too long (%d bytes)! Skipping log...\n", len(text))
			}
			fmt.Fprintln(w, "---")
			mu.Unlock()
		}
		return invoke(ctx, method, req, reply, cc, opts...)
	}
}

// describe prints what the tutorials' runner prints once the network is up,
// with grid's commands in place of Mininet's.
func (l *Lab) describe(ex *Exercise, out io.Writer) {
	for _, sp := range l.Switches {
		fmt.Fprintf(out, "%s -> gRPC port: %s (device id %d)\n", sp.Name, strings.TrimPrefix(sp.GRPCAddr, "127.0.0.1:"), sp.DeviceID)
	}
	for _, h := range ex.Topology.Hosts {
		fmt.Fprintf(out, "%s: eth0 %s %s\n", h.Name, h.IP.Addr(), h.MAC)
	}
	rel := func(p string) string {
		if r, err := filepath.Rel(ex.Dir, p); err == nil {
			return r
		}
		return p
	}
	first := "h1"
	if len(ex.Topology.Hosts) > 0 {
		first = ex.Topology.Hosts[0].Name
	}
	fmt.Fprintf(out, "\nlab %s is up (run %s). From this folder:\n", ex.Name(), l.Run)
	last := ex.Topology.Hosts[len(ex.Topology.Hosts)-1].Name
	for _, line := range [][2]string{
		{"grid lab shell " + first, "a shell on " + first + " (Mininet's xterm " + first + ")"},
		{"grid lab exec " + first + " -- ping -c 1 " + last, "Mininet's " + first + " ping -c 1 " + last},
		{"grid lab pingall", "Mininet's pingall"},
		{"tail -f " + rel(filepath.Join(ex.Dir, "logs")) + "/s1.log", "a switch's log; pcaps/ has every port's frames"},
		cliLine(l),
		{"grid lab stop", "stop it all (Mininet's exit, make stop)"},
	} {
		fmt.Fprintf(out, "  %-34s %s\n", line[0], line[1])
	}
}

// cliLine is how the student gives the first switch simple_switch_CLI's
// commands: over P4Runtime with grid cli, or, on bmv2, with
// simple_switch_CLI itself through the forwarded Thrift port.
func cliLine(l *Lab) [2]string {
	if l.Backend == BackendBmv2 {
		return [2]string{fmt.Sprintf("simple_switch_CLI --thrift-port %d", DefaultThriftBasePort), "bmv2's CLI for " + l.Switches[0].Name}
	}
	return [2]string{fmt.Sprintf("grid cli --thrift-port %d", DefaultThriftBasePort), "simple_switch_CLI's commands for " + l.Switches[0].Name + ", over P4Runtime"}
}

// Shell replaces the process with a shell on a host of the lab.
func Shell(run, host string) error {
	sh := os.Getenv("SHELL")
	if sh == "" {
		sh = "/bin/bash"
	}
	if _, err := exec.LookPath(sh); err != nil {
		sh = "/bin/sh"
	}
	return fabric.Exec(run, host, []string{sh})
}

// listening reports whether something accepts TCP connections at addr.
func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
