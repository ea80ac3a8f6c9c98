// Package dataplane gives a software switch its ports: AF_PACKET sockets
// on each network interface (a veth end in the switch's namespace), one
// receive goroutine that waits on all of them at once (an edge-triggered
// epoll set in the Go poller) and hands every frame, port after port, to a
// Pipeline (the P4 engine, or the P4Runtime server in front of it), and
// transmission of the frames the pipeline emits out of their ports'
// interfaces. It is the packet I/O half of `grid switch`, the embedded
// drop-in for bmv2's simple_switch_grpc, with bmv2's per-interface pcap
// files (--pcap).
//
// A frame through a switch costs far more in the kernel (the veth, the
// qdisc, the delivery to the next socket) than in the pipeline, so the
// receiver spends as few system calls and wake-ups as it can on it: it
// takes a port's frames from a ring it shares with the kernel, with no
// system call per frame and no socket buffer kept per frame (ring.go),
// finds which ports have frames by reading their rings, not the epoll set
// (poller.go), sends what they emit in one sendmmsg per egress port through
// a socket that only sends, and keeps the ports' sockets out of Go's poller
// (batch.go, socket.go). Exclusive ports (Options.Exclusive) also spare the
// namespace's IP stack every frame (exclusive.go).
//
// Many switches in one process (a switch host) share a Group instead
// (Options.Group, group.go): a few workers serve whichever switches have
// frames, and a switch that sends to another of the group over a link
// wakes it itself, so the kernel wakes nobody for the frames on such
// links.
//
// The kernel's netem is not available everywhere the testbed runs, so the
// link impairments of a topology are emulated here, on egress: a port with
// Loss drops each frame it would send with that probability (from a seeded
// generator, so runs repeat), and a port with Delay holds every frame that
// long before sending it, in order.
//
// Typical use, in the switch's namespace:
//
//	dp, err := dataplane.Open([]dataplane.PortSpec{{Port: 0, Interface: "sw0"}, {Port: 1, Interface: "sw1"}}, dataplane.Options{})
//	defer dp.Close()
//	err = dp.Run(ctx, sw) // sw: *engine.Switch, *p4rt.Server, or a PipelineFunc
package dataplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/engine"
)

// Pipeline processes a frame received on port and calls emit for every frame
// that leaves the switch; Output.Data is only valid during the call of emit.
// Run calls Process from one goroutine, a frame at a time; others (a
// P4Runtime PacketOut) may call it meanwhile.
// *engine.Switch implements it.
type Pipeline interface {
	Process(port uint32, frame []byte, emit func(engine.Output)) error
}

// PipelineFunc adapts a function to the Pipeline interface.
type PipelineFunc func(port uint32, frame []byte, emit func(engine.Output)) error

// Process calls f.
func (f PipelineFunc) Process(port uint32, frame []byte, emit func(engine.Output)) error {
	return f(port, frame, emit)
}

// PortSpec attaches switch port Port to the network interface Interface.
// Delay and Loss impair the frames the port sends: each is held Delay
// before it leaves, and dropped with probability Loss (0 to 1). Rate, when
// set, is the bits per second of the port's link: the port's egress queue
// (Queues) drains at that rate, so it fills as simple_switch's queue does
// behind a slower link.
type PortSpec struct {
	Port      uint32
	Interface string
	Delay     time.Duration
	Loss      float64
	Rate      float64
}

// String is the port as bmv2's -i option writes it, PORT@INTERFACE.
func (p PortSpec) String() string { return fmt.Sprintf("%d@%s", p.Port, p.Interface) }

