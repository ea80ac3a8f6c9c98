package p4test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/stf"
)

// TargetKind names the switch a test runs on.
type TargetKind string

// The switches STF tests run on.
const (
	// Engine is grid's engine in this process with a virtual clock (the
	// default; no root, no ports).
	Engine TargetKind = "engine"
	// GridSwitch is `grid switch`, grid's drop-in for simple_switch_grpc,
	// as a process on veth ports, driven over P4Runtime.
	GridSwitch TargetKind = "grid-switch"
	// Bmv2 is the reference switch, simple_switch_grpc, on veth ports,
	// driven over P4Runtime (registers through simple_switch_CLI); its
	// program compiled by p4c-bm2-ss.
	Bmv2 TargetKind = "bmv2"
)

// TargetKinds lists the kinds ParseTargetKind accepts.
var TargetKinds = []TargetKind{Engine, GridSwitch, Bmv2}

// ParseTargetKind checks a target name.
func ParseTargetKind(s string) (TargetKind, error) {
	for _, k := range TargetKinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown target %q (want engine, grid-switch or bmv2)", s)
}

// The programs of the bmv2 target.
const (
	SimpleSwitchGRPC = "simple_switch_grpc"
	SimpleSwitchCLI  = "simple_switch_CLI"
)

// Inside the testbed's namespace the switch has the loopback to itself, so
// its servers listen on the usual ports.
const (
	grpcAddr   = "127.0.0.1:9559"
	minFrame   = 14 // an Ethernet header: less does not go through a veth
	thriftPort = 9090
	deviceID   = 1
)

// RemoteConfig says which switch process to start and how to wait for it.
type RemoteConfig struct {
	Kind TargetKind // GridSwitch or Bmv2
	// Ports is how many ports the switch gets: 0 .. Ports-1.
	Ports int
	// Switch is the program to run: for GridSwitch the grid binary (its
	// "switch" command), for Bmv2 simple_switch_grpc. Empty: found on PATH
	// ("grid" or "simple_switch_grpc").
	Switch string
	// CLI is simple_switch_CLI, for the Bmv2 target's register access.
	// Empty: found on PATH.
	CLI string
	// Log, when set, receives the switch's output with its per-packet log
	// (--log-console).
	Log io.Writer
	// StartTimeout bounds the wait for the switch's P4Runtime server
	// (default 30 s).
	StartTimeout time.Duration
	// PacketTimeout bounds the wait for expected packets (default 2 s).
	PacketTimeout time.Duration
	// Quiet ends the wait for expected packets early when nothing arrived
	// for that long (default 250 ms): the count of expected packets may
	// include some for packets not sent yet.
	Quiet time.Duration
	// Grace is how long to wait for unexpected packets once the expected
	// ones arrived, and so the least time between a packet and the next
	// command, such as a counter or register check (default
	// GridSwitchGrace, or Bmv2Grace for Bmv2).
	Grace time.Duration
}

// The default Grace of each kind of switch. grid switch reads its ports
// without delay. bmv2 built without WITH_PCAP_FIX (bm_sim's
// bmi_interface.c) gets frames from libpcap only when a block of the
// packet ring retires, about 8 ms after the first frame on a veth, and
// then queues them for its ingress thread: on a loaded VM 20 ms can pass
// before a packet was processed, and a check right after it would read
// state from before it.
const (
	GridSwitchGrace = 20 * time.Millisecond
	Bmv2Grace       = 100 * time.Millisecond
)

func (c *RemoteConfig) defaults() {
	if c.StartTimeout == 0 {
		c.StartTimeout = 30 * time.Second
	}
	if c.PacketTimeout == 0 {
		c.PacketTimeout = 2 * time.Second
	}
	if c.Quiet == 0 {
		c.Quiet = 250 * time.Millisecond
	}
	if c.Grace == 0 {
		c.Grace = GridSwitchGrace
		if c.Kind == Bmv2 {
			c.Grace = Bmv2Grace
		}
	}
}

