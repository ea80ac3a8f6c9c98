package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/fabric"
)

// A Backend starts a run's switches as processes in their namespaces, each
// switch serving P4Runtime at P4RuntimeAddr inside its own namespace. The
// controller then connects, loads the program, installs plans and reads
// counters over P4Runtime the same way whatever the back end. A nil
// Options.Backend is grid's own (`grid switch`, hosted as Options.Hosting
// says).
type Backend interface {
	// Name names the back end in logs and errors ("bmv2").
	Name() string
	// Start starts the processes that run the switches of st (the
	// controller's Switches, not yet connected) and attaches each switch
	// to its process (Switch.Attach). It returns the processes, also
	// those it started before failing, so the controller stops them.
	Start(ctx context.Context, st *fabric.State, switches []*Switch, opts Options) ([]*Process, error)
}

// Attach records the process that runs the switch and the line its log
// shows once the switch serves P4Runtime ("" when the back end's Start
// waited for it already).
func (s *Switch) Attach(p *Process, readyLine string) { s.Process, s.readyLine = p, readyLine }

// Node is the fabric node of the switch: its namespace and interfaces.
func (s *Switch) Node() *fabric.Node { return s.node }

// Bmv2 is real bmv2: a simple_switch_grpc per switch, in the switch's
// namespace on its veth ports, with P4Runtime at P4RuntimeAddr and Thrift
// (simple_switch_CLI, for registers: bmv2 serves no register reads over
// P4Runtime) at Bmv2ThriftPort. What differs from grid switch: bmv2 has no
// per-port delay or loss, so the links whose delay or loss the kernel
// could not apply (fabric.State.Emulation.Pending, netem missing) run
// without them, which Start logs.
type Bmv2 struct {
	// Binary is simple_switch_grpc; "" finds it on PATH.
	Binary string
}

// Bmv2ThriftPort is where each bmv2 switch's Thrift server listens, inside
// its namespace.
const Bmv2ThriftPort = 9090

// bmv2RefusedJSON starts the line bmv2 prints before the JSON node it
// refuses.
const bmv2RefusedJSON = "bad json:"

// SimpleSwitchGRPC is the bmv2 switch with a P4Runtime server.
const SimpleSwitchGRPC = "simple_switch_grpc"

// Name is "bmv2".
func (Bmv2) Name() string { return "bmv2" }

// Bmv2Args is simple_switch_grpc's command line for a switch: a port per
// interface, device id, no program until a controller loads one, Thrift
// and P4Runtime where given.
func Bmv2Args(deviceID int, ports []dataplane.PortSpec, thriftPort int, grpcAddr string) []string {
	args := []string{"--device-id", strconv.Itoa(deviceID)}
	for _, p := range ports {
		args = append(args, "-i", fmt.Sprintf("%d@%s", p.Port, p.Interface))
	}
	return append(args, "--no-p4", "--thrift-port", strconv.Itoa(thriftPort), "--", "--grpc-server-addr", grpcAddr)
}

// lineBuffered prefixes a command so its standard output is line
// buffered (coreutils' stdbuf), or not at all without stdbuf: bmv2 says
// that it refused a JSON on a buffered standard output.
func lineBuffered() []string {
	if bin, err := exec.LookPath("stdbuf"); err == nil {
		return []string{bin, "-oL"}
	}
	return nil
}

// Start starts a simple_switch_grpc per switch.
func (b Bmv2) Start(ctx context.Context, st *fabric.State, switches []*Switch, opts Options) ([]*Process, error) {
	bin := b.Binary
	if bin == "" {
		var err error
		if bin, err = exec.LookPath(SimpleSwitchGRPC); err != nil {
			return nil, fmt.Errorf("bmv2 back end: %w (the p4tools bundle's bin/, which scripts/setup.sh puts on PATH, or the Vagrant VM has it)", err)
		}
	}
	var procs []*Process
	var unemulated []string
	for _, s := range switches {
		ports := portSpecs(st, s.node)
		for _, p := range ports {
			if p.Delay > 0 || p.Loss > 0 {
				unemulated = append(unemulated, fmt.Sprintf("%s port %d (delay %v, loss %g)", s.Name, p.Port, p.Delay, p.Loss))
			}
		}
		argv := append(append(lineBuffered(), bin), Bmv2Args(s.ID, ports, Bmv2ThriftPort, P4RuntimeAddr)...)
		p, err := StartProcess(st.Run, s.Name, "switch", argv, filepath.Join(opts.LogDir, s.Name+".log"), opts.Detach)
		if err != nil {
			return procs, err
		}
		procs = append(procs, p)
		s.Attach(p, "")
	}
	if len(unemulated) > 0 {
		slog.Warn("bmv2 has no per-port delay or loss: these ports run without what the kernel could not apply",
			"ports", strings.Join(unemulated, "; "))
	}
	// simple_switch_grpc says "Server listening on ..." on a buffered
	// standard output, which reaches its log only when it exits: wait
	// until its P4Runtime port accepts instead.
	errs := make([]error, len(switches))
	var wg sync.WaitGroup
	for i, s := range switches {
		wg.Go(func() { errs[i] = s.waitListening(ctx, opts.StartTimeout) })
	}
	wg.Wait()
	return procs, errors.Join(errs...)
}

// waitListening waits until the switch accepts TCP connections at
// P4RuntimeAddr in its namespace; it fails at once when the process exits,
// and after timeout, quoting the log.
func (s *Switch) waitListening(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := s.node.Do(func() error {
			conn, err := net.DialTimeout("tcp", P4RuntimeAddr, 100*time.Millisecond)
			if err == nil {
				conn.Close()
			}
			return err
		})
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return s.ExitError("exited before it listened for P4Runtime")
		case <-ctx.Done():
			return fmt.Errorf("switch %s: waiting until it listens: %w", s.Name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("switch %s did not listen for P4Runtime at %s within %v (%v)%s", s.Name, P4RuntimeAddr, timeout, err, quoteLog(s.Log))
		}
	}
}
