// Package controller is the control plane of an experiment on a fabric run:
// it starts an aggregator switch process in every switch namespace of the
// run (`grid switch`, grid's drop-in for simple_switch_grpc, on the switch's
// veth ports), connects to each over P4Runtime, loads the compiled GRID
// aggregator, installs each switch's part of the routing plan
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
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/p4rt/client"
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
// listens.
const readyLine = "grid switch: listening on "

// electionID makes the controller primary on every switch.
const electionID = 1

// Options tune Start.
type Options struct {
	// Binary is the grid executable whose `switch` command runs each
	// switch; "" means os.Executable(), right when the caller is grid.
	Binary string
	// Program is the compiled aggregator (aggregator.Compile) that every
	// switch loads.
	Program *p4c.Result
	// StartTimeout bounds each switch's start: until its ready line, and
	// again for connecting and loading the program. 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// LogDir receives each switch's standard output and error as
	// SWITCH.log; "" means the run's state directory (fabric.StateDir/RUN),
	// which fabric.Down removes.
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
	switches []*Switch
}

// Switch is one switch process of the run and the P4Runtime connection to it.
type Switch struct {
	Name string
	ID   int
	// Ports are the switch's P4 ports, in the fabric's order.
	Ports []int
	// Log is the file with the process's output.
	Log string

	run    string
	node   *fabric.Node
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has been waited for
	err    error         // its exit status, once exited is closed
	client *client.Client
}

// Start starts a switch process in every switch namespace of the run st
// describes, waits until each is ready, connects to it as the primary
// controller and loads opts.Program. On error every switch it started is
// stopped again.
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
	c := &Controller{run: st.Run, detach: opts.Detach}
	for i := range st.Nodes {
		n := &st.Nodes[i]
		if n.Kind != topo.KindSwitch {
			continue
		}
		s, err := startSwitch(st, n, opts)
		if err != nil {
			return nil, errors.Join(err, c.stop())
		}
		c.switches = append(c.switches, s)
	}
	began := time.Now()
	err := c.each(func(s *Switch) error { return s.connect(ctx, opts) })
	if err != nil {
		return nil, errors.Join(err, c.stop())
	}
	slog.Info("switches ready", "run", st.Run, "switches", len(c.switches), "took", time.Since(began).Round(time.Millisecond))
	return c, nil
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
	var errs []error
	for _, s := range c.switches {
		if s.client != nil {
			if err := s.client.Close(); err != nil {
				errs = append(errs, fmt.Errorf("switch %s: close P4Runtime connection: %w", s.Name, err))
			}
			s.client = nil
		}
	}
	if !c.detach {
		errs = append(errs, c.stop())
	}
	return errors.Join(errs...)
}

// stop ends every switch process and forgets it in the run's state.
func (c *Controller) stop() error {
	return c.each(func(s *Switch) error { return s.stop() })
}

// switchArgs is the switch's command line, simple_switch_grpc's shape:
// a port per interface, device id = switch id, no program until the
// controller loads one, delay and loss of the links the kernel could not
// impair (the switch emulates them on its side of the link).
func switchArgs(st *fabric.State, n *fabric.Node) []string {
	args := []string{"switch", "--device-id", strconv.Itoa(n.ID)}
	for _, ifc := range n.Interfaces {
		args = append(args, "-i", fmt.Sprintf("%d@%s", ifc.Port, ifc.Name))
	}
	for _, l := range st.Emulation.Pending {
		for _, end := range []topo.Endpoint{l.A, l.B} {
			if end.Node != n.Name {
				continue
			}
			if l.Delay > 0 {
				args = append(args, "--delay", fmt.Sprintf("%d=%s", end.Port, l.Delay))
			}
			if l.Loss > 0 {
				args = append(args, "--loss", fmt.Sprintf("%d=%g", end.Port, l.Loss/100))
			}
		}
	}
	return append(args, "--no-p4", "--", "--grpc-server-addr", P4RuntimeAddr)
}