// switchArgv is the switch's command line: simple_switch_grpc's, which
// `grid switch` takes too.
func (c *RemoteConfig) switchArgv() ([]string, error) {
	var argv []string
	switch c.Kind {
	case GridSwitch:
		bin, err := findProgram(c.Switch, "grid")
		if err != nil {
			return nil, err
		}
		argv = []string{bin, "switch", "--device-id", strconv.Itoa(deviceID)}
	case Bmv2:
		bin, err := findProgram(c.Switch, SimpleSwitchGRPC)
		if err != nil {
			return nil, err
		}
		argv = append(lineBuffered(), bin, "--device-id", strconv.Itoa(deviceID), "--thrift-port", strconv.Itoa(thriftPort))
	default:
		return nil, fmt.Errorf("target %q is not a switch process (want %s or %s)", c.Kind, GridSwitch, Bmv2)
	}
	for i := 0; i < c.Ports; i++ {
		argv = append(argv, "-i", fmt.Sprintf("%d@%s", i, switchIface(i)))
	}
	if c.Log != nil {
		argv = append(argv, "--log-console")
	}
	return append(argv, "--no-p4", "--", "--grpc-server-addr", grpcAddr), nil
}

// lineBuffered prefixes a command so its standard output is line
// buffered (coreutils' stdbuf), or not at all without stdbuf: bmv2 says
// that it refused a JSON on a buffered standard output, which would
// reach the log only when it exits.
func lineBuffered() []string {
	if bin, err := exec.LookPath("stdbuf"); err == nil {
		return []string{bin, "-oL"}
	}
	return nil
}

// findProgram returns path if set, else name's location on PATH.
func findProgram(path, name string) (string, error) {
	if path != "" {
		return path, nil
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not on PATH: %w", name, err)
	}
	return bin, nil
}

// Remote is a switch process on veth ports in a private network namespace,
// loaded with a program over P4Runtime: an stf.Target for real-time
// switches. Packets go in and come out through packet sockets on the host
// ends of the ports; they are collected as they arrive and handed out by
// Settle.
type Remote struct {
	ctx  context.Context // ends every operation when it ends
	cfg  RemoteConfig
	tb   *testbed
	proc *switchProcess
	cp   *controlPlane

	readers sync.WaitGroup
	mu      sync.Mutex
	arrived chan struct{} // a frame arrived (capacity 1)
	queue   []stf.Frame   // arrived, not handed out yet
	total   int           // frames received since the start
	sent    int           // packets sent
	readErr error         // a port's receive failed
	closed  bool
}

var _ stf.Target = (*Remote)(nil)

// StartRemote starts the switch of cfg in a fresh namespace with cfg.Ports
// veth ports, waits for its P4Runtime server, loads prog and starts
// collecting what comes out of the ports. ctx bounds the target's whole
// life: when it ends (say, on SIGINT), waits and control-plane operations
// fail at once, and the caller's Close cleans up. Close removes
// everything; so does a failure here.
func StartRemote(ctx context.Context, cfg RemoteConfig, prog Program) (r *Remote, err error) {
	cfg.defaults()
	argv, err := cfg.switchArgv()
	if err != nil {
		return nil, err
	}
	if cfg.Kind == Bmv2 {
		if cfg.CLI, err = findProgram(cfg.CLI, SimpleSwitchCLI); err != nil {
			return nil, fmt.Errorf("bmv2 target (registers go through simple_switch_CLI): %w", err)
		}
	}
	tb, err := newTestbed(cfg.Ports)
	if err != nil {
		return nil, err
	}
	r = &Remote{ctx: ctx, cfg: cfg, tb: tb, arrived: make(chan struct{}, 1)}
	defer func() {
		if p := recover(); p != nil {
			r.Close()
			panic(p)
		}
		if err != nil {
			err = errors.Join(err, r.Close())
		}
	}()
	if r.proc, err = tb.startProcess(argv, cfg.Log); err != nil {
		return r, err
	}
	if err := r.proc.waitListening(ctx, tb, grpcAddr, cfg.StartTimeout); err != nil {
		return r, err
	}
	if r.cp, err = dialControlPlane(ctx, r, prog); err != nil {
		return r, r.withExit(err)
	}
	for port, s := range tb.ports {
		r.readers.Add(1)
		go r.read(port, s)
	}
	return r, nil
}