// Options configure a Dataplane.
type Options struct {
	// PcapDir, when set, is the directory (created if needed) where every
	// port records the frames it receives and sends in INTERFACE_in.pcap
	// and INTERFACE_out.pcap, as bmv2's --pcap does. A frame dropped by
	// loss emulation is in neither file.
	PcapDir string
	// LossSeed seeds the generators deciding which frames Loss drops (one
	// per port, derived from the seed and the port number), so a run with
	// the same seed and the same frames drops the same ones.
	LossSeed uint64
	// Logger receives per-frame events at debug level and trouble with the
	// interfaces at warning level; nil means slog.Default().
	Logger *slog.Logger
	// Exclusive says the ports' interfaces carry the switch's frames only
	// (as in grid's fabric, where a switch's namespace holds nothing else):
	// once the packet sockets on an interface (the port's, a capture's)
	// have a frame, the namespace's IP stack is spared it (see
	// exclusive.go). Close restores the interfaces.
	Exclusive bool
	// Group, when set, receives for the Dataplane with the other
	// Dataplanes of the process in it, in place of a receiver of its own
	// (group.go).
	Group *Group
}

// delayQueueLen bounds the frames a delayed port holds; more are dropped
// (and counted) as by a full transmit queue.
const delayQueueLen = 1 << 14

// Dataplane is a set of switch ports on network interfaces.
type Dataplane struct {
	ports  []*port
	byPort map[uint32]*port
	// byNum is byPort as a slice indexed by port number, when the
	// numbers are small (v1model's are 9 bits): what a frame's egress
	// looks up.
	byNum  []*port
	log    *slog.Logger
	bypass *stackBypass // nil unless Options.Exclusive

	running        atomic.Bool
	pipelineErrors atomic.Uint64
	unknownEgress  atomic.Uint64
	unknownMu      sync.Mutex
	unknownByPort  map[uint32]uint64 // of unknownEgress; nil until the first
	closeOnce      sync.Once
	closeErr       error

	// holdMu guards stopHolds, which is open while Run runs: the senders
	// of held frames (holdQueue) stop when it closes.
	holdMu    sync.Mutex
	stopHolds chan struct{}
	holds     sync.WaitGroup

	// In a Group (group.go): its state there, held by the worker serving
	// it, and what the worker passes its frames to; failed says a port
	// has an error the doorbell saw, stopped takes an error that stops
	// Run; lateWakes counts the sweeps that found frames in its idle
	// rings.
	group     *Group
	state     atomic.Int32
	serving   sync.Mutex
	failed    atomic.Bool
	stopped   chan error
	pipeline  Pipeline
	emit      func(engine.Output)
	dirty     []*port
	lateWakes atomic.Uint64
}

// port is one switch port: its socket, impairments and counters. What
// every frame the port sends reads comes first, in as few cache lines as
// can be.
type port struct {
	// batch and dirty are the receiver's: the frames waiting to leave
	// together (batch.go), and whether the port is on its list of ports
	// with a batch.
	batch txBatch
	dirty bool
	lossy bool // spec.Loss > 0
	debug bool // log every frame (checked first: logging costs even when off)
	// holding counts the frames in held and the one its sender waits
	// with: while there are any, a frame that need not wait queues
	// behind them, so the port keeps the order the frames came in.
	holding atomic.Int64
	ring    *rxRing // sock's
	// peer is the Dataplane of the group the port's frames arrive at
	// (Group.Link), which it wakes after it sends; nil if none.
	peer *Dataplane
	// dp is the port's Dataplane and failed says the group's doorbell saw
	// an error on its socket (ports fed from outside only).
	dp     *Dataplane
	failed atomic.Bool
	spec   PortSpec
	sock   *Socket
	log    *slog.Logger

	pcapIn, pcapOut *pcapFile // nil without Options.PcapDir

	lossMu sync.Mutex
	loss   *rand.Rand

	// held are the frames held back for Delay or their egress queue's
	// wait (engine.Output.Wait), sent in order when due; nil until a port
	// first holds one, as most never do and each queue takes
	// delayQueueLen slots.
	held atomic.Pointer[chan delayedFrame]

	rxFrames, rxBytes, rxErrors         atomic.Uint64
	txFrames, txBytes, txErrors         atomic.Uint64
	lossDrops, queueDrops, unsentAtStop atomic.Uint64
}

