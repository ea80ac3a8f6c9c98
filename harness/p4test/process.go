package p4test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// switchProcess is a switch program running inside a testbed.
type switchProcess struct {
	name   string // the program's base name, for messages
	cmd    *exec.Cmd
	output *tailBuffer
	exited chan struct{} // closed when the process has been waited for
	err    error         // its exit status, once exited is closed

	mu       sync.Mutex
	reported bool // an error has told about the exit
}

// exitError describes the process's exit, which must have happened, with
// the end of its output, and notes that it was told.
func (p *switchProcess) exitError(what string) error {
	p.mu.Lock()
	p.reported = true
	p.mu.Unlock()
	return fmt.Errorf("%s %s (%v)%s", p.name, what, p.err, p.output.quote())
}

// startProcess starts argv inside the testbed's namespace. Its output goes
// to log (when set) and to a buffer whose end is quoted when it fails. The
// process gets SIGKILL if this process dies first, so it never outlives
// the test.
func (tb *testbed) startProcess(argv []string, log io.Writer) (*switchProcess, error) {
	p := &switchProcess{name: argv[0], output: &tailBuffer{max: 16 << 10}, exited: make(chan struct{})}
	if i := strings.LastIndexByte(p.name, '/'); i >= 0 {
		p.name = p.name[i+1:]
	}
	// As `ip netns exec` does, the process gets a private mount namespace
	// with a /sys of its network namespace, so what it reads about its
	// interfaces there (libpcap does, for bmv2) is about its ports. The
	// shell then becomes the switch (exec keeps the PID); if it cannot
	// mount, the switch still runs, seeing the host's /sys.
	p.cmd = exec.Command("/bin/sh", append([]string{"-c", `mount -t sysfs sysfs /sys 2>/dev/null; exec "$0" "$@"`}, argv...)...)
	var out io.Writer = p.output
	if log != nil {
		out = io.MultiWriter(p.output, log)
	}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Unshareflags: syscall.CLONE_NEWNS}
	if err := tb.do(p.cmd.Start); err != nil {
		return nil, fmt.Errorf("start %s: %w", strings.Join(argv, " "), err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// dial connects to addr (host:port) from inside the testbed's namespace,
// where the switch listens on its loopback.
func (tb *testbed) dial(ctx context.Context, addr string) (net.Conn, error) {
	var conn net.Conn
	err := tb.do(func() (err error) {
		conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		return err
	})
	return conn, err
}

// waitListening waits until the process accepts TCP connections on addr
// inside the namespace: its P4Runtime (or Thrift) server is up. It fails at
// once when the process exits, quoting its output.
func (p *switchProcess) waitListening(parent context.Context, tb *testbed, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	var lastErr error
	for {
		select {
		case <-p.exited:
			return p.exitError("exited before it listened on " + addr)
		default:
		}
		conn, err := tb.dial(ctx, addr)
		if err == nil {
			conn.Close()
			return nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			if err := parent.Err(); err != nil {
				return fmt.Errorf("waiting for %s to listen on %s: %w", p.name, addr, err)
			}
			return fmt.Errorf("%s did not listen on %s within %v (last attempt: %v)%s", p.name, addr, timeout, lastErr, p.output.quote())
		case <-p.exited:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// exitReported reports whether an error has told about the exit.
func (p *switchProcess) exitReported() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reported
}

// stop ends the process: SIGTERM, then SIGKILL if it is still there after
// grace. A process that had exited by itself is an error, unless an
// earlier error told about it already.
func (p *switchProcess) stop(grace time.Duration) error {
	select {
	case <-p.exited:
		if p.exitReported() {
			return nil
		}
		return p.exitError("had exited by itself")
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(grace):
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill %s (pid %d): %w", p.name, p.cmd.Process.Pid, err)
	}
	<-p.exited
	return nil
}

// alive reports whether the process still runs.
func (p *switchProcess) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// tailBuffer keeps the last max bytes written to it.
// outputShows reports whether the process's output shows text within
// wait (its output reaches the buffer through a pipe, after the fact).
func (p *switchProcess) outputShows(text string, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		if bytes.Contains(p.output.bytes(), []byte(text)) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(data []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, data...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(data), nil
}

// bytes is a copy of the output kept.
func (b *tailBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...)
}

// quote is the output so far, indented, for an error message; empty when
// there was none.
func (b *tailBuffer) quote() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	text := strings.TrimSpace(string(b.buf))
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	if len(lines) > 40 {
		lines = append([]string{"..."}, lines[len(lines)-40:]...)
	}
	return "; its output:\n    " + strings.Join(lines, "\n    ")
}
