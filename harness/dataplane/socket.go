package dataplane

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// vlanTagLen is the length of an 802.1Q tag: TPID and TCI.
const vlanTagLen = 4

// MaxFrame is the largest frame Recv returns whole; larger ones (only
// possible with generic receive offload merging frames on the interface) are
// counted and dropped. It covers any MTU a veth can have plus headers. (A
// Dataplane's port takes frames up to its interface's MTU: ring.go.)
const MaxFrame = 64 << 10

// Socket is an AF_PACKET socket on one network interface: it receives every
// frame arriving there (but not those sent through it) and sends frames out
// of it as they are. It is what the Dataplane's ports use, and what a test
// driving a switch uses on the other ends of the switch's links.
//
// The kernel strips a VLAN tag from a received frame into metadata before a
// packet socket sees it (whatever the interface's offload settings); Recv
// puts the tag back, as libpcap does for bmv2, so frames arrive as sent.
//
// Recv and Send may be called from different goroutines; Send is safe for
// concurrent use. Both use Go's network poller, so a blocked Recv returns
// when its read deadline passes or the socket is closed (a Dataplane's own
// port sockets stay out of the poller: openPortSockets).
type Socket struct {
	iface string
	index int // the interface's index
	// file and conn are the socket in Go's network poller; both are nil
	// for a port's socket (openPortSockets), which raw holds instead.
	file *os.File
	conn syscall.RawConn
	raw  portFD
	ring *rxRing // a port's socket receives here (ring.go)

	// Receive state: one Recv at a time uses these, set up once so that
	// receiving allocates nothing.
	buf     []byte
	oob     []byte
	iov     unix.Iovec
	msg     unix.Msghdr
	recvErr error
	recvN   int
	recvFn  func(fd uintptr) bool

	drops atomic.Uint64 // frames the kernel dropped for a full receive buffer, read so far
}

// portFD are the descriptors of a port's sockets, kept out of Go's
// poller: fd receives (into the ring, watched by the Dataplane's epoll
// set), tx sends. Receiving and sending use them without a lock (a
// Dataplane closes its ports only after Run has returned); reading
// statistics and closing, which may come from anywhere at any time, take
// the lock, so that a closed number reused by another descriptor is never
// touched.
//
// The port sends through a socket of its own, one that receives nothing
// (bound with protocol 0) and that no epoll set watches: the kernel, when
// it frees a sent frame, tells the sending socket's waiters that there is
// room to send again, and a socket in an epoll set always has one (the
// set), whose wake-up took the lock of the socket's wait queue and of the
// set for every frame sent. The receiving socket ignores outgoing frames
// (PACKET_IGNORE_OUTGOING), so it never saw what the port sent either way;
// captures on the interface see them as before.
type portFD struct {
	mu sync.RWMutex
	fd int // -1 once closed
	tx int // -1 once closed
}

// OpenSocket opens a packet socket on the interface named iface in the
// network namespace of the calling OS thread (lock the thread with
// runtime.LockOSThread before entering a namespace to open sockets there; the
// socket stays in its namespace wherever it is used later). The interface is
// put in promiscuous mode for as long as the socket is open, as bmv2 does.
func OpenSocket(iface string) (*Socket, error) { return openSocket(iface) }

