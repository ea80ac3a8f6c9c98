package dataplane

import (
	"errors"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The receiver sends what the pipeline emits in batches: the frames a port
// is to send at once are copied aside while the receiver takes a port's
// frames (at most portBudget), and leave in one sendmmsg(2) per port when
// it is done with them, or when a port has batchMax waiting. A frame
// waits a few microseconds longer; the kernel's work per frame is the same
// (each one still crosses the port's qdisc and veth on its own), but the
// system calls and their scheduling points are shared.

// batchMax is how many frames a port's batch holds before it is sent.
const batchMax = 64

// txBatch is the frames a port's batch holds: their bytes, one after the
// other in buf, and each one's end in buf. Only the receiver uses it.
type txBatch struct {
	buf  []byte
	ends []int
	hdrs []mmsghdr
	iovs []unix.Iovec
}

// mmsghdr is struct mmsghdr of sendmmsg(2).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// add puts a frame that leaves at once into the port's batch; dirty
// collects the ports with a batch.
func (p *port) add(frame []byte, dirty *[]*port) {
	b := &p.batch
	if len(b.ends) > 0 && len(b.buf)+len(frame) > batchBytes {
		p.flush()
	}
	if len(b.ends) == 0 && !p.dirty {
		p.dirty = true
		*dirty = append(*dirty, p)
	}
	b.buf = append(b.buf, frame...)
	b.ends = append(b.ends, len(b.buf))
	if len(b.ends) == batchMax {
		p.flush()
	}
}

// batchBytes bounds the bytes of a port's batch (and so the memory it
// keeps): a batch of jumbo frames leaves before batchMax.
const batchBytes = 64 << 10

// flushAll sends the batches of the dirty ports.
func flushAll(dirty []*port) []*port {
	for _, p := range dirty {
		p.flush()
		p.dirty = false
	}
	clear(dirty)
	return dirty[:0]
}

// flush sends the port's batch, counting each frame as send does.
func (p *port) flush() {
	b := &p.batch
	if len(b.ends) == 0 {
		return
	}
	n := len(b.ends)
	if cap(b.hdrs) < n {
		b.hdrs, b.iovs = make([]mmsghdr, n, batchMax), make([]unix.Iovec, n, batchMax)
	}
	b.hdrs, b.iovs = b.hdrs[:n], b.iovs[:n]
	start := 0
	for i, end := range b.ends {
		b.iovs[i].Base = &b.buf[start]
		b.iovs[i].SetLen(end - start)
		b.hdrs[i] = mmsghdr{hdr: unix.Msghdr{Iov: &b.iovs[i], Iovlen: 1}}
		start = end
	}
	for i := 0; i < n; {
		sent, err := p.sock.sendBatch(b.hdrs[i:])
		if sent > 0 {
			from := 0
			if i > 0 {
				from = b.ends[i-1]
			}
			p.sentBatch(b.buf[from:b.ends[i+sent-1]], b.ends[i:i+sent], from)
			i += sent
			continue
		}
		// The frame at i was refused; the others go on.
		p.txErrors.Add(1)
		p.log.Debug("frame not sent", "err", err)
		i++
	}
	b.buf, b.ends = b.buf[:0], b.ends[:0]
	clear(b.iovs) // no pointers into buf kept past the batch
	clear(b.hdrs)
	if p.peer != nil {
		p.peer.wake() // the frames are in its ring (group.go)
	}
}

// sendBatch sends frames with sendmmsg(2) and returns how many left;
// with 0, err says why the first did not. It waits for room in the send
// buffer as Send does, and repeats a first frame refused with a stale
// ENETDOWN once (see Send). It is for a port's socket (openPortSockets).
func (s *Socket) sendBatch(hdrs []mmsghdr) (int, error) {
	var sent int
	var errno unix.Errno
	try := func(fd uintptr) bool {
		for {
			n, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&hdrs[0])), uintptr(len(hdrs)), 0, 0, 0)
			if e == unix.EINTR {
				continue
			}
			sent, errno = int(n), e
			return e != unix.EAGAIN
		}
	}
	for retried := false; ; retried = true {
		if err := s.waitRaw(try); err != nil {
			return 0, err
		}
		switch {
		case errno == 0:
			return sent, nil
		case errno == unix.ENETDOWN && !retried:
			continue
		}
		return 0, errno
	}
}

// waitRaw runs try on a port socket's sending descriptor until it returns
// true, waiting for room in the send buffer in between: in poll(2), a
// blocking system call the scheduler knows of.
func (s *Socket) waitRaw(try func(fd uintptr) bool) error {
	fd := s.raw.tx
	if fd < 0 {
		return os.ErrClosed
	}
	for !try(uintptr(fd)) {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if _, err := unix.Poll(pfd, int(sendWait.Milliseconds())); err != nil && !errors.Is(err, unix.EINTR) {
			return err
		}
		if pfd[0].Revents&unix.POLLNVAL != 0 {
			return os.ErrClosed
		}
	}
	return nil
}

// sendWait is how long a port's send waits for room in one poll: the
// frame is tried again after it, room or not.
const sendWait = 100 * time.Millisecond
