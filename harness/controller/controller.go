// Package controller is the control plane of an experiment on a fabric run:
// it starts the run's switches (by default all of them in one `grid
// switch-host` process, each on its namespace's veth ports with its own
// P4Runtime listener there; ProcessPerSwitch runs a `grid switch`, grid's
// drop-in for simple_switch_grpc, per switch; a Backend runs another
// target's processes), connects to each over P4Runtime, loads the compiled
// GRID aggregator, installs each switch's part of the routing plan
// (aggregator.Deployment) and reads the switches' counters.
//
//	ctl, err := controller.Start(ctx, st, controller.Options{Program: prog})
//	defer ctl.Close()
//	err = ctl.Install(ctx, deployment)
//	counters, err := ctl.ReadCounters(ctx, []uint16{1})
//
// Each switch listens for P4Runtime on 127.0.0.1:9559 of its own network
// namespace (as bmv2 would in a Mininet-style testbed); the controller
// connects from the root namespace with a socket made inside the switch's
// namespace. The switch processes are recorded in the run's state, so
// fabric.Down stops them even if the controller's process dies first.
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/p4rt/client"
	"github.com/grid-ina/grid/harness/switchhost"
	"github.com/grid-ina/grid/harness/topo"
)

// P4RuntimeAddr is where every switch's P4Runtime server listens, inside
// the switch's own network namespace.
const P4RuntimeAddr = "127.0.0.1:9559"

// DefaultStartTimeout bounds a switch's start when Options.StartTimeout is 0.
const DefaultStartTimeout = 15 * time.Second

// stopGrace is how long a switch gets to exit after SIGTERM before SIGKILL.
const stopGrace = 2 * time.Second

// readyLine starts the line `grid switch` prints once its P4Runtime server
// listens; hostReadyLine the line `grid switch-host` prints once all its
// switches listen.
const (
	readyLine     = "grid switch: listening on "
	hostReadyLine = "grid switch-host: listening"
)

// electionID makes the controller primary on every switch.
const electionID = 1

// Hosting says how a run's switches run as processes.
type Hosting int

const (
	// HostTogether runs every switch in one `grid switch-host` process,
	// each in its own namespace with its own P4Runtime listener at
	// P4RuntimeAddr (the default: one Go runtime instead of one per
	// switch).
	HostTogether Hosting = iota
	// ProcessPerSwitch runs a `grid switch` process per switch in its
	// namespace, as a testbed of simple_switch_grpc processes runs: the
	// way for a back end whose switches are separate processes reached
	// over P4Runtime.
	ProcessPerSwitch
)

func (h Hosting) String() string {
	switch h {
	case HostTogether:
		return "one process"
	case ProcessPerSwitch:
		return "a process per switch"
	}
	return fmt.Sprintf("Hosting(%d)", int(h))
}

// Options tune Start.
type Options struct {
	// Binary is the grid executable whose `switch` command runs each
	// switch; "" means os.Executable(), right when the caller is grid.
	Binary string
	// Program is the compiled aggregator (aggregator.Compile) that every
	// switch loads.
	Program *p4c.Result
	// Backend starts the switches; nil means grid's own, hosted as
	// Hosting says.
	Backend Backend
	// Hosting says how grid's switches run as processes.
	Hosting Hosting
	// StartTimeout bounds each switch's start: until its ready line, and
	// again for connecting and loading the program. 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// LogDir receives each switch process's standard output and error:
	// SWITCH.log for a process per switch, switch-host.log (with the
	// spec it runs, switches.json) for one process. "" means the run's
	// state directory (fabric.StateDir/RUN), which fabric.Down removes.
	LogDir string
	// Detach leaves the switches running when the calling process exits or
	// Close is called (grid run --keep); fabric.Down stops them. Without
	// it they die with the calling process.
	Detach bool
}

// Controller is the control plane of one fabric run's switches.
type Controller struct {
	run      string
	detach   bool
	program  *p4c.Result
	switches []*Switch
	procs    []*Process // the processes running the switches
}

