package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Switch is a running instance of a Program with its own tables, registers,
// counters, meters, multicast groups and clone sessions. All methods are
// safe for concurrent use: packets may be processed on several goroutines
// while the control plane updates state.
type Switch struct {
	switchFields
	// A multiple of 64 bytes: allocated at a cache line's start, a
	// switch's first two lines hold what a packet reads.
	_ [(64 - unsafe.Sizeof(switchFields{})%64) % 64]byte
}

type switchFields struct {
	// What every packet reads comes first, in two cache lines: a switch
	// host's many switches leave little of a switch in the CPU's caches
	// from one of its packets to the next.
	prog     *Program
	tables   []table // side by side
	counters []counterArray
	serial   sync.Mutex // held by Process when Config.Serial
	// cfg's DropPort, MaxPasses and Now are set (to their defaults when
	// the Config left them zero); its first 64 bytes are what a packet
	// reads of it.
	cfg Config

	// monotonic says cfg.Now is the default: timestamps then read the
	// monotonic clock only.
	monotonic bool
	start     time.Time // timestamps count microseconds from here, as bmv2's do

	registers []*registerArray
	regLocks  []sync.Mutex // one per register lock group
	meters    []*meterArray
	vsets     []*parseVset
	profiles  []*profile

	cpMu   sync.Mutex // serialises updates of groups and sessions
	groups atomic.Pointer[map[uint16][]Replica]
	clones atomic.Pointer[map[uint32]CloneSession]

	traceMu sync.Mutex
	pktID   atomic.Uint64
}

// CloneSession is a mirroring session: clones go to Port, or, when Group is
// non-zero, are replicated to that multicast group. A non-zero Truncate
// cuts each clone to that many bytes on output (P4Runtime's
// packet_length_bytes).
type CloneSession struct {
	Port     uint32
	Group    uint16
	Truncate int
}

// worker is the per-goroutine state of one Process call: reusable packet
// contexts and the queue of packet instances still to process. The
// switches running one Program share its workers (Program.workers): a
// process hosting many switches of one program then finds a worker's
// packet contexts in the CPU's caches whichever switch a packet is for.
type worker struct {
	free  []*pkt
	queue []job
}

type job struct {
	k       *pkt
	ingress bool
	port    uint32 // ingress or egress port
	passes  int
	wait    time.Duration // in the egress queue (Config.Queues)
}

// NewSwitch creates a switch running prog, with the program's const entries
// and default actions installed.
func NewSwitch(prog *Program, cfg Config) *Switch {
	s := &Switch{switchFields: switchFields{prog: prog, cfg: cfg}}
	if s.cfg.DropPort == 0 {
		s.cfg.DropPort = DefaultDropPort
	}
	if s.cfg.MaxPasses == 0 {
		s.cfg.MaxPasses = 16
	}
	if s.cfg.Now == nil {
		s.cfg.Now, s.monotonic = time.Now, true
	}
	s.start = s.now()
	s.newExternState()
	s.vsets = make([]*parseVset, len(prog.vsets))
	for i := range s.vsets {
		s.vsets[i] = &parseVset{set: map[string]bool{}}
	}
	s.profiles = make([]*profile, len(prog.profiles))
	for i, pd := range prog.profiles {
		s.profiles[i] = newProfile(pd)
	}
	s.tables = make([]table, len(prog.tables))
	for i, td := range prog.tables {
		t := &s.tables[i]
		t.init(td)
		for _, en := range td.entries {
			// validated by Load, which inserted them into a scratch table
			e, _, _ := td.encode(prog, &en)
			_ = t.insert(e)
		}
	}
	groups := map[uint16][]Replica{}
	s.groups.Store(&groups)
	clones := map[uint32]CloneSession{}
	s.clones.Store(&clones)
	return s
}

// Program returns the program the switch runs.
func (s *Switch) Program() *Program { return s.prog }

func (w *worker) get(s *Switch) *pkt {
	if n := len(w.free); n > 0 {
		k := w.free[n-1]
		w.free = w.free[:n-1]
		k.sw = s
		return k
	}
	return newPkt(s.prog, s)
}

// put keeps k for the worker's next packets; it forgets its switch, which
// a pooled worker must not keep alive.
func (w *worker) put(k *pkt) {
	k.sw, k.trv = nil, tracer{}
	w.free = append(w.free, k)
}