type delayedFrame struct {
	due  time.Time
	data []byte
}

// Open opens a packet socket on each port's interface, in the network
// namespace of the calling OS thread, and the pcap files if asked for. Port
// numbers and interfaces must be distinct. On error nothing stays open or
// written.
func Open(specs []PortSpec, opts Options) (*Dataplane, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if err := checkSpecs(specs); err != nil {
		return nil, err
	}
	d := &Dataplane{byPort: make(map[uint32]*port, len(specs)), log: log, group: opts.Group}
	for _, spec := range specs {
		p := &port{spec: spec, log: log.With("port", spec.Port, "interface", spec.Interface),
			debug: log.Enabled(context.Background(), slog.LevelDebug), lossy: spec.Loss > 0}
		if spec.Loss > 0 && spec.Loss < 1 {
			p.loss = rand.New(rand.NewPCG(opts.LossSeed, uint64(spec.Port)))
		}
		if spec.Delay > 0 {
			q := make(chan delayedFrame, delayQueueLen)
			p.held.Store(&q)
		}
		d.ports = append(d.ports, p)
		d.byPort[spec.Port] = p
		if spec.Port < maxPortIndex {
			d.byNum = append(d.byNum, make([]*port, max(0, int(spec.Port)+1-len(d.byNum)))...)
			d.byNum[spec.Port] = p
		}
	}
	madeDir := false
	if opts.PcapDir != "" {
		_, err := os.Stat(opts.PcapDir)
		madeDir = errors.Is(err, os.ErrNotExist)
	}
	if err := d.open(opts.PcapDir, opts.Exclusive); err != nil {
		d.Close()
		d.removePcaps()
		if madeDir {
			os.Remove(opts.PcapDir)
		}
		return nil, err
	}
	return d, nil
}

func checkSpecs(specs []PortSpec) error {
	ports := map[uint32]bool{}
	ifaces := map[string]bool{}
	for _, s := range specs {
		switch {
		case s.Interface == "":
			return fmt.Errorf("port %d: no interface given", s.Port)
		case ports[s.Port]:
			return fmt.Errorf("port %s: port %d is given twice", s, s.Port)
		case ifaces[s.Interface]:
			return fmt.Errorf("port %s: interface %s is given twice", s, s.Interface)
		case !(s.Loss >= 0 && s.Loss <= 1):
			return fmt.Errorf("port %s: loss %v is not a fraction between 0 and 1", s, s.Loss)
		case s.Delay < 0:
			return fmt.Errorf("port %s: delay %v is negative", s, s.Delay)
		case !(s.Rate >= 0) || math.IsInf(s.Rate, 0):
			return fmt.Errorf("port %s: rate %v is not bits per second", s, s.Rate)
		}
		ports[s.Port], ifaces[s.Interface] = true, true
	}
	return nil
}

func (d *Dataplane) open(pcapDir string, exclusive bool) error {
	if pcapDir != "" {
		if err := os.MkdirAll(pcapDir, 0o755); err != nil {
			return fmt.Errorf("pcap directory: %w", err)
		}
	}
	var err error
	if exclusive {
		if d.bypass, err = newStackBypass(); err != nil {
			return err
		}
	}
	socks, err := openPortSockets(d.Ports(), ringSlots(len(d.ports)))
	if err != nil {
		return err
	}
	for i, p := range d.ports {
		p.sock, p.ring = socks[i], socks[i].ring
		if d.bypass != nil {
			if err := d.bypass.add(p.spec.Interface, p.sock.index); err != nil {
				return fmt.Errorf("port %s: exclusive: %w", p.spec, err)
			}
		}
		if pcapDir == "" {
			continue
		}
		if p.pcapIn, err = createPcap(filepath.Join(pcapDir, p.spec.Interface+"_in.pcap")); err != nil {
			return fmt.Errorf("port %s: %w", p.spec, err)
		}
		if p.pcapOut, err = createPcap(filepath.Join(pcapDir, p.spec.Interface+"_out.pcap")); err != nil {
			return fmt.Errorf("port %s: %w", p.spec, err)
		}
	}
	return nil
}