// openPortSockets are OpenSocket for a Dataplane's ports, which the
// Dataplane's own epoll set watches (poller): the socket stays out of Go's
// poller, whose edge-triggered registration of both directions would have
// the kernel wake it for every frame received and for every frame sent
// (the release of its send buffer), only for the wake-up to be ignored.
// Such a socket has no Recv or read deadline: it receives into its ring
// of ringSlots slots (ring.go), which its Dataplane reads; Send, Drops and
// Close work as on any Socket.
//
// Setting a ring up waits for an RCU grace period (milliseconds), so
// openPortSockets opens a Dataplane's ports in parallel: it makes each
// socket in the calling thread's namespace, and sets them up at once (a
// socket is in the namespace it was made in, whichever thread uses it).
func openPortSockets(ports []PortSpec, ringSlots int) ([]*Socket, error) {
	fds, txs := make([]int, len(ports)), make([]int, len(ports))
	for i, p := range ports {
		fd, err := newPacketSocket(p.Interface)
		var tx int
		if err == nil {
			if tx, err = newPacketSocket(p.Interface); err != nil {
				unix.Close(fd)
			}
		}
		if err != nil {
			for j := range i {
				unix.Close(fds[j])
				unix.Close(txs[j])
			}
			return nil, fmt.Errorf("port %s: %w", p, err)
		}
		fds[i], txs[i] = fd, tx
	}
	socks := make([]*Socket, len(ports))
	errs := make([]error, len(ports))
	var wg sync.WaitGroup
	for i, p := range ports {
		wg.Go(func() {
			if socks[i], errs[i] = setUpPortSocket(fds[i], txs[i], p.Interface, ringSlots); errs[i] != nil {
				errs[i] = fmt.Errorf("port %s: %w", p, errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		var opened []*Socket
		for _, s := range socks {
			if s != nil {
				opened = append(opened, s)
			}
		}
		return nil, errors.Join(err, CloseAll(opened))
	}
	return socks, nil
}

// openSocket opens a packet socket in Go's poller.
func openSocket(iface string) (*Socket, error) {
	fd, err := newPacketSocket(iface)
	if err != nil {
		return nil, err
	}
	return setUpSocket(fd, iface)
}

// newPacketSocket makes a packet socket for the interface, in the calling
// thread's namespace. Protocol 0 receives nothing until bound: binding a
// socket that already listened on every interface would wait for an RCU
// grace period.
func newPacketSocket(iface string) (int, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if errors.Is(err, unix.EPERM) {
		return -1, fmt.Errorf("interface %s: open packet socket: %w (needs root or CAP_NET_RAW)", iface, err)
	}
	if err != nil {
		return -1, fmt.Errorf("interface %s: open packet socket: %w", iface, err)
	}
	return fd, nil
}

// setUpPortSocket sets a port's socket up from two packet sockets: fd
// receives into a ring of ringSlots slots, tx sends (see portFD). It
// closes both on error.
func setUpPortSocket(fd, tx int, iface string, ringSlots int) (*Socket, error) {
	ifr, err := unix.NewIfreq(iface)
	if err != nil {
		unix.Close(fd)
		unix.Close(tx)
		return nil, fmt.Errorf("interface %q: %w", iface, err)
	}
	ring, err := portRing(fd, iface, ifr, ringSlots)
	if err != nil {
		unix.Close(fd)
		unix.Close(tx)
		return nil, err
	}
	index, err := bindSocket(fd, iface, ifr)
	if err == nil {
		// Protocol 0: bound to the interface to send there, receiving
		// nothing.
		if err = unix.Bind(tx, &unix.SockaddrLinklayer{Ifindex: index}); err != nil {
			err = fmt.Errorf("interface %s: bind sending packet socket: %w", iface, err)
		}
	}
	if err != nil {
		unix.Close(fd)
		unix.Close(tx)
		ring.close()
		return nil, err
	}
	return &Socket{iface: iface, index: index, raw: portFD{fd: fd, tx: tx}, ring: ring}, nil
}

// setUpSocket binds the packet socket fd to the interface and sets it up
// in Go's poller. It closes fd on error.
func setUpSocket(fd int, iface string) (*Socket, error) {
	ifr, err := unix.NewIfreq(iface)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("interface %q: %w", iface, err)
	}
	index, err := bindSocket(fd, iface, ifr)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	s := &Socket{iface: iface, index: index, raw: portFD{fd: -1, tx: -1}}
	// From here on the file owns the descriptor (and closes it when
	// garbage collected).
	s.file = os.NewFile(uintptr(fd), "packet socket on "+iface)
	if s.conn, err = s.file.SyscallConn(); err != nil {
		s.file.Close()
		return nil, fmt.Errorf("interface %s: %w", iface, err)
	}
	s.buf = make([]byte, vlanTagLen+MaxFrame)
	s.oob = make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.TpacketAuxdata{}))))
	// The frame lands vlanTagLen bytes into buf, so a stripped tag can be
	// put back by moving only the 12 address bytes.
	s.iov.Base = &s.buf[vlanTagLen]
	s.iov.SetLen(MaxFrame)
	s.msg.Iov = &s.iov
	s.msg.Iovlen = 1
	s.msg.Control = &s.oob[0]
	s.recvFn = s.recvmsg
	return s, nil
}