// Switch is one switch of the run, the process that runs it and the
// P4Runtime connection to it.
type Switch struct {
	// Process runs the switch (with others, unless each switch has its own).
	*Process
	Name string
	ID   int
	// Ports are the switch's P4 ports, in the fabric's order.
	Ports []int

	node      *fabric.Node
	readyLine string // the process's ready line, to wait for before connecting; "" once it was seen
	client    *client.Client
}

// Start starts the switches of the run st describes (opts.Hosting says in
// which processes), waits until each is ready, connects to it as the
// primary controller and loads opts.Program. It logs its progress. On
// error every switch it started is stopped again.
func Start(ctx context.Context, st *fabric.State, opts Options) (*Controller, error) {
	if opts.Program == nil {
		return nil, errors.New("controller: no program to load (Options.Program)")
	}
	if opts.Binary == "" {
		bin, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("controller: the grid executable: %w", err)
		}
		opts.Binary = bin
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.LogDir == "" {
		opts.LogDir = filepath.Join(fabric.StateDir, st.Run)
	}
	c := &Controller{run: st.Run, detach: opts.Detach, program: opts.Program}
	began := time.Now()
	for i := range st.Nodes {
		n := &st.Nodes[i]
		if n.Kind != topo.KindSwitch {
			continue
		}
		s := &Switch{Name: n.Name, ID: n.ID, node: n}
		for _, ifc := range n.Interfaces {
			s.Ports = append(s.Ports, ifc.Port)
		}
		c.switches = append(c.switches, s)
	}
	var err error
	switch {
	case opts.Backend != nil:
		c.procs, err = opts.Backend.Start(ctx, st, c.switches, opts)
	case opts.Hosting == HostTogether:
		err = c.startHost(ctx, st, opts)
	case opts.Hosting == ProcessPerSwitch:
		err = c.startEach(st, opts)
	default:
		err = fmt.Errorf("controller: unknown hosting %v", opts.Hosting)
	}
	if err != nil {
		return nil, errors.Join(err, c.stop())
	}
	slog.Info("switches started", "run", st.Run, "switches", len(c.switches), "processes", len(c.procs),
		"took", time.Since(began).Round(time.Millisecond))
	loaded := newProgress("switches connected and loaded", len(c.switches))
	err = c.each(func(s *Switch) error {
		err := s.connect(ctx, opts)
		loaded.done()
		return err
	})
	loaded.stop()
	if err != nil {
		return nil, errors.Join(err, c.disconnect(), c.stop())
	}
	slog.Info("switches ready", "run", st.Run, "switches", len(c.switches), "back end", backendName(opts),
		"took", time.Since(began).Round(time.Millisecond))
	return c, nil
}

// backendName names the back end and hosting of opts in logs.
func backendName(opts Options) string {
	if opts.Backend != nil {
		return opts.Backend.Name()
	}
	return "grid switch, " + opts.Hosting.String()
}

// startEach starts a `grid switch` process per switch; each one's ready
// line is awaited when connecting.
func (c *Controller) startEach(st *fabric.State, opts Options) error {
	for _, s := range c.switches {
		argv := append([]string{opts.Binary}, switchArgs(s.node, portSpecs(st, s.node))...)
		p, err := StartProcess(st.Run, s.Name, "switch", argv, filepath.Join(opts.LogDir, s.Name+".log"), opts.Detach)
		if err != nil {
			return err
		}
		c.procs = append(c.procs, p)
		s.Process, s.readyLine = p, readyLine
	}
	return nil
}

