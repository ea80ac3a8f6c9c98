package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/grid-ina/grid/harness/fabric"
)

// Process is a program running in a node's namespace of a fabric run,
// recorded in the run's state (fabric.Start, so fabric.Down stops it),
// with its standard output and error in a log file. The controller runs
// the switches as Processes; the experiment runner the workers and PSs.
type Process struct {
	Node string
	Role string
	// Log is the file with the process's output.
	Log string

	run    string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has been waited for
	err    error         // its exit status, once exited is closed
}

// StartProcess starts argv in node's namespace of run as role, its output
// going to the file log (created, or truncated); node "" starts it in the
// caller's own namespace, for a process that enters the nodes' namespaces
// itself. A detached process
// outlives the calling process; otherwise it gets SIGKILL when the caller
// dies.
func StartProcess(run, node, role string, argv []string, log string, detach bool) (*Process, error) {
	p := &Process{Node: node, Role: role, Log: log, run: run, exited: make(chan struct{})}
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		return nil, fmt.Errorf("%s: log directory: %w", p.who(), err)
	}
	// A file, not a pipe: a detached process outlives this one and must not
	// die of SIGPIPE when it writes.
	out, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.who(), err)
	}
	defer out.Close() // the child has its own descriptor
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if !detach {
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	}
	start := func() error { return fabric.Start(run, node, p.cmd, role) }
	if node == "" {
		start = func() error { return fabric.StartOutside(run, p.cmd, role) }
	}
	if err := start(); err != nil {
		return nil, fmt.Errorf("%s: %w", p.who(), err)
	}
	slog.Debug("process started", "run", run, "node", node, "role", role, "pid", p.cmd.Process.Pid, "args", argv[1:])
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// PID is the process's id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitErr is the process's exit status (nil for status 0); call it after
// Exited is closed.
func (p *Process) ExitErr() error { return p.err }

// Signal sends sig to the process, unless it has exited.
func (p *Process) Signal(sig os.Signal) error {
	if !p.Running() {
		return p.ExitError("exited before it got " + sig.String())
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("%s: %s: %w", p.who(), sig, err)
	}
	return nil
}

// Running reports whether the process still runs.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// who names the process in errors: "switch s1", "worker w3", "switch-host".
func (p *Process) who() string {
	if p.Node == "" {
		return p.Role
	}
	return p.Role + " " + p.Node
}

// ExitError describes the process's exit, which must have happened, with
// the end of its log.
func (p *Process) ExitError(what string) error {
	return fmt.Errorf("%s %s (%v)%s", p.who(), what, p.err, quoteLog(p.Log))
}

// WaitLine waits until the process's log has a line starting with prefix
// (its ready line). It fails at once when the process exits, and after
// timeout, quoting the log.
func (p *Process) WaitLine(ctx context.Context, prefix string, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if logHasLine(p.Log, prefix) {
			return nil
		}
		select {
		case <-p.exited:
			if logHasLine(p.Log, prefix) {
				return nil
			}
			return p.ExitError("exited before it was ready")
		case <-deadline.C:
			return fmt.Errorf("%s not ready within %v (no %q line)%s", p.who(), timeout, prefix+"...", quoteLog(p.Log))
		case <-ctx.Done():
			return fmt.Errorf("%s: waiting until it is ready: %w", p.who(), ctx.Err())
		case <-tick.C:
		}
	}
}

// Stop ends the process: SIGTERM, SIGKILL if it still runs after grace;
// then it is forgotten in the run's state.
func (p *Process) Stop(grace time.Duration) error {
	if p.Running() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(grace):
			slog.Warn("process did not stop on SIGTERM; killing it", "node", p.Node, "role", p.Role, "pid", p.PID())
			p.cmd.Process.Kill()
			<-p.exited
		}
	}
	if err := fabric.ForgetProcess(p.run, p.PID()); err != nil && !errors.Is(err, fabric.ErrNoRun) {
		return fmt.Errorf("%s: %w", p.who(), err)
	}
	return nil
}