// control runs f with the socket's descriptor, or returns an error wrapping
// os.ErrClosed once the socket is closed. locked takes a port socket's
// lock (see portFD).
func (s *Socket) control(f func(fd uintptr), locked bool) error {
	if s.conn != nil {
		return s.conn.Control(f)
	}
	if locked {
		s.raw.mu.RLock()
		defer s.raw.mu.RUnlock()
	}
	if s.raw.fd < 0 {
		return os.ErrClosed
	}
	f(uintptr(s.raw.fd))
	return nil
}

// recvmsg receives one frame for Recv through the poller; it returns false
// to wait when there is none. An interrupted call is repeated at once: the
// frame that is there would not wake the poller again.
func (s *Socket) recvmsg(fd uintptr) bool {
	for {
		s.msg.SetControllen(len(s.oob))
		// Raw: the socket never blocks, so the scheduler need not hand
		// this thread's work to another meanwhile (see sendOp.write).
		n, _, errno := unix.RawSyscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&s.msg)), unix.MSG_TRUNC)
		switch errno {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		case 0:
			s.recvN, s.recvErr = int(n), nil
		default:
			s.recvN, s.recvErr = 0, errno
		}
		return true
	}
}

// portRing gives a port's socket, not yet bound, its receive ring of
// slots for frames of the interface's MTU.
func portRing(fd int, iface string, ifr *unix.Ifreq, slots int) (*rxRing, error) {
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFMTU, ifr); err != nil {
		if errors.Is(err, unix.ENODEV) {
			return nil, fmt.Errorf("interface %s: no such interface in this network namespace", iface)
		}
		return nil, fmt.Errorf("interface %s: MTU: %w", iface, err)
	}
	ring, err := setUpRxRing(fd, int(ifr.Uint32()), slots)
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", iface, err)
	}
	return ring, nil
}

// bindSocket binds the packet socket fd to the interface and sets it up;
// it returns the interface's index.
func bindSocket(fd int, iface string, ifr *unix.Ifreq) (int, error) {
	// The socket's own namespace resolves the name, whichever thread runs this.
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		if errors.Is(err, unix.ENODEV) {
			return 0, fmt.Errorf("interface %s: no such interface in this network namespace", iface)
		}
		return 0, fmt.Errorf("interface %s: look up index: %w", iface, err)
	}
	ifindex := int(ifr.Uint32())
	const ethPAll = unix.ETH_P_ALL<<8&0xff00 | unix.ETH_P_ALL>>8 // network byte order
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: ethPAll, Ifindex: ifindex}); err != nil {
		return 0, fmt.Errorf("interface %s: bind packet socket: %w", iface, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1); err != nil {
		return 0, fmt.Errorf("interface %s: ignore outgoing frames: %w", iface, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
		return 0, fmt.Errorf("interface %s: request VLAN metadata: %w", iface, err)
	}
	mreq := unix.PacketMreq{Ifindex: int32(ifindex), Type: unix.PACKET_MR_PROMISC}
	if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
		return 0, fmt.Errorf("interface %s: promiscuous mode: %w", iface, err)
	}
	// A bigger receive buffer absorbs bursts while the pipeline is busy;
	// without the privilege for it the default is used.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20)
	return ifindex, nil
}

// Interface is the name of the socket's interface.
func (s *Socket) Interface() string { return s.iface }

// ErrOversized is returned by Recv for a frame longer than MaxFrame, which
// is discarded.
var ErrOversized = errors.New("frame longer than the receive buffer")

// Recv waits for the next frame and returns it. The frame is valid until the
// next call of Recv. After the read deadline passes Recv returns an error
// wrapping os.ErrDeadlineExceeded, after Close one wrapping os.ErrClosed.
// Only one goroutine may call Recv at a time.
func (s *Socket) Recv() ([]byte, error) {
	if s.conn == nil {
		return nil, fmt.Errorf("interface %s: receive: %w", s.iface, errNotPollable)
	}
	if err := s.conn.Read(s.recvFn); err != nil {
		return nil, fmt.Errorf("interface %s: receive: %w", s.iface, err)
	}
	return s.received()
}