// startSwitch starts the switch process of node n with fabric.Start, its
// output going to its log file.
func startSwitch(st *fabric.State, n *fabric.Node, opts Options) (*Switch, error) {
	s := &Switch{Name: n.Name, ID: n.ID, run: st.Run, node: n, exited: make(chan struct{}),
		Log: filepath.Join(opts.LogDir, n.Name+".log")}
	for _, ifc := range n.Interfaces {
		s.Ports = append(s.Ports, ifc.Port)
	}
	if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("switch %s: log directory: %w", n.Name, err)
	}
	// A file, not a pipe: a detached switch outlives this process and must
	// not die of SIGPIPE when it logs.
	out, err := os.OpenFile(s.Log, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("switch %s: %w", n.Name, err)
	}
	defer out.Close() // the child has its own descriptor
	s.cmd = exec.Command(opts.Binary, switchArgs(st, n)...)
	s.cmd.Stdout, s.cmd.Stderr = out, out
	if !opts.Detach {
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	}
	if err := fabric.Start(st.Run, n.Name, s.cmd, "switch"); err != nil {
		return nil, fmt.Errorf("switch %s: %w", n.Name, err)
	}
	slog.Debug("switch started", "run", st.Run, "switch", n.Name, "pid", s.cmd.Process.Pid, "args", s.cmd.Args[1:])
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// connect waits for the switch's ready line, connects over P4Runtime from
// inside its namespace and loads the program.
func (s *Switch) connect(parent context.Context, opts Options) error {
	if err := s.waitReady(parent, opts.StartTimeout); err != nil {
		return err
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
	dialer := grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		var conn net.Conn
		err := s.node.Do(func() (err error) {
			conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			return err
		})
		return conn, err
	})
	cl, err := client.Dial(ctx, P4RuntimeAddr, uint64(s.ID), electionID, dialer)
	if err != nil {
		return s.failure("connect over P4Runtime", err)
	}
	if err := cl.SetPipeline(ctx, opts.Program.P4Info, opts.Program.JSON); err != nil {
		cl.Close()
		return s.failure("load the program", err)
	}
	s.client = cl
	return nil
}

// failure describes a failed step, with the process's exit and the end of
// its log when it has died.
func (s *Switch) failure(step string, err error) error {
	select {
	case <-s.exited:
		return fmt.Errorf("switch %s: %s: the switch process exited (%v)%s", s.Name, step, s.err, quoteLog(s.Log))
	default:
		return fmt.Errorf("switch %s: %s: %w", s.Name, step, err)
	}
}

// waitReady waits until the switch's log has its ready line. It fails at
// once when the process exits, and after timeout, quoting the log.
func (s *Switch) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if logHasReadyLine(s.Log) {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("switch %s exited before it was ready (%v)%s", s.Name, s.err, quoteLog(s.Log))
		case <-deadline.C:
			return fmt.Errorf("switch %s not ready within %v (no %q line)%s", s.Name, timeout, readyLine+"...", quoteLog(s.Log))
		case <-ctx.Done():
			return fmt.Errorf("switch %s: waiting until it is ready: %w", s.Name, ctx.Err())
		case <-tick.C:
		}
	}
}

// Client is the P4Runtime connection to the switch (nil once closed).
func (s *Switch) Client() *client.Client { return s.client }

// PID is the switch process's id.
func (s *Switch) PID() int { return s.cmd.Process.Pid }

// Running reports whether the switch process still runs.
func (s *Switch) Running() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// stop ends the switch process: SIGTERM (the switch logs its port
// counters as it exits), SIGKILL after stopGrace; then it is forgotten in
// the run's state.
func (s *Switch) stop() error {
	if s.Running() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(stopGrace):
			slog.Warn("switch did not stop on SIGTERM; killing it", "switch", s.Name, "pid", s.PID())
			s.cmd.Process.Kill()
			<-s.exited
		}
	}
	if err := fabric.ForgetProcess(s.run, s.PID()); err != nil && !errors.Is(err, fabric.ErrNoRun) {
		return fmt.Errorf("switch %s: %w", s.Name, err)
	}
	return nil
}
