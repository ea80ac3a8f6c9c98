package dataplane

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grid-ina/grid/harness/engine"
)

// DefaultQueueDepth is the packets an egress queue holds, simple_switch's
// default (its egress buffers' capacity).
const DefaultQueueDepth = 64

// MaxPriorityQueues is the most queues a port can have
// (simple_switch's --priority-queues).
const MaxPriorityQueues = 8

// Queues is the egress queue model of a switch (engine.Queues): each port
// has PriorityQueues queues of Depth packets that drain at the port's
// rate: its link's bits per second (PortSpec.Rate) and at most RatePPS
// packets per second (set_queue_rate), whichever is slower. A port with
// neither drains at once, as simple_switch's queues do with no rate set and
// nothing holding back its transmit threads: its packets find the queue
// empty. The queue of a higher standard_metadata.priority is served first
// (strictly), and its qid is PriorityQueues-1-priority, as in simple_switch.
//
// The model is a schedule: a packet is dequeued when the packets ahead of
// it (in its own queue and those of higher priority) have left at the
// port's rate, and its frame leaves then (engine.Output.Wait). Because
// the engine runs egress at once, the depth a packet leaves behind
// (deq_qdepth) is estimated as the depth it found: in a queue that neither
// grows nor shrinks, as many packets arrive while one waits as were ahead
// of it.
type Queues struct {
	// limited is set once any port has a rate: until then every queue
	// drains at once and Enqueue takes no lock.
	limited    atomic.Bool
	mu         sync.Mutex
	priorities int
	ports      map[uint32]*portQueues
	rates      map[uint32]float64 // link rates by port, from PortSpec.Rate
	// defaults for ports not set one by one (set_queue_rate without a port)
	depth   int
	ratePPS float64
}

// portQueues are the queues of one port.
type portQueues struct {
	depth   int
	ratePPS float64 // 0: no limit
	rateBPS float64 // link bits per second; 0: no limit
	// leave[q] are the dequeue times of the packets of queue q not yet
	// dequeued, in order; free[q] is when queue q's next packet can start.
	leave [][]time.Time
	free  []time.Time
}

// NewQueues makes the queue model of ports with priorities queues each
// (1 to MaxPriorityQueues).
func NewQueues(ports []PortSpec, priorities int) (*Queues, error) {
	if priorities < 1 || priorities > MaxPriorityQueues {
		return nil, fmt.Errorf("priority queues: %d, want 1 to %d", priorities, MaxPriorityQueues)
	}
	q := &Queues{priorities: priorities, ports: map[uint32]*portQueues{}, rates: map[uint32]float64{}, depth: DefaultQueueDepth}
	for _, p := range ports {
		if p.Rate < 0 {
			return nil, fmt.Errorf("port %s: rate %v is negative", p, p.Rate)
		}
		q.rates[p.Port] = p.Rate
		if p.Rate > 0 {
			q.limited.Store(true)
		}
	}
	return q, nil
}

func (q *Queues) port(port uint32) *portQueues {
	pq := q.ports[port]
	if pq == nil {
		pq = &portQueues{depth: q.depth, ratePPS: q.ratePPS, rateBPS: q.rates[port],
			leave: make([][]time.Time, q.priorities), free: make([]time.Time, q.priorities)}
		q.ports[port] = pq
	}
	return pq
}

// SetRate limits the queues of port (all ports when all is set, also those
// that come later) to pps packets per second; 0 lifts the limit. It is
// simple_switch_CLI's set_queue_rate.
func (q *Queues) SetRate(port uint32, all bool, pps float64) error {
	if pps < 0 || math.IsNaN(pps) || math.IsInf(pps, 0) {
		return fmt.Errorf("queue rate %v: want packets per second, 0 or more", pps)
	}
	q.set(port, all, func() { q.ratePPS = pps }, func(pq *portQueues) { pq.ratePPS = pps })
	if pps > 0 {
		q.limited.Store(true)
	}
	return nil
}

// SetDepth sets how many packets each queue of port (all ports when all
// is set) holds: simple_switch_CLI's set_queue_depth.
func (q *Queues) SetDepth(port uint32, all bool, depth int) error {
	if depth < 1 {
		return fmt.Errorf("queue depth %d: want 1 packet or more", depth)
	}
	q.set(port, all, func() { q.depth = depth }, func(pq *portQueues) { pq.depth = depth })
	return nil
}

// set applies a setting to one port, or to the default and every port.
func (q *Queues) set(port uint32, all bool, setDefault func(), setPort func(*portQueues)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !all {
		setPort(q.port(port))
		return
	}
	setDefault()
	for _, pq := range q.ports {
		setPort(pq)
	}
}

// Enqueue implements engine.Queues.
func (q *Queues) Enqueue(port uint32, priority uint8, size int, clock func() time.Time) (engine.QueueState, bool) {
	if int(priority) >= q.priorities {
		return engine.QueueState{}, false
	}
	if !q.limited.Load() {
		return engine.QueueState{QID: uint8(q.priorities - 1 - int(priority))}, true
	}
	now := clock()
	q.mu.Lock()
	defer q.mu.Unlock()
	pq := q.port(port)
	qid := q.priorities - 1 - int(priority)
	st := engine.QueueState{QID: uint8(qid)}
	depth := 0
	for i := range pq.leave {
		// Packets dequeued by now are gone.
		n := 0
		for n < len(pq.leave[i]) && !pq.leave[i][n].After(now) {
			n++
		}
		pq.leave[i] = pq.leave[i][n:]
		depth += len(pq.leave[i])
	}
	st.EnqDepth, st.DeqDepth = uint32(depth), uint32(depth)
	service := pq.service(size)
	if service == 0 {
		return st, true
	}
	if len(pq.leave[qid]) >= pq.depth {
		return engine.QueueState{}, false
	}
	// Strict priority: a packet starts once its own queue's earlier
	// packets are out; it holds up the lower-priority queues (higher qid)
	// for its own service time.
	start := now
	if pq.free[qid].After(start) {
		start = pq.free[qid]
	}
	pq.leave[qid] = append(pq.leave[qid], start)
	pq.free[qid] = start.Add(service)
	for lower := qid + 1; lower < len(pq.free); lower++ {
		base := pq.free[lower]
		if now.After(base) {
			base = now
		}
		pq.free[lower] = base.Add(service)
	}
	st.Wait = start.Sub(now)
	return st, true
}

// service is how long the port takes to send a packet of size bytes; 0
// when nothing limits it.
func (pq *portQueues) service(size int) time.Duration {
	var d time.Duration
	if pq.ratePPS > 0 {
		d = time.Duration(float64(time.Second) / pq.ratePPS)
	}
	if pq.rateBPS > 0 {
		if b := time.Duration(float64(size*8) / pq.rateBPS * float64(time.Second)); b > d {
			d = b
		}
	}
	return d
}
