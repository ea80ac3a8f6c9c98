package controller

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/controller/controllertest"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
)

// The fragment-hops benchmark's load generator, in the spirit of pktgen
// and MoonGen: what it spends of the two cores the switches it measures do
// not get, so it spends little per fragment. A worker sends the same GRID
// fragment over and over, so its frame is built once, as is the io_uring
// entry sending it from the worker's host; a round of the workers, one
// fragment each, leaves in one system call. The PSs' fragments are counted
// and dropped on arrival at their hosts' interfaces (psSink), in memory the
// generator reads. One goroutine reads the counts and sends on a timer
// tick, so nothing wakes per fragment.
//
// The load has the shape of the generator before it (one fragment per
// worker in turn, kernel UDP writes): a worker sends one fragment and the
// next worker the next. Bursts from one worker would flatter a process per
// switch, which then wakes once per burst rather than once per fragment:
// with 16 fragments per worker in turn it forwarded 3.3 times as many
// fragment-hops per second as under the UDP writes, one process 1.35
// times. A system call per fragment costs it too: under the UDP writes
// (or this generator sending each fragment in a call of its own) it took
// 20-37 µs of CPU per hop, with a round per call 9-19 µs, whether the
// rounds came every 50 µs or every millisecond. Its threads waited
// 1.14-1.18 times per hop under the UDP writes (woken for nearly every
// frame), 0.73-0.79 times under this generator.

// hopsTick is how often the generator tops the window up: far shorter than
// the window lasts at what the switches forward (512 fragments last 6 ms
// at the 85 thousand a second one process forwards), so they never wait.
const hopsTick = time.Millisecond

// hopsBurst is how many fragments in a row a worker sends in its turn.
const hopsBurst = 1

// hopsForgive is how long a full window may see no arrival before the
// fragments in it count as lost: on a loaded machine a round trip can take
// tens of milliseconds.
const hopsForgive = 200 * time.Millisecond

// hopsLoad is the generator for a deployment's jobs: a packet socket per
// worker, a ring sending from all of them, the PSs' sink, and a UDP socket
// per PS for what the sink lets through.
type hopsLoad struct {
	workers int
	ring    *sendRing
	sink    *psSink
	pss     []psSocket
	fds     []int // every socket, closed when the benchmark ends
	// The last flood: what it sent, and the sink's count before it.
	sent, counted uint64
}

// psSocket is a PS's UDP socket on the GRID port of its address.
type psSocket struct {
	fd     int
	job    uint16
	values int
}