// received is the frame recvmsg just took, with a stripped VLAN tag put
// back.
func (s *Socket) received() ([]byte, error) {
	if s.recvErr != nil {
		return nil, fmt.Errorf("interface %s: receive: %w", s.iface, s.recvErr)
	}
	return s.frameIn(s.buf, s.oob[:s.msg.Controllen], s.recvN)
}

// frameIn is the frame of n bytes received vlanTagLen bytes into buf, with
// the VLAN tag the kernel stripped (by the control messages in oob) put
// back in front of its EtherType.
func (s *Socket) frameIn(buf, oob []byte, n int) ([]byte, error) {
	if n > MaxFrame {
		return nil, fmt.Errorf("interface %s: %d-byte frame: %w", s.iface, n, ErrOversized)
	}
	if tag, ok := strippedVLANTag(oob); ok {
		return retag(buf, vlanTagLen, n, tag), nil
	}
	return buf[vlanTagLen : vlanTagLen+n], nil
}

// retag is the frame of n bytes at buf[at:] with a VLAN tag the kernel
// stripped (TPID<<16 | TCI) put back in front of its EtherType: the
// addresses move vlanTagLen bytes forward, into buf[at-vlanTagLen:], and
// the tag goes after them.
func retag(buf []byte, at, n int, tag uint32) []byte {
	if n < 12 {
		return buf[at : at+n]
	}
	start := at - vlanTagLen
	copy(buf[start:start+12], buf[at:at+12])
	binary.BigEndian.PutUint32(buf[start+12:], tag)
	return buf[start : at+n]
}

// vlanTag is the tag the kernel reports having stripped, by a packet's
// status bits and tag fields (as PACKET_AUXDATA and a ring slot's header
// give them), as TPID<<16 | TCI.
func vlanTag(status uint32, tci, tpid uint16) (uint32, bool) {
	if status&unix.TP_STATUS_VLAN_VALID == 0 {
		return 0, false
	}
	if status&unix.TP_STATUS_VLAN_TPID_VALID == 0 {
		tpid = unix.ETH_P_8021Q
	}
	return uint32(tpid)<<16 | uint32(tci), true
}

// fd is the socket's descriptor, or -1 once it is closed.
func (s *Socket) fd() int {
	fd := -1
	s.control(func(f uintptr) { fd = int(f) }, true)
	return fd
}

// Drops is how many frames the kernel has dropped on arrival because the
// socket's receive buffer was full (its reader fell behind).
func (s *Socket) Drops() uint64 {
	var st *unix.TpacketStats
	err := s.control(func(fd uintptr) {
		// Reading the statistics resets them: they accumulate here.
		st, _ = unix.GetsockoptTpacketStats(int(fd), unix.SOL_PACKET, unix.PACKET_STATISTICS)
	}, true)
	if err == nil && st != nil {
		return s.drops.Add(uint64(st.Drops))
	}
	return s.drops.Load()
}

// strippedVLANTag returns the 802.1Q tag the kernel removed from a frame,
// if any, as TPID<<16 | TCI, from the control messages received with it.
func strippedVLANTag(oob []byte) (uint32, bool) {
	for len(oob) >= unix.CmsgSpace(0) {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if h.Len < unix.SizeofCmsghdr || int(h.Len) > len(oob) {
			return 0, false
		}
		if h.Level == unix.SOL_PACKET && h.Type == unix.PACKET_AUXDATA &&
			int(h.Len) >= unix.CmsgLen(int(unsafe.Sizeof(unix.TpacketAuxdata{}))) {
			aux := (*unix.TpacketAuxdata)(unsafe.Pointer(&oob[unix.CmsgLen(0)]))
			return vlanTag(aux.Status, aux.Vlan_tci, aux.Vlan_tpid)
		}
		oob = oob[min(unix.CmsgSpace(int(h.Len)-unix.CmsgLen(0)), len(oob)):]
	}
	return 0, false
}