// read collects the frames arriving on one port until its socket closes.
func (r *Remote) read(port int, s *dataplane.Socket) {
	defer r.readers.Done()
	for {
		frame, err := s.Recv()
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				r.mu.Lock()
				r.readErr = errors.Join(r.readErr, fmt.Errorf("port %d: %w", port, err))
				r.mu.Unlock()
			}
			return
		}
		r.mu.Lock()
		r.queue = append(r.queue, stf.Frame{Port: port, Data: append([]byte(nil), frame...), Packet: r.sent - 1})
		r.total++
		r.mu.Unlock()
		select {
		case r.arrived <- struct{}{}:
		default:
		}
	}
}

// Send injects a frame into the switch's port; what it causes comes out of
// Settle.
func (r *Remote) Send(port int, frame []byte) ([]stf.Frame, error) {
	if port < 0 || port >= len(r.tb.ports) {
		return nil, fmt.Errorf("port %d: the switch has ports 0 to %d", port, len(r.tb.ports)-1)
	}
	if len(frame) < minFrame {
		return nil, fmt.Errorf("port %d: a %d-byte frame is shorter than an Ethernet header; a veth cannot carry it", port, len(frame))
	}
	r.mu.Lock()
	r.sent++
	r.mu.Unlock()
	return nil, r.withExit(r.tb.ports[port].Send(frame))
}

// Settle waits until wantTotal frames have come out since the start, or
// nothing came for Quiet (wantTotal counts expect lines, which files in
// p4c's style write before their packet), or PacketTimeout passed; then
// Grace more for frames nobody expected. It returns the frames that arrived
// since the last call.
func (r *Remote) Settle(ctx context.Context, wantTotal int) ([]stf.Frame, error) {
	deadline := time.NewTimer(r.cfg.PacketTimeout)
	defer deadline.Stop()
	quiet := time.NewTimer(r.cfg.Quiet)
	defer quiet.Stop()
wait:
	for {
		r.mu.Lock()
		enough := r.total >= wantTotal
		r.mu.Unlock()
		if enough || !r.proc.alive() {
			break
		}
		select {
		case <-r.arrived:
			quiet.Reset(r.cfg.Quiet)
		case <-quiet.C:
			break wait
		case <-deadline.C:
			break wait
		case <-ctx.Done():
			return r.take(), ctx.Err()
		case <-r.proc.exited:
		}
	}
	select {
	case <-time.After(r.cfg.Grace):
	case <-ctx.Done():
		return r.take(), ctx.Err()
	}
	frames := r.take()
	r.mu.Lock()
	err := r.readErr
	r.mu.Unlock()
	return frames, r.withExit(err)
}

// take hands out the frames collected so far.
func (r *Remote) take() []stf.Frame {
	r.mu.Lock()
	defer r.mu.Unlock()
	frames := r.queue
	r.queue = nil
	return frames
}

// Advance sleeps: the switch's clock is the real one.
func (r *Remote) Advance(d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
}

// withExit adds to err, or makes an error of, the switch having exited:
// nothing it says after that is worth trusting. The exit is told once; the
// run stops at the first failed command anyway.
func (r *Remote) withExit(err error) error {
	if r.proc == nil || r.proc.alive() || r.proc.exitReported() {
		return err
	}
	exit := r.proc.exitError("exited")
	if err == nil {
		return exit
	}
	return fmt.Errorf("%w; %w", err, exit)
}

// DroppedWithoutVeth is how many packets a grid switch sent to each port
// number that had no veth, as it logged when Close stopped it (P4Runtime has
// no counter for them). It is nil before Close, when there were none, and
// for bmv2, which does not tell.
func (r *Remote) DroppedWithoutVeth() map[uint32]uint64 {
	if r.cfg.Kind != GridSwitch || r.proc == nil || r.proc.alive() {
		return nil
	}
	return dataplane.ParseUnknownEgress(r.proc.output.bytes())
}

// Close stops the switch and removes its namespace, ports and sockets. The
// error reports a switch that had exited by itself or anything that could
// not be removed.
func (r *Remote) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	var errs []error
	if r.cp != nil {
		errs = append(errs, r.cp.close())
	}
	if r.proc != nil {
		errs = append(errs, r.proc.stop(2*time.Second))
	}
	errs = append(errs, r.tb.close())
	r.readers.Wait()
	return errors.Join(errs...)
}

// PID is the switch process's id (for its CPU time in /proc).
func (r *Remote) PID() int { return r.proc.cmd.Process.Pid }