// removePcaps removes the pcap files of a failed Open.
func (d *Dataplane) removePcaps() {
	for _, p := range d.ports {
		for _, f := range []*pcapFile{p.pcapIn, p.pcapOut} {
			if f != nil {
				os.Remove(f.path)
			}
		}
	}
}

// Ports returns the ports' specifications in the order given to Open.
func (d *Dataplane) Ports() []PortSpec {
	specs := make([]PortSpec, len(d.ports))
	for i, p := range d.ports {
		specs[i] = p.spec
	}
	return specs
}

// Run receives frames on every port and passes them through pl, sending what
// it emits, until ctx is cancelled; then it stops receiving, discards the
// frames still held by delayed ports (counted as UnsentAtStop) and returns
// nil. It returns early with an error naming the interface if a port's
// socket fails (an interface going down is only logged: its socket resumes
// when it comes back up). Run may be called once.
func (d *Dataplane) Run(ctx context.Context, pl Pipeline) error {
	if !d.running.CompareAndSwap(false, true) {
		return errors.New("dataplane: Run called twice")
	}
	d.holdMu.Lock()
	d.stopHolds = make(chan struct{})
	for _, p := range d.ports {
		if q := p.held.Load(); q != nil {
			stop := d.stopHolds
			d.holds.Go(func() { p.sendDelayed(*q, stop) })
		}
	}
	d.holdMu.Unlock()
	var err error
	if d.group != nil {
		err = d.runInGroup(ctx, pl)
	} else {
		err = d.runAlone(ctx, pl)
	}
	d.holdMu.Lock()
	close(d.stopHolds)
	d.stopHolds = nil
	d.holdMu.Unlock()
	d.holds.Wait()
	for _, p := range d.ports {
		if q := p.held.Load(); q != nil {
			p.unsentAtStop.Add(uint64(len(*q)))
		}
	}
	return err
}

// runAlone is Run with a receiver of the Dataplane's own, waiting in Go's
// poller (poller.go).
func (d *Dataplane) runAlone(ctx context.Context, pl Pipeline) error {
	socks := make([]*Socket, len(d.ports))
	for i, p := range d.ports {
		socks[i] = p.sock
	}
	poll, err := newPoller(socks, d.framesWaiting)
	if err != nil {
		return err
	}
	defer poll.close()
	received := make(chan error, 1)
	go func() { received <- d.receive(poll, pl) }()
	select {
	case <-ctx.Done():
		poll.stop()
		return <-received
	case err := <-received:
		return err
	}
}

// runInGroup is Run in the Dataplane's group, whose workers receive for
// it (group.go).
func (d *Dataplane) runInGroup(ctx context.Context, pl Pipeline) error {
	d.pipeline, d.stopped = pl, make(chan error, 1)
	d.emit = func(o engine.Output) { d.transmit(o, &d.dirty) }
	if err := d.group.join(d); err != nil {
		return err
	}
	defer d.group.leave(d)
	d.wake() // for the frames that came before
	select {
	case <-ctx.Done():
		return nil
	case err := <-d.stopped:
		return err
	}
}

// portBudget is how many frames the receiver takes from one port before it
// looks at the others again, so a flooded port does not starve them.
const portBudget = 64

// receive is the receiver of every port: it waits until ports have frames
// and passes each through pl, sending what it emits in batches (batch.go).
// It returns nil when Run stops it, and an error naming the port if a
// socket fails.
func (d *Dataplane) receive(poll *poller, pl Pipeline) error {
	var dirty []*port
	emit := func(o engine.Output) { d.transmit(o, &dirty) }
	for {
		// Rounds of every port until none has a frame.
		for took, yielded := true, false; took || !yielded; {
			if !took {
				// Others run before the receiver waits: frames that
				// arrive meanwhile need no wake-up.
				runtime.Gosched()
				yielded = true
			}
			if poll.stopped.Load() {
				return nil
			}
			if took = d.round(pl, emit, &dirty); took {
				yielded = false
			}
		}
		failed, err := poll.wait()
		if isStop(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("dataplane: waiting for frames: %w", err)
		}
		for _, i := range failed {
			if err := d.socketError(d.ports[i]); err != nil {
				return stopOrErr(err)
			}
		}
	}
}

