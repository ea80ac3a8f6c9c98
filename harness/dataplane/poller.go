package dataplane

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// poller waits for frames on all of a switch's ports at once: an epoll set
// of their sockets, itself waited on in the Go poller. One goroutine then
// takes the frames of every port in turn, so the pipeline, which takes one
// packet at a time, is never contended by the ports' receivers, and a busy
// switch costs one wake-up per burst rather than one per frame and port.
//
// Which ports have frames the receiver reads from their rings (a slot's
// status, no system call); the set is the doorbell that wakes it once they
// are all empty, and the way a socket's error (its interface gone down)
// reaches it. The set is edge-triggered: every frame arriving rings it (the
// kernel wakes the set's waiters, here the Go poller, for each one),
// whether or not the set was read since, so the receiver reads the set
// only when its rings are empty: to learn of errors, and to clear what the
// frames it took since the last read left there.
type poller struct {
	file    *os.File
	conn    syscall.RawConn
	events  []unix.EpollEvent
	failed  []int // the indexes of the sockets with an error, from the last read of the set
	swept   bool  // the rings were found empty just before this wait
	ready   func() bool
	waitFn  func(fd uintptr) bool
	stopped atomic.Bool
}

// newPoller makes the epoll set of socks; an event's Fd is the index of
// its socket in socks. ready says whether any of their rings holds a
// frame.
func newPoller(socks []*Socket, ready func() bool) (*poller, error) {
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
	p := &poller{file: os.NewFile(uintptr(epfd), "epoll of the switch ports"), events: make([]unix.EpollEvent, max(len(socks), 1)),
		ready: ready}
	if p.conn, err = p.file.SyscallConn(); err != nil {
		p.file.Close()
		return nil, fmt.Errorf("epoll: %w", err)
	}
	p.waitFn = p.poll
	return p, nil
}

// poll is the check before the receiver waits: false sends it to wait in
// the Go poller until the set is rung. It reads the rings, and the set
// (without waiting) only when no ring holds a frame: that takes the
// sockets' errors, and clears what the frames taken since the last read
// left there, so that the Go poller is woken by frames that arrive after
// it. A socket's error that comes with frames is thus taken once they are
// (the interface went down and up again: it is only logged). The first
// check of a wait skips the rings, which the receiver has just found
// empty: a frame that came since rang the set, which says so.
func (p *poller) poll(fd uintptr) bool {
	if p.swept {
		p.swept = false
	} else if p.ready() {
		return true
	}
	for {
		// Raw: it returns at once (no timeout), so the scheduler need
		// not hand this thread's work to another meanwhile.
		r, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, fd, uintptr(unsafe.Pointer(&p.events[0])), uintptr(len(p.events)), 0, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		n := int(r)
		if errno != 0 {
			n = 0
		}
		p.failed = p.failed[:0]
		for _, ev := range p.events[:n] {
			if ev.Events&unix.EPOLLERR != 0 {
				p.failed = append(p.failed, int(ev.Fd))
			}
		}
		// A frame that rang the set before this read is in its ring.
		return len(p.failed) > 0 || n > 0 && p.ready()
	}
}

// wait returns once a port's ring holds a frame or a socket has an error
// (the indexes of those sockets, in the order given to newPoller), the
// deadline passes or the poller is closed. The receiver calls it when it
// has just found every ring empty.
func (p *poller) wait() ([]int, error) {
	p.failed, p.swept = p.failed[:0], true
	if err := p.conn.Read(p.waitFn); err != nil {
		return nil, err
	}
	return p.failed, nil
}

// stop makes a waiting or later wait return
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