// newHopsLoad opens the generator for d's jobs on st: each worker sends
// its first fragment of random gradients.
func newHopsLoad(b testing.TB, st *fabric.State, d *aggregator.Deployment) *hopsLoad {
	b.Helper()
	l := &hopsLoad{}
	b.Cleanup(l.close)
	sink, err := newPSSink(len(d.Jobs))
	if err != nil {
		b.Fatal(err)
	}
	l.sink = sink
	var fds []int
	var frames [][]byte
	for i, job := range d.Jobs {
		if err := sink.attach(st, job.PS, job.Plan.PSIP, i, job.Plan.Job); err != nil {
			b.Fatal(err)
		}
		l.pss = append(l.pss, psSocket{l.openPS(b, st, job.PS, job.Plan.PSIP), job.Plan.Job, job.Plan.Values})
		grads := gradproto.RandomGradients(rand.New(rand.NewPCG(1, uint64(job.Plan.Job))), len(job.Plan.Members), 1, job.Plan.Values, false)
		for m, w := range job.Workers {
			fd, frame := l.openWorker(b, st, w, gradproto.NewWorker(&job.Plan, m, grads[m]).Originals()[0])
			fds, frames = append(fds, fd), append(frames, frame)
		}
	}
	ring, err := newSendRing(fds, frames)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		b.Skip("the generator needs io_uring, which this kernel or its sandbox refuses:", err)
	}
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
	if l.sink != nil {
		l.sink.close()
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
func (l *hopsLoad) openWorker(b testing.TB, st *fabric.State, host string, p *gradproto.Packet) (int, []byte) {
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

// openPS opens the UDP socket of the PS on host's address ip. The sink
// drops the PS's fragments before the host's stack sees them; anything
// else delivered to the PS reaches this socket, and fails the benchmark.
func (l *hopsLoad) openPS(b testing.TB, st *fabric.State, host string, ip netip.Addr) int {
	b.Helper()
	fd := -1
	err := st.Node(host).Do(func() (err error) {
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		return err
	})
	if err == nil {
		if err = unix.Bind(fd, &unix.SockaddrInet4{Port: gradproto.UDPPort, Addr: ip.As4()}); err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		b.Fatalf("PS socket on %s %s: %v", host, ip, err)
	}
	l.fds = append(l.fds, fd)
	return fd
}

// stray is an error naming a datagram that reached a PS's socket: the
// sink did not count it as a fragment of the PS's job.
func (l *hopsLoad) stray() error {
	buf := make([]byte, 64<<10)
	for _, ps := range l.pss {
		n, _, err := unix.Recvfrom(ps.fd, buf, unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			return fmt.Errorf("PS of job %d: %w", ps.job, err)
		}
		h, _, err := gradproto.ParsePayload(buf[:n], ps.values)
		return fmt.Errorf("the PS of job %d received a datagram its sink did not count as a fragment of its job: %d bytes, GRID header %+v (%v)", ps.job, n, h, err)
	}
	return nil
}

// flood sends the workers' fragments to their PSs for the given time,
// round-robin, keeping at most hopsWindow in flight (fragments lost on the
// way are forgiven after hopsForgive without arrivals), and returns how
// many arrived at the PSs. Every hopsTick it takes the arrivals and tops
// the window up.
func (l *hopsLoad) flood(run time.Duration) (arrived uint64, err error) {
	// The order of sends: every worker in turn, hopsBurst times each,
	// over and over; a tick sends the next run of it that fits.
	round := l.workers * hopsBurst
	order := make([]uint32, round+hopsWindow)
	for k := range order {
		order[k] = uint32(k / hopsBurst % l.workers)
	}
	var sent, forgiven uint64
	counted := l.sink.arrived() // before this flood
	defer func() { l.sent, l.counted = sent, counted }()
	next := 0 // into order, below the length of a round
	lastArrival := time.Now()
	end := lastArrival.Add(run)
	for now := lastArrival; now.Before(end); now = time.Now() {
		n := l.sink.arrived() - counted - arrived
		arrived += n
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
	sent -= uint64(l.ring.failed())
	return l.sink.arrived() - counted, l.stray()
}

// lost waits until the last flood's fragments have stopped arriving (50 ms
// without one, 2 s at most) and returns how many of them did not arrive:
// fragments dropped on the way.
func (l *hopsLoad) lost() int64 {
	last := l.sink.arrived()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		now := l.sink.arrived()
		if now == last {
			break
		}
		last = now
	}
	return int64(l.sent) - int64(last-l.counted)
}

// TestHopsLoadSendsEveryWorkersFragmentAlongItsPlannedPathToItsPS sends one
// round of the fragment-hops generator through the testbed's switches
// under Geryon's plan: every fragment reaches its PS and is counted there
// once, and the switches count a hop for every switch on each worker's
// planned path, no more.
func TestHopsLoadSendsEveryWorkersFragmentAlongItsPlannedPathToItsPS(t *testing.T) {
	controllertest.NeedFabric(t)
	tp := topo.Testbed()
	plan := controllertest.Solve(t, tp, solver.AlgoGeryon)
	d, err := aggregator.FromSolverPlan(tp, plan, aggregator.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var workers int
	var hops uint64
	for _, job := range plan.Jobs {
		for _, w := range job.Workers {
			workers++
			for _, s := range w.Shares {
				hops += uint64(len(s.Path))
			}
		}
	}
	if hops == 0 {
		t.Fatal("Geryon's plan for the testbed has no paths; the test would prove nothing")
	}
	st := upRun(t, tp)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctl := startInstalled(ctx, t, st, HostTogether, d)
	load := newHopsLoad(t, st, d)
	if load.workers != workers {
		t.Fatalf("the generator has %d workers, the plan %d", load.workers, workers)
	}
	before := totalRx(t, ctl)
	round := make([]uint32, workers)
	for i := range round {
		round[i] = uint32(i)
	}
	if took, err := load.ring.send(round); err != nil || took != workers {
		t.Fatalf("sent %d of %d fragments: %v", took, workers, err)
	}
	for deadline := time.Now().Add(10 * time.Second); load.sink.arrived() < uint64(workers) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // anything more than the round would arrive now
	if n := load.sink.arrived(); n != uint64(workers) {
		t.Errorf("the PSs counted %d fragments, want the round's %d", n, workers)
	}
	if failed := load.ring.failed(); failed != 0 {
		t.Errorf("%d sends failed", failed)
	}
	if err := load.stray(); err != nil {
		t.Error(err)
	}
	if got := totalRx(t, ctl) - before; got != hops {
		t.Errorf("the switches received %d frames, want %d: a hop for every switch on each worker's path", got, hops)
	}
}