// round takes up to a budget of frames from every port in turn and
// passes them through pl; the frames of every port visited leave together
// (an egress port's batch gathers what all the ingress ports sent it).
// took says there were any.
func (d *Dataplane) round(pl Pipeline, emit func(engine.Output), dirty *[]*port) (took bool) {
	for _, p := range d.ports {
		if d.drain(p, pl, emit) {
			took = true
		}
	}
	*dirty = flushAll(*dirty)
	return took
}

// stopOrErr is nil for an error that says the ports were closed (Run
// stops), else err.
func stopOrErr(err error) error {
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

// framesWaiting says whether a port's ring holds a frame.
func (d *Dataplane) framesWaiting() bool {
	for _, p := range d.ports {
		if p.ring.waiting() {
			return true
		}
	}
	return false
}

// drain passes up to portBudget of the frames waiting in p's ring through
// pl; took says there were any.
func (d *Dataplane) drain(p *port, pl Pipeline, emit func(engine.Output)) (took bool) {
	ring := p.ring
	n := ring.ready(portBudget)
	if n == 0 {
		return false
	}
	var frames, bytes uint64
	for range n {
		frame, err := ring.frame()
		if err != nil {
			p.rxErrors.Add(1)
			p.log.Debug("frame dropped", "err", err)
		} else {
			frames++
			bytes += uint64(len(frame))
			d.process(p, frame, pl, emit)
		}
		ring.release()
	}
	// Counted once per port visited, not per frame: an atomic addition
	// is a locked instruction.
	p.rxFrames.Add(frames)
	p.rxBytes.Add(bytes)
	return true
}

// socketError takes the error pending on p's socket, which epoll reported:
// the kernel's report that the interface went down, which is logged (the
// socket receives again once it is up), or a failure, which err names.
func (d *Dataplane) socketError(p *port) error {
	var errno int
	var gerr error
	if err := p.sock.control(func(fd uintptr) { errno, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR) }, false); err != nil {
		gerr = err
	}
	switch {
	case gerr == nil && errno == 0:
		return nil
	case gerr == nil:
		gerr = unix.Errno(errno)
	}
	if errors.Is(gerr, unix.ENETDOWN) {
		p.log.Warn("interface is down; its port receives again when it comes up")
		return nil
	}
	return fmt.Errorf("port %s: interface %s: receive: %w", p.spec, p.spec.Interface, gerr)
}

// process passes a frame received on p through pl.
func (d *Dataplane) process(p *port, frame []byte, pl Pipeline, emit func(engine.Output)) {
	p.pcapIn.write(frame, p.log)
	if p.debug {
		p.log.Debug("frame received", "bytes", len(frame))
	}
	if err := pl.Process(p.spec.Port, frame, emit); err != nil {
		d.pipelineErrors.Add(1)
		p.log.Debug("pipeline refused a frame", "err", err)
	}
}

// Transmit sends o.Data out of port o.Port through the port's impairments,
// as it does with the frames the pipeline emits; it is for frames that enter
// the switch elsewhere, such as P4Runtime PacketOut messages. A frame to a
// port without an interface is dropped (and counted). Transmit copies what
// it keeps and is safe for concurrent use.
func (d *Dataplane) Transmit(o engine.Output) { d.transmit(o, nil) }

