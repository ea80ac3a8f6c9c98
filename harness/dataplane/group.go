package dataplane

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A Group receives for many Dataplanes of one process (a switch host's
// switches): a worker per Go processor takes the switches that have frames
// from one run queue and passes their frames through, where each switch on
// its own would park a receiver goroutine in Go's poller.
//
// The switches' frames to each other are sent by the group itself, and the
// kernel delivers a frame into the next switch's ring in the sender's
// context, before its send returns: a port whose link leads to another
// switch of the group (Link) wakes that switch in user space after it
// sends, and the socket receiving from such a link is in no epoll set, so
// the kernel runs no wake-up per frame for it (an epoll set's callback, then
// the Go poller's, each with its locks and interrupts off). Only the ports
// fed from outside (hosts, other processes) ring the group's one epoll set.
// A frame the kernel delivers later (its link's tbf held it, or the
// delivery went to ksoftirqd) is found by a sweep of the idle switches'
// rings every groupSweep.
//
// A switch is served by one worker at a time, a frame at a time, as its own
// receiver would: its pipeline is never contended by the group.
type Group struct {
	runq chan *Dataplane // the switches with frames, each at most once; nil stops a worker

	epfd   int      // the epoll set of the ports fed from outside
	file   *os.File // epfd in Go's poller
	conn   syscall.RawConn
	events []unix.EpollEvent

	// mu guards members and ports, which the doorbell and the sweep read
	// while they hold it, so that a switch leaving (and closing its rings
	// once it has left) is never touched after.
	mu      sync.Mutex
	members []*Dataplane
	ports   []*port // by the epoll events' index; nil once left
	size    int

	workers int
	stop    chan struct{}
	running sync.WaitGroup
	closed  sync.Once
}

// groupSweep is how often the group looks for frames in the rings of the
// switches it is not serving: frames that arrived without a wake-up (see
// Group). They wait that long at most.
const groupSweep = time.Millisecond

// linkErrorsEvery is how many sweeps apart the group takes the errors of
// the linked ports' sockets, which ring no epoll set: the kernel's report
// that an interface went down is logged that much later at most.
const linkErrorsEvery = 1000

// serveRounds is how many rounds a worker gives a switch that keeps taking
// frames before it serves the others queued.
const serveRounds = 4

// The states of a Dataplane in a Group.
const (
	out      int32 = iota // not running in the group (before Run, after): wake-ups do nothing
	idle                  // no frames known: a wake-up queues it
	queued                // in the run queue
	running               // a worker serves it
	notified              // a worker serves it, and frames came since it last looked
)

// NewGroup starts a group for up to size Dataplanes, served by workers
// goroutines (0: one per Go processor, GOMAXPROCS). Close stops it.
func NewGroup(size, workers int) (*Group, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	// Non-blocking, so that os.NewFile registers it with the Go poller.
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("epoll: %w", err)
	}
	g := &Group{runq: make(chan *Dataplane, size+workers), epfd: epfd, file: os.NewFile(uintptr(epfd), "epoll of the switch ports"),
		events: make([]unix.EpollEvent, 256), size: size, workers: workers, stop: make(chan struct{})}
	if g.conn, err = g.file.SyscallConn(); err != nil {
		g.file.Close()
		return nil, fmt.Errorf("epoll: %w", err)
	}
	for range workers {
		g.running.Go(g.work)
	}
	g.running.Go(g.doorbell)
	g.running.Go(g.sweep)
	return g, nil
}

// Close stops the group's goroutines. Call it once its Dataplanes' Runs
// have returned.
func (g *Group) Close() error {
	var err error
	g.closed.Do(func() {
		close(g.stop)
		for range g.workers {
			g.runq <- nil
		}
		err = g.file.Close() // ends the doorbell's wait
		g.running.Wait()
	})
	return err
}

// Link says that the frames port aPort of a sends arrive at port bPort of
// b, and the other way round: the two ends of a veth, both Dataplanes of
// the group, not yet running. Each then wakes the other after it sends,
// and neither port's socket rings the group's epoll set for a frame.
func (g *Group) Link(a *Dataplane, aPort uint32, b *Dataplane, bPort uint32) error {
	pa, pb := a.byPort[aPort], b.byPort[bPort]
	switch {
	case a.group != g || b.group != g:
		return errors.New("link: a dataplane is not of this group")
	case pa == nil || pb == nil:
		return fmt.Errorf("link %d-%d: no such port", aPort, bPort)
	case pa.peer != nil || pb.peer != nil:
		return fmt.Errorf("link %s-%s: a port is linked already", pa.spec, pb.spec)
	case a.running.Load() || b.running.Load():
		return fmt.Errorf("link %s-%s: a dataplane runs already", pa.spec, pb.spec)
	}
	pa.peer, pb.peer = b, a
	return nil
}

// join puts d in the group: its ports fed from outside in the epoll set,
// its rings in the sweep. It is queued once, for the frames that came
// before.
func (g *Group) join(d *Dataplane) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.members) == g.size {
		return fmt.Errorf("dataplane: the group holds %d dataplanes already", g.size)
	}
	var added []int
	for _, p := range d.ports {
		fd := p.sock.fd()
		if fd < 0 {
			return fmt.Errorf("interface %s: socket closed", p.spec.Interface)
		}
		// A linked port's socket stays out of the set: no wake-up per
		// frame. The sweep takes its errors.
		if p.peer != nil {
			continue
		}
		p.dp = d
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(len(g.ports))}
		if err := unix.EpollCtl(g.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			for _, i := range added {
				unix.EpollCtl(g.epfd, unix.EPOLL_CTL_DEL, g.ports[i].sock.fd(), nil)
				g.ports[i] = nil
			}
			return fmt.Errorf("interface %s: epoll: %w", p.spec.Interface, err)
		}
		added = append(added, len(g.ports))
		g.ports = append(g.ports, p)
	}
	g.members = append(g.members, d)
	d.state.Store(idle)
	return nil
}

