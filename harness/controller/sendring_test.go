package controller

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sendRing is an io_uring whose submission entries are prepared once, one
// per frame source: a send of that source's frame on its socket. Queuing
// a run of entries and entering the ring once sends one frame from each,
// in the order queued, in one system call, whichever sockets (and network
// namespaces) they are on. Successful sends post no completion
// (IOSQE_CQE_SKIP_SUCCESS); only failures come back, as completions.
//
// The kernel's structures are declared here as linux/io_uring.h has them
// (golang.org/x/sys/unix has only the system call numbers).
type sendRing struct {
	fd      int
	entries uint32
	sqHead  *uint32 // advanced by the kernel as it takes entries
	sqTail  *uint32
	sqMask  uint32
	sqArray []uint32 // the queue: indexes into sqes
	sqes    []ioUringSQE
	cqHead  *uint32
	cqTail  *uint32 // advanced by the kernel as it completes
	cqMask  uint32
	cqes    []ioUringCQE
	maps    [][]byte
	frames  [][]byte // what the entries point at, kept alive here
}

type ioUringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	_                                                                      [3]uint32
	sqOff                                                                  ioSQRingOffsets
	cqOff                                                                  ioCQRingOffsets
}

type ioSQRingOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, _ uint32
	_                                                           uint64
}

type ioCQRingOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, _ uint32
	_                                                           uint64
}

type ioUringSQE struct {
	opcode, flags uint8
	ioprio        uint16
	fd            int32
	off, addr     uint64
	len, msgFlags uint32
	userData      uint64
	_             [24]byte
}

type ioUringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

const (
	ioringOpSend         = 26
	iosqeCQESkipSuccess  = 1 << 6
	ioringSetupSubmitAll = 1 << 7
	ioringFeatSingleMmap = 1 << 0
	ioringOffSQRing      = 0
	ioringOffSQEs        = 0x10000000
	ioUringSQESize       = 64
	ioUringCQESize       = 16
	ioUringParamsSize    = 120
)

// The declarations have the kernel's sizes, or this does not compile.
var (
	_ = [1]struct{}{}[unsafe.Sizeof(ioUringSQE{})-ioUringSQESize]
	_ = [1]struct{}{}[unsafe.Sizeof(ioUringParams{})-ioUringParamsSize]
)

// newSendRing sets up a ring with an entry for each of frames, entry i
// sending frames[i] on fds[i] (MSG_DONTWAIT: a full socket fails the send
// rather than holding the ring up).
func newSendRing(fds []int, frames [][]byte) (*sendRing, error) {
	entries := uint32(1)
	for entries < uint32(len(frames)) {
		entries <<= 1
	}
	p := ioUringParams{flags: ioringSetupSubmitAll}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", errno)
	}
	r := &sendRing{fd: int(fd), entries: p.sqEntries, frames: frames}
	if p.features&ioringFeatSingleMmap == 0 {
		r.close()
		return nil, fmt.Errorf("io_uring without IORING_FEAT_SINGLE_MMAP (kernel before 5.4)")
	}
	ringSize := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*ioUringCQESize)
	ring, err := unix.Mmap(r.fd, ioringOffSQRing, int(ringSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("mmap io_uring rings: %w", err)
	}
	r.maps = append(r.maps, ring)
	sqes, err := unix.Mmap(r.fd, ioringOffSQEs, int(p.sqEntries*ioUringSQESize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("mmap io_uring entries: %w", err)
	}
	r.maps = append(r.maps, sqes)
	u32 := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&ring[off])) }
	r.sqHead, r.sqTail, r.sqMask = u32(p.sqOff.head), u32(p.sqOff.tail), *u32(p.sqOff.ringMask)
	r.sqArray = unsafe.Slice(u32(p.sqOff.array), p.sqEntries)
	r.cqHead, r.cqTail, r.cqMask = u32(p.cqOff.head), u32(p.cqOff.tail), *u32(p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*ioUringCQE)(unsafe.Pointer(&ring[p.cqOff.cqes])), p.cqEntries)
	r.sqes = unsafe.Slice((*ioUringSQE)(unsafe.Pointer(&sqes[0])), p.sqEntries)
	for i, frame := range frames {
		r.sqes[i] = ioUringSQE{opcode: ioringOpSend, flags: iosqeCQESkipSuccess, fd: int32(fds[i]),
			addr: uint64(uintptr(unsafe.Pointer(&frame[0]))), len: uint32(len(frame)), msgFlags: unix.MSG_DONTWAIT, userData: uint64(i)}
	}
	return r, nil
}