// transmit is Transmit; for the receiver (dirty not nil) a frame that
// leaves at once joins its port's batch (batch.go), and a held one leaves
// after the batch.
func (d *Dataplane) transmit(o engine.Output, dirty *[]*port) {
	p := d.portNumbered(o.Port)
	if p == nil {
		d.unknownEgress.Add(1)
		d.unknownMu.Lock()
		if d.unknownByPort == nil {
			d.unknownByPort = map[uint32]uint64{}
		}
		d.unknownByPort[o.Port]++
		d.unknownMu.Unlock()
		d.log.Debug("frame sent to a port without an interface dropped", "port", o.Port)
		return
	}
	if p.lossy && p.lose() {
		p.lossDrops.Add(1)
		if p.debug {
			p.log.Debug("frame dropped by loss emulation", "bytes", len(o.Data))
		}
		return
	}
	hold := p.spec.Delay + o.Wait
	if hold == 0 && p.holding.Load() == 0 {
		if dirty != nil {
			p.add(o.Data, dirty)
		} else {
			p.send(o.Data)
		}
		return
	}
	if dirty != nil {
		p.flush()
	}
	p.holding.Add(1)
	select {
	case d.holdQueue(p) <- delayedFrame{due: time.Now().Add(hold), data: append([]byte(nil), o.Data...)}:
	default:
		p.holding.Add(-1)
		p.queueDrops.Add(1)
	}
}

// maxPortIndex bounds the port numbers Dataplane.byNum holds.
const maxPortIndex = 4096

// portNumbered is the port numbered n, nil if there is none.
func (d *Dataplane) portNumbered(n uint32) *port {
	if n < uint32(len(d.byNum)) {
		return d.byNum[n]
	}
	if n < maxPortIndex {
		return nil
	}
	return d.byPort[n]
}

// rxDrops reads the socket's drop count (kept once the socket is closed).
func (p *port) rxDrops() uint64 {
	if p.sock == nil {
		return 0
	}
	return p.sock.Drops()
}

// holdQueue is the port's queue of held frames, made (with its sender, if
// Run runs) the first time the port holds one.
func (d *Dataplane) holdQueue(p *port) chan delayedFrame {
	if q := p.held.Load(); q != nil {
		return *q
	}
	d.holdMu.Lock()
	defer d.holdMu.Unlock()
	if q := p.held.Load(); q != nil {
		return *q
	}
	q := make(chan delayedFrame, delayQueueLen)
	p.held.Store(&q)
	if stop := d.stopHolds; stop != nil {
		d.holds.Go(func() { p.sendDelayed(q, stop) })
	}
	return q
}

// lose decides whether loss emulation drops the next frame.
func (p *port) lose() bool {
	switch {
	case p.spec.Loss <= 0:
		return false
	case p.spec.Loss >= 1:
		return true
	}
	p.lossMu.Lock()
	defer p.lossMu.Unlock()
	return p.loss.Float64() < p.spec.Loss
}

func (p *port) send(frame []byte) {
	if err := p.sock.Send(frame); err != nil {
		p.txErrors.Add(1)
		p.log.Debug("frame not sent", "err", err)
		return
	}
	p.sent(frame)
	if p.peer != nil {
		p.peer.wake()
	}
}

// sent counts a frame the port sent and records it.
func (p *port) sent(frame []byte) {
	p.txFrames.Add(1)
	p.txBytes.Add(uint64(len(frame)))
	p.record(frame)
}

// sentBatch counts the frames of a batch the port sent, which lie one
// after the other in frames, each ending at ends[i]-from, and records
// them.
func (p *port) sentBatch(frames []byte, ends []int, from int) {
	p.txFrames.Add(uint64(len(ends)))
	p.txBytes.Add(uint64(len(frames)))
	if p.pcapOut == nil && !p.debug {
		return
	}
	start := 0
	for _, end := range ends {
		p.record(frames[start : end-from])
		start = end - from
	}
}

// record writes a frame the port sent to its pcap file and log.
func (p *port) record(frame []byte) {
	p.pcapOut.write(frame, p.log)
	if p.debug {
		p.log.Debug("frame sent", "bytes", len(frame))
	}
}

