package dataplane

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// poller waits for frames on all of a switch's ports at once: an epoll set
// of their sockets, itself waited on in the Go poller. One goroutine then
// takes the frames of every ready port in turn, so the pipeline, which
// takes one packet at a time, is never contended by the ports' receivers,
// and a busy switch costs one wake-up per burst rather than one per frame
// and port. The set is edge-triggered: a port is reported once per
// arrival, not again at every wait while it holds frames, so the receiver
// keeps the ports it has not emptied yet itself.
type poller struct {
	file    *os.File
	conn    syscall.RawConn
	events  []unix.EpollEvent
	ready   int
	waitFn  func(fd uintptr) bool
	stopped atomic.Bool
}

// newPoller makes the epoll set of socks; an event's Fd is the index of
// its socket in socks.
func newPoller(socks []*Socket) (*poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	for i, s := range socks {
		fd := s.fd()
		if fd < 0 {
			unix.Close(epfd)
			return nil, fmt.Errorf("interface %s: socket closed", s.iface)
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(i)}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			unix.Close(epfd)
			return nil, fmt.Errorf("interface %s: epoll: %w", s.iface, err)
		}
	}
	// Non-blocking, so that os.NewFile registers it with the Go poller.
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("epoll: %w", err)
	}
	p := &poller{file: os.NewFile(uintptr(epfd), "epoll of the switch ports"), events: make([]unix.EpollEvent, max(len(socks), 1))}
	if p.conn, err = p.file.SyscallConn(); err != nil {
		p.file.Close()
		return nil, fmt.Errorf("epoll: %w", err)
	}
	p.waitFn = p.poll
	return p, nil
}

// poll takes the ready ports without waiting; false sends the goroutine to
// wait in the Go poller until the set is readable.
func (p *poller) poll(fd uintptr) bool {
	for {
		n, err := unix.EpollWait(int(fd), p.events, 0)
		if err == unix.EINTR {
			continue
		}
		p.ready = max(n, 0)
		return n > 0
	}
}

// wait returns the indexes of the sockets with frames (as epoll events),
// waiting until there is one, the deadline passes or the poller is closed.
func (p *poller) wait() ([]unix.EpollEvent, error) {
	if err := p.conn.Read(p.waitFn); err != nil {
		return nil, err
	}
	return p.events[:p.ready], nil
}

// peek is wait without waiting: the ports with frames that arrived since
// the last wait or peek, possibly none.
func (p *poller) peek() ([]unix.EpollEvent, error) {
	if p.stopped.Load() {
		return nil, os.ErrDeadlineExceeded
	}
	if err := p.conn.Control(func(fd uintptr) { p.poll(fd) }); err != nil {
		return nil, err
	}
	return p.events[:p.ready], nil
}

// stop makes a waiting or later wait or peek return
// os.ErrDeadlineExceeded.
func (p *poller) stop() {
	p.stopped.Store(true)
	p.file.SetReadDeadline(time.Now())
}

func (p *poller) close() error { return p.file.Close() }

// isStop reports whether a wait error means the poller was stopped.
func isStop(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed)
}