// Process runs one frame received on port through the switch and calls emit
// for every packet that leaves, in order. Output.Data is only valid during
// the call of emit. Process allocates nothing in steady state. Calls from
// several goroutines run in parallel unless Config.Serial is set.
func (s *Switch) Process(port uint32, frame []byte, emit func(Output)) error {
	if s.cfg.Ports > 0 && port >= s.cfg.Ports {
		return fmt.Errorf("ingress port %d: the switch has ports 0..%d", port, s.cfg.Ports-1)
	}
	if s.cfg.Serial {
		s.serial.Lock()
		defer s.serial.Unlock()
	}
	w := s.prog.workers.Get().(*worker)
	defer s.prog.workers.Put(w)
	k := w.get(s)
	k.reset()
	// A copy rather than the frame read in place: in the switch host,
	// where the kernel has just written the frame's lines (often on the
	// other CPU), reading in place measured worse per hop; one pass
	// takes the lines together, where the parser and the deparser would
	// each wait for theirs.
	k.buf = append(k.buf[:0], frame...)
	s.startIngress(k, port, InstanceNormal)
	k.lenReg = len(frame)
	w.queue = append(w.queue[:0], job{k: k, ingress: true, port: port})
	for i := 0; i < len(w.queue); i++ {
		j := w.queue[i]
		if j.ingress {
			s.ingress(w, j)
		} else {
			s.egress(w, j, emit)
		}
	}
	for i := range w.queue {
		w.queue[i] = job{}
	}
	w.queue = w.queue[:0]
	return nil
}

// startIngress prepares a packet whose bytes are in k.buf for the parser.
func (s *Switch) startIngress(k *pkt, port uint32, inst InstanceType) {
	p := s.prog
	k.inLen = len(k.buf)
	k.instance = inst
	k.setU(p.std.ingressPort, uint64(port))
	k.setU(p.std.packetLength, uint64(len(k.buf)))
	k.setU(p.std.instanceType, uint64(inst))
	switch {
	case !p.reads(p.std.ingressTS):
	case p.lazyTS:
		k.lazy |= tsBit
	default:
		k.setU(p.std.ingressTS, s.micros())
	}
	if s.cfg.Trace != nil {
		k.tr = &k.trv
		k.trv.start(s, s.pktID.Add(1))
		k.tr.printf("Processing packet received on port %d (%d bytes, instance type %d)", port, len(k.buf), inst)
	} else {
		k.tr = nil
	}
}

func (s *Switch) ingress(w *worker, j job) {
	p, k := s.prog, j.k
	inLen := k.inLen
	p.parse(k)
	if p.std.parserError >= 0 {
		k.setU(p.std.parserError, uint64(uint32(k.perr)))
	}
	if p.std.checksumError >= 0 && k.cksumErr {
		k.setU(p.std.checksumError, 1)
	}
	k.runControl(p.ingress, "ingress")
	k.exit = false
	if k.failed != "" {
		s.drop(w, k, k.failed)
		return
	}
	egressSpec := uint32(k.getU(p.std.egressSpec))
	var mgid uint16
	if p.std.mcastGrp >= 0 {
		mgid = uint16(k.getU(p.std.mcastGrp))
	}
	if k.cloneSess != 0 {
		sess, list := uint32(k.cloneSess-1), k.cloneList
		k.cloneSess, k.cloneList = 0, 0
		if cs, ok := (*s.clones.Load())[sess]; ok {
			c := w.get(s)
			c.reset()
			c.buf = append(c.buf[:0], k.buf...)
			c.inLen, c.lenReg, c.instance = inLen, inLen, InstanceIngressClone
			c.inheritTrace(k)
			c.setU(p.std.ingressPort, uint64(j.port))
			p.parse(c)
			c.resetMetadata()
			c.copyFields(k, p.fieldLists[int(list)])
			c.setU(p.std.instanceType, uint64(InstanceIngressClone))
			if k.tr != nil {
				k.tr.printf("Cloning packet at ingress to session %d", sess)
			}
			s.sendClone(w, c, cs, j.passes)
		} else if k.tr != nil {
			k.tr.printf("Clone session %d is not configured: no clone made", sess)
		}
	}
	if k.learnID != 0 {
		s.sendDigest(k)
	}
	if k.resubmit != 0 {
		list := k.resubmit
		if j.passes+1 > s.cfg.MaxPasses {
			s.drop(w, k, fmt.Sprintf("resubmitted more than %d times", s.cfg.MaxPasses))
			return
		}
		c := w.get(s)
		c.reset()
		c.buf = append(c.buf[:0], k.buf...)
		s.startIngress(c, 0, InstanceResubmit)
		c.resetMetadata()
		c.copyFields(k, p.fieldLists[int(list)])
		c.setU(p.std.instanceType, uint64(InstanceResubmit))
		c.setU(p.std.packetLength, uint64(inLen))
		c.inLen, c.lenReg = inLen, inLen
		if k.tr != nil {
			k.tr.printf("Resubmitting packet")
		}
		w.queue = append(w.queue, job{k: c, ingress: true, port: j.port, passes: j.passes + 1})
		w.put(k)
		return
	}
	if mgid != 0 {
		if k.tr != nil {
			k.tr.printf("Multicast requested for packet, group %d", mgid)
		}
		k.setU(p.std.instanceType, uint64(InstanceReplication))
		s.multicast(w, k, mgid, InstanceReplication, j.passes)
		w.put(k)
		return
	}
	if egressSpec == s.cfg.DropPort {
		s.drop(w, k, "Dropping packet at the end of ingress")
		return
	}
	k.setU(p.std.instanceType, uint64(InstanceNormal))
	k.instance = InstanceNormal
	s.enqueue(w, k, egressSpec, j.passes)
}