// sendDelayed sends the port's delayed frames when they are due, in the order
// they were queued (the egress queue's schedule keeps their due times in
// order, except for a higher priority's frame queued behind a lower one's,
// which then leaves right after it), until stop is closed.
func (p *port) sendDelayed(held <-chan delayedFrame, stop <-chan struct{}) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-stop:
			return
		case f := <-held:
			if wait := time.Until(f.due); wait > 0 {
				timer.Reset(wait)
				select {
				case <-stop:
					p.unsentAtStop.Add(1)
					p.holding.Add(-1)
					return
				case <-timer.C:
				}
			}
			p.send(f.data)
			p.holding.Add(-1)
		}
	}
}

// PortStats are the counters of one port.
type PortStats struct {
	PortSpec
	RxFrames, RxBytes uint64
	// RxErrors counts frames received but not processed (too long).
	RxErrors uint64
	// RxDrops counts frames the kernel dropped on arrival because the
	// port's socket buffer was full (the pipeline fell behind).
	RxDrops           uint64
	TxFrames, TxBytes uint64
	// TxErrors counts frames the kernel refused to send (interface down,
	// frame longer than the MTU, the peer's backlog full).
	TxErrors uint64
	// LossDrops counts frames dropped by loss emulation.
	LossDrops uint64
	// QueueDrops counts frames dropped because the frames held back
	// (delayQueueLen) filled the port's hold queue.
	QueueDrops uint64
	// UnsentAtStop counts delayed frames still waiting when Run stopped.
	UnsentAtStop uint64
}

// Stats are a Dataplane's counters.
type Stats struct {
	Ports []PortStats // in the order given to Open
	// PipelineErrors counts frames the pipeline returned an error for.
	PipelineErrors uint64
	// UnknownEgress counts frames the pipeline sent to a port number that
	// has no interface.
	UnknownEgress uint64
	// UnknownEgressByPort splits UnknownEgress by port number (nil when
	// it is 0).
	UnknownEgressByPort map[uint32]uint64
	// LateWakes counts the times a Group found frames in the Dataplane's
	// rings that no wake-up had told of (group.go).
	LateWakes uint64
}

// Stats returns the current counters. It may be called at any time.
func (d *Dataplane) Stats() Stats {
	s := Stats{PipelineErrors: d.pipelineErrors.Load(), UnknownEgress: d.unknownEgress.Load(), LateWakes: d.lateWakes.Load()}
	d.unknownMu.Lock()
	s.UnknownEgressByPort = maps.Clone(d.unknownByPort)
	d.unknownMu.Unlock()
	for _, p := range d.ports {
		s.Ports = append(s.Ports, PortStats{
			PortSpec: p.spec,
			RxFrames: p.rxFrames.Load(), RxBytes: p.rxBytes.Load(), RxErrors: p.rxErrors.Load(), RxDrops: p.rxDrops(),
			TxFrames: p.txFrames.Load(), TxBytes: p.txBytes.Load(), TxErrors: p.txErrors.Load(),
			LossDrops: p.lossDrops.Load(), QueueDrops: p.queueDrops.Load(), UnsentAtStop: p.unsentAtStop.Load(),
		})
	}
	return s
}

// Close closes the sockets (in parallel: each waits for an RCU grace period)
// and the pcap files. Call it after Run has returned; later calls return the
// first call's result.
func (d *Dataplane) Close() error {
	d.closeOnce.Do(func() {
		var socks []*Socket
		var errs []error
		for _, p := range d.ports {
			if p.sock != nil {
				p.sock.Drops() // the last count, before the socket goes
				socks = append(socks, p.sock)
			}
			errs = append(errs, p.pcapIn.close(), p.pcapOut.close())
		}
		if d.bypass != nil {
			errs = append(errs, d.bypass.close())
		}
		d.closeErr = errors.Join(append(errs, CloseAll(socks))...)
	})
	return d.closeErr
}