// startHost starts one `grid switch-host` process for every switch and
// waits until it is ready.
func (c *Controller) startHost(ctx context.Context, st *fabric.State, opts Options) error {
	spec := &switchhost.Spec{}
	hosted := make(map[string]bool, len(c.switches))
	for _, s := range c.switches {
		hosted[s.Name] = true
	}
	for _, s := range c.switches {
		spec.Switches = append(spec.Switches, switchhost.Switch{Name: s.Name, Namespace: s.node.NamespacePath(),
			DeviceID: uint64(s.ID), GRPCAddr: P4RuntimeAddr, Ports: portSpecs(st, s.node), ExclusivePorts: true,
			Links: hostedLinks(s.node, hosted)})
	}
	if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
		return fmt.Errorf("switch host: %w", err)
	}
	specPath := filepath.Join(opts.LogDir, "switches.json")
	if err := spec.Write(specPath); err != nil {
		return fmt.Errorf("switch host: %w", err)
	}
	argv := []string{opts.Binary, "switch-host", specPath}
	p, err := StartProcess(st.Run, "", "switch-host", argv, filepath.Join(opts.LogDir, "switch-host.log"), opts.Detach)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	for _, s := range c.switches {
		s.Process = p
	}
	return p.WaitLine(ctx, hostReadyLine, opts.StartTimeout)
}

// Switches are the run's switches in topology order.
func (c *Controller) Switches() []*Switch { return c.switches }