func (s *Switch) drop(w *worker, k *pkt, why string) {
	if k.tr != nil {
		k.tr.printf("%s", why)
	}
	w.put(k)
}

func (s *Switch) sendClone(w *worker, c *pkt, cs CloneSession, passes int) {
	if cs.Truncate > 0 && (c.truncLen == 0 || cs.Truncate < c.truncLen) {
		c.truncLen = cs.Truncate
	}
	if cs.Group != 0 {
		s.multicast(w, c, cs.Group, c.instance, passes)
		w.put(c)
		return
	}
	s.enqueue(w, c, cs.Port, passes)
}

// multicast enqueues one copy of k per replica of group mgid.
func (s *Switch) multicast(w *worker, k *pkt, mgid uint16, inst InstanceType, passes int) {
	replicas := (*s.groups.Load())[mgid]
	if len(replicas) == 0 && k.tr != nil {
		k.tr.printf("Multicast group %d has no replicas: packet dropped", mgid)
	}
	for _, r := range replicas {
		if s.prog.std.egressRid >= 0 {
			k.setU(s.prog.std.egressRid, uint64(r.Rid))
		}
		c := w.get(s)
		c.copyFrom(k)
		c.inheritTrace(k)
		c.instance = inst
		if k.tr != nil {
			k.tr.printf("Replicating packet on port %d (rid %d)", r.Port, r.Rid)
		}
		s.enqueue(w, c, r.Port, passes)
	}
}

// now reads the switch's clock.
func (s *Switch) now() time.Time { return s.cfg.Now() }

// micros is the time since the switch started, in microseconds.
func (s *Switch) micros() uint64 {
	if s.monotonic {
		// The same as below, but time.Since reads only the monotonic
		// clock, where time.Now reads the wall clock too.
		return uint64(time.Since(s.start).Microseconds())
	}
	return uint64(s.now().Sub(s.start).Microseconds())
}

func (s *Switch) enqueue(w *worker, k *pkt, port uint32, passes int) {
	p := s.prog
	k.settleTS()
	if p.reads(p.std.enqTS) {
		k.setU(p.std.enqTS, s.micros())
	}
	if k.tr != nil {
		k.tr.printf("Egress port is %d", port)
	}
	var wait time.Duration
	if q := s.cfg.Queues; q != nil {
		var prio uint8
		if p.std.priority >= 0 {
			prio = uint8(k.getU(p.std.priority))
		}
		st, ok := q.Enqueue(port, prio, k.lenReg, s.cfg.Now)
		if !ok {
			s.drop(w, k, fmt.Sprintf("Egress queue of port %d (priority %d) has no room: packet dropped", port, prio))
			return
		}
		s.setQueueing(k, st)
		wait = st.Wait
	}
	w.queue = append(w.queue, job{k: k, port: port, passes: passes, wait: wait})
}

// setQueueing fills the queueing metadata the program declares.
func (s *Switch) setQueueing(k *pkt, st QueueState) {
	std := &s.prog.std
	if std.enqQdepth >= 0 {
		k.setU(std.enqQdepth, uint64(st.EnqDepth))
	}
	if std.deqQdepth >= 0 {
		k.setU(std.deqQdepth, uint64(st.DeqDepth))
	}
	if std.deqTimedelta >= 0 {
		k.setU(std.deqTimedelta, uint64(st.Wait.Microseconds()))
	}
	if std.qid >= 0 {
		k.setU(std.qid, uint64(st.QID))
	}
}