// leave takes d out of the group once no worker serves it: no worker,
// doorbell or sweep touches its rings after.
func (g *Group) leave(d *Dataplane) {
	d.serving.Lock()
	d.state.Store(out)
	d.serving.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, p := range g.ports {
		if p != nil && p.dp == d {
			unix.EpollCtl(g.epfd, unix.EPOLL_CTL_DEL, p.sock.fd(), nil)
			g.ports[i] = nil
		}
	}
	for i, m := range g.members {
		if m == d {
			g.members = append(g.members[:i], g.members[i+1:]...)
			break
		}
	}
}

// work serves the switches of the run queue until Close.
func (g *Group) work() {
	for d := <-g.runq; d != nil; d = <-g.runq {
		d.serve()
	}
}

// doorbell takes the events of the ports fed from outside and queues their
// switches, until Close.
func (g *Group) doorbell() {
	for {
		if err := g.conn.Read(g.ring); err != nil {
			return
		}
	}
}

// ring reads the epoll set without waiting and wakes the switches whose
// ports have frames or errors; false sends the doorbell to wait in Go's
// poller until the set is rung again.
func (g *Group) ring(fd uintptr) bool {
	for {
		r, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, fd, uintptr(unsafe.Pointer(&g.events[0])), uintptr(len(g.events)), 0, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		n := int(r)
		if errno != 0 || n <= 0 {
			return false
		}
		g.mu.Lock()
		for _, ev := range g.events[:n] {
			p := g.ports[ev.Fd]
			if p == nil {
				continue
			}
			if ev.Events&unix.EPOLLERR != 0 {
				p.failed.Store(true)
				p.dp.failed.Store(true)
			}
			p.dp.wake()
		}
		g.mu.Unlock()
		if n < len(g.events) {
			return false
		}
	}
}

// sweep wakes, every groupSweep until Close, the idle switches with frames
// in their rings: frames that came without a wake-up.
func (g *Group) sweep() {
	t := time.NewTicker(groupSweep)
	defer t.Stop()
	for sweeps := 1; ; sweeps++ {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		g.mu.Lock()
		for _, d := range g.members {
			if d.lateFrames() {
				d.lateWakes.Add(1)
				d.wake()
			}
			if sweeps%linkErrorsEvery == 0 {
				d.takeLinkErrors()
			}
		}
		g.mu.Unlock()
	}
}

// takeLinkErrors takes the errors pending on d's linked ports (logging an
// interface gone down); one that stops d stops its Run.
func (d *Dataplane) takeLinkErrors() {
	if err := d.takeErrorsOf(func(p *port) bool { return p.peer != nil }); err != nil {
		d.stopWith(err)
	}
}

// stopWith makes d's Run return err, unless it stops already.
func (d *Dataplane) stopWith(err error) {
	select {
	case d.stopped <- err:
	default:
	}
}

// lateFrames says whether d is idle with frames in a linked port's ring.
// (A port fed from outside rings the epoll set for each frame.)
func (d *Dataplane) lateFrames() bool {
	if d.state.Load() != idle || !d.serving.TryLock() {
		return false // it is served, or about to be
	}
	defer d.serving.Unlock()
	for _, p := range d.ports {
		if p.peer != nil && p.ring.waiting() {
			return true
		}
	}
	return false
}

// wake says d has frames: an idle d is queued, one being served looks
// again before it goes idle.
func (d *Dataplane) wake() {
	for {
		switch s := d.state.Load(); s {
		case idle:
			if d.state.CompareAndSwap(idle, queued) {
				d.group.runq <- d
				return
			}
		case running:
			if d.state.CompareAndSwap(running, notified) {
				return
			}
		default: // queued, notified, out
			return
		}
	}
}

// serve is a worker's turn at d, queued: rounds of its ports until they
// have no frames (or serveRounds, when it is queued again behind the
// others).
func (d *Dataplane) serve() {
	d.serving.Lock()
	defer d.serving.Unlock()
	if !d.state.CompareAndSwap(queued, running) {
		return // it left
	}
	for rounds := 0; ; {
		if d.failed.Load() {
			d.failed.Store(false)
			if err := d.takeErrorsOf(func(p *port) bool { return p.failed.Swap(false) }); err != nil {
				d.stopWith(err)
				return // stays running: no wake-up queues it again
			}
		}
		if d.round(d.pipeline, d.emit, &d.dirty) {
			if rounds++; rounds < serveRounds {
				continue
			}
			d.state.Store(queued)
			d.group.runq <- d
			return
		}
		if d.state.CompareAndSwap(running, idle) {
			return
		}
		d.state.Store(running) // woken since the round began: look again
		rounds = 0
	}
}

// takeErrorsOf takes the errors pending on the ports of d that of picks
// (those the doorbell saw fail, or the linked ones, which ring no epoll
// set), logging an interface gone down; it returns one that stops d.
func (d *Dataplane) takeErrorsOf(of func(*port) bool) error {
	for _, p := range d.ports {
		if of(p) {
			if err := d.socketError(p); err != nil {
				return stopOrErr(err)
			}
		}
	}
	return nil
}