// send sends one frame from each of the sources in order, in one system
// call (at most the ring's entries), and returns how many the kernel took.
func (r *sendRing) send(order []uint32) (int, error) {
	tail := *r.sqTail
	n := min(uint32(len(order)), r.entries-(tail-atomic.LoadUint32(r.sqHead)))
	for i, src := range order[:n] {
		r.sqArray[(tail+uint32(i))&r.sqMask] = src
	}
	atomic.StoreUint32(r.sqTail, tail+n)
	took, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), 0, 0, 0, 0)
	runtime.KeepAlive(r.frames)
	if errno != 0 {
		return int(took), fmt.Errorf("io_uring_enter: %w", errno)
	}
	return int(took), nil
}

// failed takes the completions so far, each a send that failed (its
// socket's buffer full, or the interface's qdisc dropped the frame), and
// returns how many there were.
func (r *sendRing) failed() int {
	head, tail := *r.cqHead, atomic.LoadUint32(r.cqTail)
	atomic.StoreUint32(r.cqHead, tail)
	return int(tail - head)
}

func (r *sendRing) close() {
	for _, m := range r.maps {
		unix.Munmap(m)
	}
	unix.Close(r.fd)
}

// TestSendRingSendsEachSourcesFrameInTheOrderQueuedAndReturnsFailures
// sends from two UDP sockets on the loopback interface through one ring,
// and from a third that cannot send.
func TestSendRingSendsEachSourcesFrameInTheOrderQueuedAndReturnsFailures(t *testing.T) {
	rx, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rx)
	if err := unix.Bind(rx, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	to, err := unix.Getsockname(rx)
	if err != nil {
		t.Fatal(err)
	}
	var fds []int
	for i := range 3 {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		if i < 2 { // the third has no destination: its sends fail
			if err := unix.Connect(fd, to); err != nil {
				t.Fatal(err)
			}
		}
		fds = append(fds, fd)
	}
	r, err := newSendRing(fds, [][]byte{[]byte("first"), []byte("second"), []byte("none")})
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		t.Skip("io_uring refused by this kernel or its sandbox:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	took, err := r.send([]uint32{0, 1, 1, 0})
	if err != nil || took != 4 {
		t.Fatalf("send took %d of 4: %v", took, err)
	}
	if n := r.failed(); n != 0 {
		t.Errorf("%d sends failed, want none", n)
	}
	buf := make([]byte, 64)
	for _, want := range []string{"first", "second", "second", "first"} {
		n, _, err := unix.Recvfrom(rx, buf, unix.MSG_DONTWAIT)
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("received %q (%v), want %q", buf[:max(n, 0)], err, want)
		}
	}
	if took, err := r.send([]uint32{2, 0}); err != nil || took != 2 {
		t.Fatalf("send took %d of 2: %v", took, err)
	}
	if n := r.failed(); n != 1 {
		t.Errorf("%d sends failed, want 1 (the socket without a destination)", n)
	}
	if n, _, err := unix.Recvfrom(rx, buf, unix.MSG_DONTWAIT); err != nil || string(buf[:n]) != "first" {
		t.Errorf("after a failed send received %q (%v), want the next source's frame", buf[:max(n, 0)], err)
	}
}