// Switch returns the named switch, or nil.
func (c *Controller) Switch(name string) *Switch {
	for _, s := range c.switches {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// each runs f for every switch in parallel and joins the errors.
func (c *Controller) each(f func(*Switch) error) error {
	errs := make([]error, len(c.switches))
	var wg sync.WaitGroup
	for i, s := range c.switches {
		wg.Go(func() { errs[i] = f(s) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close closes the P4Runtime connections and stops the switch processes,
// unless the controller was started with Detach.
func (c *Controller) Close() error {
	err := c.disconnect()
	if c.detach {
		return err
	}
	return errors.Join(err, c.stop())
}

// disconnect closes the P4Runtime connections.
func (c *Controller) disconnect() error {
	var errs []error
	for _, s := range c.switches {
		if s.client != nil {
			if err := s.client.Close(); err != nil {
				errs = append(errs, fmt.Errorf("switch %s: close P4Runtime connection: %w", s.Name, err))
			}
			s.client = nil
		}
	}
	return errors.Join(errs...)
}

// stop ends every switch process and forgets it in the run's state.
func (c *Controller) stop() error {
	errs := make([]error, len(c.procs))
	var wg sync.WaitGroup
	for i, p := range c.procs {
		wg.Go(func() { errs[i] = p.Stop(stopGrace) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// portSpecs are the switch's ports: one per interface, with the delay and
// loss of its links that the kernel could not impair (the switch emulates
// them on its side of the link).
func portSpecs(st *fabric.State, n *fabric.Node) []dataplane.PortSpec {
	specs := make([]dataplane.PortSpec, len(n.Interfaces))
	for i, ifc := range n.Interfaces {
		specs[i] = dataplane.PortSpec{Port: uint32(ifc.Port), Interface: ifc.Name}
	}
	for _, l := range st.Emulation.Pending {
		for _, end := range []topo.Endpoint{l.A, l.B} {
			for i := range specs {
				if end.Node == n.Name && specs[i].Port == uint32(end.Port) {
					specs[i].Delay, specs[i].Loss = l.Delay, l.Loss/100
				}
			}
		}
	}
	return specs
}

// hostedLinks are n's links to the switches of the host.
func hostedLinks(n *fabric.Node, hosted map[string]bool) []switchhost.Link {
	var links []switchhost.Link
	for _, ifc := range n.Interfaces {
		if hosted[ifc.Peer.Node] {
			links = append(links, switchhost.Link{Port: uint32(ifc.Port), Peer: ifc.Peer.Node, PeerPort: uint32(ifc.Peer.Port)})
		}
	}
	return links
}

// switchArgs is a `grid switch` command line for the ports,
// simple_switch_grpc's shape: a port per interface, device id = switch id,
// no program until the controller loads one, --delay and --loss where
// the ports have them, and --exclusive-ports: the fabric's switch
// namespaces hold nothing but the switch.
func switchArgs(n *fabric.Node, ports []dataplane.PortSpec) []string {
	args := []string{"switch", "--device-id", strconv.Itoa(n.ID), "--exclusive-ports"}
	for _, p := range ports {
		args = append(args, "-i", p.String())
	}
	for _, p := range ports {
		if p.Delay > 0 {
			args = append(args, "--delay", fmt.Sprintf("%d=%s", p.Port, p.Delay))
		}
		if p.Loss > 0 {
			args = append(args, "--loss", fmt.Sprintf("%d=%g", p.Port, p.Loss))
		}
	}
	return append(args, "--no-p4", "--", "--grpc-server-addr", P4RuntimeAddr)
}

// connect waits for the switch's ready line, connects over P4Runtime from
// inside its namespace and loads the program.
func (s *Switch) connect(parent context.Context, opts Options) error {
	if s.readyLine != "" {
		if err := s.WaitLine(parent, s.readyLine, opts.StartTimeout); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(parent, opts.StartTimeout)
	defer cancel()
	// A switch that dies while we connect fails the connection at once.
	go func() {
		select {
		case <-s.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	cl, err := s.dial(ctx)
	if err != nil {
		return s.failure("connect over P4Runtime", err)
	}
	s.client = cl
	err = s.asPrimary(ctx, func(cl *client.Client) error { return cl.SetPipeline(ctx, opts.Program.P4Info, opts.Program.JSON) })
	if err == nil && s.Log != "" && logHasLine(s.Log, bmv2RefusedJSON) {
		// simple_switch_grpc answers OK and runs on without the program.
		err = fmt.Errorf("simple_switch_grpc accepted it over P4Runtime, but bmv2 refused its JSON and runs without it%s", quoteLog(s.Log))
	}
	if err != nil {
		s.client.Close()
		s.client = nil
		return s.failure("load the program", err)
	}
	return nil
}

// dial connects to the switch's P4Runtime server, from inside its
// namespace, as the primary controller.
func (s *Switch) dial(ctx context.Context) (*client.Client, error) {
	dialer := grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		var conn net.Conn
		err := s.node.Do(func() (err error) {
			conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			return err
		})
		return conn, err
	})
	return client.Dial(ctx, P4RuntimeAddr, uint64(s.ID), electionID, dialer)
}

// asPrimary runs change, which the switch accepts only from its primary
// controller. A switch that refuses it (PERMISSION_DENIED: "there is no
// primary controller") has lost this controller's stream, which a loaded
// machine can end; the controller then connects again, becoming the primary
// anew, and repeats the change once. The warning says why the stream ended.
func (s *Switch) asPrimary(ctx context.Context, change func(*client.Client) error) error {
	err := change(s.client)
	if status.Code(err) != codes.PermissionDenied {
		return err
	}
	slog.Warn("the switch no longer takes this controller as its primary; connecting again", "switch", s.Name,
		"refusal", err, "stream", s.client.Err())
	old := s.client
	old.Close()
	cl, derr := s.dial(ctx)
	if derr != nil {
		s.client = nil
		return errors.Join(err, fmt.Errorf("connecting again: %w", derr))
	}
	if info := old.P4Info(); info != nil {
		cl.UseP4Info(info) // the switch still runs the program
	}
	s.client = cl
	return change(cl)
}

// Reload loads the program into every switch again, which starts it
// afresh: empty tables, no multicast groups, zero counters and registers
// (P4Runtime's VERIFY_AND_COMMIT replaces the forwarding state). The
// runner does this between experiments on one fabric.
func (c *Controller) Reload(ctx context.Context) error {
	return c.each(func(s *Switch) error {
		if s.client == nil {
			return fmt.Errorf("switch %s: not connected", s.Name)
		}
		err := s.asPrimary(ctx, func(cl *client.Client) error { return cl.SetPipeline(ctx, c.program.P4Info, c.program.JSON) })
		if err != nil {
			return s.failure("reload the program", err)
		}
		return nil
	})
}

// failure describes a failed step, with the process's exit and the end of
// its log when it has died.
func (s *Switch) failure(step string, err error) error {
	select {
	case <-s.exited:
		return s.ExitError(step + ": the process exited")
	default:
		return fmt.Errorf("switch %s: %s: %w", s.Name, step, err)
	}
}

// Client is the P4Runtime connection to the switch (nil once closed).
func (s *Switch) Client() *client.Client { return s.client }
