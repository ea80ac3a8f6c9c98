package controller

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/gradproto"
)

// The fragment-hops benchmark's load generator, in the spirit of pktgen
// and MoonGen: what it spends of the two cores the switches it measures do
// not get, so it spends little per fragment. A worker sends the same GRID
// fragment over and over, so its frame is built once, as is the io_uring
// entry sending it from the worker's host; a round of the workers, one
// fragment each, leaves in one system call. The PSs count arrivals many per
// system call. One goroutine does both on a timer tick, so nothing wakes
// per fragment.
//
// The load has the shape of the generator before it (one fragment per
// worker in turn, kernel UDP writes): a worker sends one fragment and the
// next worker the next. Bursts from one worker would flatter a process per
// switch, which then wakes once per burst rather than once per fragment:
// with 16 fragments per worker in turn it forwarded 3.3 times as many
// fragment-hops per second, one process 1.35 times.

// hopsTick is how often the generator tops the window up: far shorter than
// the window lasts at what the switches forward (1024 fragments are tens
// of milliseconds at tens of thousands a second), so they never wait.
const hopsTick = time.Millisecond

// hopsBurst is how many fragments in a row a worker sends in its turn.
const hopsBurst = 1

// hopsForgive is how long a full window may see no arrival before the
// fragments in it count as lost: on a loaded machine a round trip can take
// tens of milliseconds.
const hopsForgive = 200 * time.Millisecond

// mmsghdr is the kernel's struct mmsghdr, one message of recvmmsg.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
	_   [4]byte
}

// hopsLoad is the generator for a deployment's jobs: a packet socket per
// worker, a ring sending from all of them, and a psCounter per PS.
type hopsLoad struct {
	workers int
	ring    *sendRing
	pss     []*psCounter
	fds     []int // every socket, closed when the benchmark ends
}

// newHopsLoad opens the generator for d's jobs on st: each worker sends
// its first fragment of random gradients.
func newHopsLoad(b *testing.B, st *fabric.State, d *aggregator.Deployment) *hopsLoad {
	b.Helper()
	l := &hopsLoad{}
	b.Cleanup(l.close)
	var fds []int
	var frames [][]byte
	for _, job := range d.Jobs {
		l.pss = append(l.pss, l.openPSCounter(b, st, job.PS, job.Plan.PSIP, job.Plan.Job, job.Plan.Values))
		grads := gradproto.RandomGradients(rand.New(rand.NewPCG(1, uint64(job.Plan.Job))), len(job.Plan.Members), 1, job.Plan.Values, false)
		for i, w := range job.Workers {
			fd, frame := l.openWorker(b, st, w, gradproto.NewWorker(&job.Plan, i, grads[i]).Originals()[0])
			fds, frames = append(fds, fd), append(frames, frame)
		}
	}
	ring, err := newSendRing(fds, frames)
	if err != nil {
		b.Fatal(err)
	}
	l.ring, l.workers = ring, len(frames)
	return l
}

// close closes the generator's sockets. Closing a packet socket waits for
// an RCU grace period, so they close in parallel.
func (l *hopsLoad) close() {
	if l.ring != nil {
		l.ring.close()
	}
	var closing sync.WaitGroup
	for _, fd := range l.fds {
		closing.Go(func() { unix.Close(fd) })
	}
	closing.Wait()
}

// openWorker opens the worker whose fragment p is: a packet socket on
// host's interface holding p's source address, in the host's namespace,
// and p as a whole frame, addressed as the host's kernel addresses it (its
// own MAC to its gateway's) with UDP checksum 0 as GRID senders send it.
// Frames leave through the interface's qdisc, the link's shaping, as a UDP
// socket's do.
func (l *hopsLoad) openWorker(b *testing.B, st *fabric.State, host string, p *gradproto.Packet) (int, []byte) {
	b.Helper()
	node := st.Node(host)
	ifc, err := interfaceOf(node, p.SrcIP)
	if err != nil {
		b.Fatal(err)
	}
	frame := *p
	for _, m := range []struct {
		to   *gradproto.MAC
		text string
	}{{&frame.SrcMAC, ifc.MAC}, {&frame.DstMAC, ifc.GatewayMAC}} {
		mac, err := net.ParseMAC(m.text)
		if err != nil || len(mac) != len(m.to) {
			b.Fatalf("%s %s: MAC %q: %v", host, ifc.Name, m.text, err)
		}
		copy(m.to[:], mac)
	}
	frame.UDPChecksum = 0
	data := frame.Marshal()
	fd := -1
	// Protocol 0: the socket sends and receives nothing, so the results and
	// anything else arriving at the host cost it nothing.
	err = node.Do(func() (err error) {
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		return err
	})
	if err == nil {
		if err = unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifc.Index}); err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		b.Fatalf("packet socket on %s %s: %v", host, ifc.Name, err)
	}
	l.fds = append(l.fds, fd)
	return fd, data
}