func (s *Switch) egress(w *worker, j job, emit func(Output)) {
	p, k := s.prog, j.k
	if s.cfg.Ports > 0 && j.port >= s.cfg.Ports {
		s.drop(w, k, fmt.Sprintf("egress port %d does not exist: packet dropped", j.port))
		return
	}
	if p.reads(p.std.egressTS) {
		k.setU(p.std.egressTS, s.micros())
	}
	k.setU(p.std.egressPort, uint64(j.port))
	k.setU(p.std.egressSpec, uint64(s.cfg.DropPort+1))
	k.setU(p.std.packetLength, uint64(k.lenReg))
	k.runControl(p.egress, "egress")
	k.exit = false
	if k.failed != "" {
		s.drop(w, k, k.failed)
		return
	}
	if k.cloneSess != 0 {
		sess, list := uint32(k.cloneSess-1), k.cloneList
		k.cloneSess, k.cloneList = 0, 0
		if cs, ok := (*s.clones.Load())[sess]; ok {
			c := w.get(s)
			c.copyFrom(k)
			c.resetMetadata()
			c.copyFields(k, p.fieldLists[int(list)])
			c.setU(p.std.instanceType, uint64(InstanceEgressClone))
			c.inheritTrace(k)
			c.instance = InstanceEgressClone
			if k.tr != nil {
				k.tr.printf("Cloning packet at egress to session %d", sess)
			}
			s.sendClone(w, c, cs, j.passes)
		} else if k.tr != nil {
			k.tr.printf("Clone session %d is not configured: no clone made", sess)
		}
	}
	if uint32(k.getU(p.std.egressSpec)) == s.cfg.DropPort {
		s.drop(w, k, "Dropping packet at the end of egress")
		return
	}
	out := p.deparse(k)
	if k.recirculate != 0 {
		list := k.recirculate
		if j.passes+1 > s.cfg.MaxPasses {
			s.drop(w, k, fmt.Sprintf("recirculated more than %d times", s.cfg.MaxPasses))
			return
		}
		c := w.get(s)
		c.reset()
		c.buf = append(c.buf[:0], out...)
		s.startIngress(c, 0, InstanceRecirculated)
		c.resetMetadata()
		c.copyFields(k, p.fieldLists[int(list)])
		c.setU(p.std.instanceType, uint64(InstanceRecirculated))
		c.setU(p.std.packetLength, uint64(len(out)))
		c.lenReg = len(out)
		if k.tr != nil {
			k.tr.printf("Recirculating packet")
		}
		w.queue = append(w.queue, job{k: c, ingress: true, passes: j.passes + 1})
		w.put(k)
		return
	}
	if k.tr != nil {
		k.tr.printf("Transmitting packet of size %d out of port %d", len(out), j.port)
	}
	emit(Output{Port: j.port, Data: out, Instance: k.instance, Wait: j.wait})
	w.put(k)
}

// runControl runs a pipeline from node n until it ends or exit is called.
func (k *pkt) runControl(n *node, name string) {
	if k.tr != nil {
		k.tr.printf("Pipeline '%s': start", name)
	}
	for n != nil && !k.exit {
		if k.lazy&n.needs != 0 {
			k.materialize(n.needs)
		}
		if n.table >= 0 {
			n = k.sw.tables[n.table].apply(k, k.prog.tables[n.table])
			continue
		}
		ok := n.cond(k)
		if k.tr != nil {
			k.tr.printf("Condition '%s' is %t", n.name, ok)
		}
		if ok {
			n = n.t
		} else {
			n = n.f
		}
	}
	if k.tr != nil {
		k.tr.printf("Pipeline '%s': end", name)
	}
}

// trace writes a trace line when tracing is on.
func (k *pkt) trace(format string, args ...any) {
	if k.tr != nil {
		k.tr.printf(format, args...)
	}
}

// tracer writes bmv2 --log-console style lines for one packet.
type tracer struct {
	s  *Switch
	id uint64
}

func (t *tracer) start(s *Switch, id uint64) { t.s, t.id = s, id }

func (t *tracer) printf(format string, args ...any) {
	t.s.traceMu.Lock()
	defer t.s.traceMu.Unlock()
	fmt.Fprintf(t.s.cfg.Trace, "[%d] "+format+"\n", append([]any{t.id}, args...)...)
}

func (t *tracer) hex(b []byte) string {
	if len(b) == 0 {
		return "(empty)"
	}
	return fmt.Sprintf("0x%x", b)
}

func (t *tracer) args(data [][]byte) string {
	out := ""
	for i, d := range data {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprintf("%x", d)
	}
	return out
}

// inheritTrace makes a copy of k trace under k's packet id.
func (k *pkt) inheritTrace(o *pkt) {
	if o.tr == nil {
		k.tr = nil
		return
	}
	k.trv = o.trv
	k.tr = &k.trv
}