// SetReadDeadline makes a blocked or later Recv return once t has passed; the
// zero time means no deadline.
func (s *Socket) SetReadDeadline(t time.Time) error {
	if s.file == nil {
		return fmt.Errorf("interface %s: read deadline: %w", s.iface, errNotPollable)
	}
	return s.file.SetReadDeadline(t)
}

// errNotPollable is the error of a blocking receive on a port's socket.
var errNotPollable = errors.New("a switch port's socket is not in Go's poller (its dataplane receives)")

// Send sends frame out of the interface as it is.
func (s *Socket) Send(frame []byte) error {
	err := s.send(frame)
	if errors.Is(err, unix.ENETDOWN) {
		// The kernel marks a packet socket with ENETDOWN when its
		// interface goes down and reports it once, on the next receive or
		// send, even if the interface is up again by then; the frame was
		// not sent. Sending again tells that stale report from an
		// interface that is still down (ENETDOWN again).
		err = s.send(frame)
	}
	if err != nil {
		return fmt.Errorf("interface %s: send %d-byte frame: %w", s.iface, len(frame), err)
	}
	return nil
}

func (s *Socket) send(frame []byte) error {
	op := sendOps.Get().(*sendOp)
	op.frame, op.err = frame, nil
	var err error
	if s.conn != nil {
		err = s.conn.Write(op.fn)
	} else {
		err = s.writeRaw(op)
	}
	if err == nil {
		err = op.err
	}
	op.frame = nil
	sendOps.Put(op)
	return err
}

// sendOp is one Send's write: pooled with its method value, so sending
// allocates nothing.
type sendOp struct {
	frame []byte
	err   error
	fn    func(fd uintptr) bool
}

var sendOps = sync.Pool{New: func() any {
	op := &sendOp{}
	op.fn = op.write
	return op
}}

// write sends the frame through the poller; it returns false to wait for
// room in the socket's send buffer.
func (op *sendOp) write(fd uintptr) bool {
	for {
		// Raw, without telling the scheduler: the socket never blocks,
		// but the write runs the receiving side's softirq work in this
		// thread (veth delivery to the next switch's socket), long enough
		// for the scheduler to hand this thread's work to another one,
		// which costs a thread wake-up per frame under load.
		var errno unix.Errno
		if len(op.frame) > 0 {
			_, _, errno = unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&op.frame[0])), uintptr(len(op.frame)))
		} else {
			_, _, errno = unix.RawSyscall(unix.SYS_WRITE, fd, 0, 0)
		}
		op.err = nil
		if errno != 0 {
			op.err = errno
		}
		if op.err != unix.EINTR {
			return op.err != unix.EAGAIN
		}
	}
}

// writeRaw is conn.Write for a port's socket.
func (s *Socket) writeRaw(op *sendOp) error { return s.waitRaw(op.fn) }

// Close closes the socket. It waits for an RCU grace period (milliseconds),
// so close many sockets in parallel (CloseAll).
func (s *Socket) Close() error {
	if s.file == nil {
		s.raw.mu.Lock()
		fd, tx := s.raw.fd, s.raw.tx
		s.raw.fd, s.raw.tx = -1, -1
		s.raw.mu.Unlock()
		if fd < 0 {
			return fmt.Errorf("interface %s: close packet socket: %w", s.iface, os.ErrClosed)
		}
		var errs []error
		if s.ring != nil {
			errs = append(errs, s.ring.close())
		}
		for _, fd := range []int{fd, tx} {
			if err := unix.Close(fd); err != nil {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("interface %s: close packet socket: %w", s.iface, err)
		}
		return nil
	}
	if err := s.file.Close(); err != nil {
		return fmt.Errorf("interface %s: close packet socket: %w", s.iface, err)
	}
	return nil
}

// CloseAll closes the sockets in parallel and returns their errors joined.
func CloseAll(sockets []*Socket) error {
	errs := make(chan error, len(sockets))
	for _, s := range sockets {
		go func() { errs <- s.Close() }()
	}
	var all []error
	for range sockets {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}