// interfaceOf is node's interface holding addr.
func interfaceOf(node *fabric.Node, addr netip.Addr) (*fabric.Interface, error) {
	for i := range node.Interfaces {
		ifc := &node.Interfaces[i]
		if p, err := netip.ParsePrefix(ifc.IP); err == nil && p.Addr() == addr {
			return ifc, nil
		}
	}
	return nil, fmt.Errorf("%s has no interface with address %s", node.Name, addr)
}

// psCounter is a PS as the benchmark has it: a UDP socket on the GRID port
// of the PS's address that takes what arrived many datagrams per system
// call and checks that they are fragments of its job.
type psCounter struct {
	fd     int
	job    uint16
	values int
	msgs   []mmsghdr
	bufs   [][]byte
}

// psBatch is how many datagrams a PS takes per system call.
const psBatch = 256

// openPSCounter opens the PS of job on host's address ip.
func (l *hopsLoad) openPSCounter(b *testing.B, st *fabric.State, host string, ip netip.Addr, job uint16, values int) *psCounter {
	b.Helper()
	fd := -1
	err := st.Node(host).Do(func() (err error) {
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		return err
	})
	if err == nil {
		// Room for the whole window, so the PS's socket drops nothing.
		if err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 32<<20); err == nil {
			err = unix.Bind(fd, &unix.SockaddrInet4{Port: gradproto.UDPPort, Addr: ip.As4()})
		}
		if err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		b.Fatalf("PS socket on %s %s: %v", host, ip, err)
	}
	l.fds = append(l.fds, fd)
	ps := &psCounter{fd: fd, job: job, values: values, msgs: make([]mmsghdr, psBatch), bufs: make([][]byte, psBatch)}
	iovs := make([]unix.Iovec, psBatch)
	for i := range ps.msgs {
		ps.bufs[i] = make([]byte, 2048)
		iovs[i].Base = &ps.bufs[i][0]
		iovs[i].SetLen(len(ps.bufs[i]))
		ps.msgs[i].hdr.Iov = &iovs[i]
		ps.msgs[i].hdr.SetIovlen(1)
	}
	return ps
}

// drain takes every datagram waiting and returns how many there were. It
// checks the first of each batch: a datagram that is not a fragment of the
// PS's job is an error (the switches forwarded something else, or the
// generator sent it).
func (ps *psCounter) drain() (uint64, error) {
	var total uint64
	for {
		n, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(ps.fd), uintptr(unsafe.Pointer(&ps.msgs[0])), psBatch, unix.MSG_DONTWAIT, 0, 0)
		if errno == unix.EAGAIN || errno == unix.EINTR {
			return total, nil
		}
		if errno != 0 {
			return total, fmt.Errorf("PS of job %d: recvmmsg: %w", ps.job, errno)
		}
		if n == 0 {
			return total, nil
		}
		h, vs, err := gradproto.ParsePayload(ps.bufs[0][:ps.msgs[0].n], ps.values)
		if err != nil || h.Job != ps.job || len(vs) != ps.values {
			return total, fmt.Errorf("PS of job %d received %d bytes that are no fragment of its job (header %+v): %v", ps.job, ps.msgs[0].n, h, err)
		}
		total += uint64(n)
		if n < psBatch {
			return total, nil
		}
	}
}

// flood sends the workers' fragments to their PSs for the given time,
// round-robin, keeping at most hopsWindow in flight (fragments lost on the
// way are forgiven after hopsForgive without arrivals), and returns how
// many arrived at the PSs. Every hopsTick it takes the arrivals and tops
// the window up.
func (l *hopsLoad) flood(run time.Duration) (uint64, error) {
	drain := func() (uint64, error) {
		var n uint64
		for _, ps := range l.pss {
			got, err := ps.drain()
			n += got
			if err != nil {
				return n, err
			}
		}
		return n, nil
	}
	// The order of sends: every worker in turn, hopsBurst times each,
	// over and over; a tick sends the next run of it that fits.
	round := l.workers * hopsBurst
	order := make([]uint32, round+hopsWindow)
	for k := range order {
		order[k] = uint32(k / hopsBurst % l.workers)
	}
	var sent, arrived, forgiven uint64
	next := 0 // into order, below the length of a round
	lastArrival := time.Now()
	end := lastArrival.Add(run)
	for now := lastArrival; now.Before(end); now = time.Now() {
		n, err := drain()
		arrived += n
		if err != nil {
			return arrived, err
		}
		sent -= uint64(l.ring.failed())
		inFlight := int64(sent - forgiven - arrived) // negative once forgiven ones arrive
		switch {
		case n > 0:
			lastArrival = now
		case inFlight > 0 && now.Sub(lastArrival) > hopsForgive:
			forgiven, inFlight, lastArrival = sent-arrived, 0, now
		}
		for room := hopsWindow - max(inFlight, 0); room > 0; {
			took, err := l.ring.send(order[next : next+int(room)])
			if err != nil {
				return arrived, err
			}
			if took == 0 {
				break
			}
			sent += uint64(took)
			room -= int64(took)
			next = (next + took) % round
		}
		time.Sleep(hopsTick)
	}
	time.Sleep(100 * time.Millisecond) // the last ones in flight
	n, err := drain()
	return arrived + n, err
}
