package runner

import (
	"math/bits"
	"time"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/endpoint"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/topo"
)

// The endpoints' timeouts follow from the work a plan asks of the emulated
// network, so a large topology gets the time it needs and a small one
// fails fast. The unit is the packet-hop: one packet crossing one link.
// Explicit Config values win.
const (
	// forwardingBudget is the packet-hops per second the emulation is
	// assumed to manage at worst: a fifth of what a k=8 fabric forwarded on
	// 2 cores shared with other work (issue 10), so a busy machine still
	// meets the deadline.
	forwardingBudget = 5000
	// deadlineBase covers what does not grow with the work: the first
	// round trips, scheduling, lingering, reports.
	deadlineBase = 20 * time.Second
	// startBase and startPerEndpoint bound how long a worker waits for the
	// start signal, while the runner launches the others: about what one
	// process per endpoint needs at worst.
	startBase        = 20 * time.Second
	startPerEndpoint = 150 * time.Millisecond
	// minInitialTimeout and maxInitialTimeout bound the derived initial
	// retransmission timeout (RFC 6298 starts at a second).
	minInitialTimeout = 100 * time.Millisecond
	maxInitialTimeout = time.Second
)

// work is what a plan's jobs ask of the emulated network.
type work struct {
	// packetHops counts every fragment's way to the PS and its result's
	// way back to each worker, without aggregation (an upper bound).
	packetHops float64
	// firstWindow is the packet-hops of every worker's initial window and
	// its results: what the first round trip waits for.
	firstWindow float64
	// psSeconds is the time the busiest PS link needs for every worker's
	// fragments at its rate (0 when unlimited).
	psSeconds float64
	// pathSeconds is the longest time one fragment takes from a worker
	// to its PS and its result back, at the links' rates with no queues.
	pathSeconds float64
	endpoints   int
}

// planWork estimates the work of d's jobs on t, each worker sending
// fragments packets of values values with an initial window of window.
func planWork(t *topo.Topology, d *aggregator.Deployment, fragments, values, window int) work {
	var w work
	bits := frameBits(values)
	for _, jd := range d.Jobs {
		hops, secs := pathsFrom(t, jd.PS, bits)
		w.endpoints += 1 + len(jd.Workers)
		for _, h := range jd.Workers {
			w.pathSeconds = max(w.pathSeconds, 2*secs[h])
			// Off the shortest path GRID may take a detour; two extra
			// links cover one.
			n := float64(hops[h] + 2)
			w.packetHops += 2 * n * float64(fragments)
			w.firstWindow += 2 * n * float64(min(window, fragments))
		}
		if rate := hostRate(t, jd.PS); rate > 0 {
			w.psSeconds = max(w.psSeconds, float64(len(jd.Workers)*fragments)*bits/rate)
		}
	}
	return w
}

// deadline is how long the endpoints may run once started: the base, the
// packet-hops at the worst forwarding rate, and twice the PS links' time.
func (w work) deadline() time.Duration {
	return deadlineBase + seconds(w.packetHops/forwardingBudget+2*w.psSeconds)
}

// startWait is how long a worker waits for the start signal.
func (w work) startWait() time.Duration {
	return startBase + time.Duration(w.endpoints)*startPerEndpoint
}

// initialTimeout is the retransmission timeout before any round trip is
// measured: the time the first windows take at the worst forwarding rate,
// within [minInitialTimeout, maxInitialTimeout].
func (w work) initialTimeout() time.Duration {
	return min(max(seconds(w.firstWindow/forwardingBudget), minInitialTimeout), maxInitialTimeout)
}

// minTimeout is the floor of the workers' retransmission timeouts: twice
// the round trip of a fragment through the links at their rates. A round
// trip measured below it went through a token bucket's burst, not through
// the path as it runs once the buckets are empty, and a timeout derived
// from it fires for every fragment still queued. It is at least
// schedulerStall: a run shares the machine's cores among its switches and
// endpoints, and a result held up that long by the scheduler is no loss.
func (w work) minTimeout() time.Duration {
	return max(seconds(2*w.pathSeconds), schedulerStall)
}

// schedulerStall is the longest the scheduler may hold up a run's switch or
// endpoint process on a loaded 2-core machine: the testbed at 2e-5, with
// timeouts of twice its 11 ms round trips, timed whole windows out twice
// per worker (1.7% of its fragments resent).
const schedulerStall = 50 * time.Millisecond

// frameBits is the size of a fragment's frame with values values, in bits.
func frameBits(values int) float64 {
	return float64(8 * (gradproto.FrameOverhead + gradproto.HeaderLen + 4*values))
}

// maxTimeout is the cap of the workers' retransmission timeouts: twice the
// longest a fragment can honestly take there and back, through the links
// at their rates and one full queue (queueWait), and at least the spec's
// default. A timeout estimated above it measured other workers' recovery,
// not the network (gradproto.RTO.Timeout).
func (w work) maxTimeout(queueWait time.Duration) time.Duration {
	return max(endpoint.DefaultMaxTimeout, 2*(queueWait+seconds(w.pathSeconds)))
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// pathsFrom is every node's distance in links from node from, and the
// time a frame of frameBits takes over those links at their rates
// (unlimited links take none), along one shortest path.
func pathsFrom(t *topo.Topology, from string, frameBits float64) (map[string]int, map[string]float64) {
	type edge struct {
		to   string
		secs float64
	}
	adj := map[string][]edge{}
	for _, l := range t.Links {
		secs := 0.0
		if l.Bandwidth > 0 {
			secs = frameBits / float64(l.Bandwidth)
		}
		adj[l.A.Node] = append(adj[l.A.Node], edge{l.B.Node, secs})
		adj[l.B.Node] = append(adj[l.B.Node], edge{l.A.Node, secs})
	}
	dist := map[string]int{from: 0}
	secs := map[string]float64{from: 0}
	queue := []string{from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, e := range adj[n] {
			if _, seen := dist[e.to]; !seen {
				dist[e.to] = dist[n] + 1
				secs[e.to] = secs[n] + e.secs
				queue = append(queue, e.to)
			}
		}
	}
	return dist, secs
}

// hostRate is the slowest rate of host's links in bits per second, 0 when
// all are unlimited.
func hostRate(t *topo.Topology, host string) float64 {
	rate := 0.0
	for _, l := range t.Links {
		if (l.A.Node == host || l.B.Node == host) && l.Bandwidth > 0 && (rate == 0 || float64(l.Bandwidth) < rate) {
			rate = float64(l.Bandwidth)
		}
	}
	return rate
}

// jobWindow is the window of jd's workers: base, with the initial window and
// the fragments each worker may keep queued (Vegas's α and β) bounded so
// that everything the job's workers queue at once fills at most half of the
// queue of the PS's link. Every worker's window adds to that queue a share
// as large as the streams that reach the PS separately: one per switch
// that aggregates, one per worker whose fragments go to the PS directly
// (Geryon: every worker). Left at Vegas's α = 2 and β = 4 fragments per
// worker, 191 workers sending to one PS would queue 764 frames where the
// link holds 345, and drop fragments that only a timeout recovers; 499
// workers need windows below one fragment.
func jobWindow(base endpoint.Window, t *topo.Topology, d *aggregator.Deployment, jd *aggregator.JobDeployment, values int) endpoint.Window {
	rate := hostRate(t, jd.PS)
	streams := psStreams(d, jd)
	if rate <= 0 || streams == 0 {
		return base
	}
	var mtu int
	for _, l := range t.Links {
		if l.A.Node == jd.PS || l.B.Node == jd.PS {
			mtu = l.EffectiveMTU()
			break
		}
	}
	frames := fabric.QueueDelay(rate, mtu).Seconds() * rate / frameBits(values)
	share := frames / 2 / float64(streams)
	w := base
	w.Beta = min(gradproto.DefaultBeta, share)
	w.Alpha = w.Beta / 2
	w.Initial = min(base.Initial, max(1, int(share)))
	return w
}

// psStreams is how many packets of one fragment reach jd's PS: one per node
// a switch aggregates at, one per worker the PS aggregates itself; the
// most over the plan's classes.
func psStreams(d *aggregator.Deployment, jd *aggregator.JobDeployment) int {
	atSwitch := map[uint16]bool{}
	for _, s := range d.Switches {
		for _, a := range s.Config.Aggregations {
			if a.Job == jd.Plan.Job {
				atSwitch[a.Node] = true
			}
		}
	}
	exp, err := jd.Plan.Expected()
	if err != nil {
		return 0
	}
	most := 0
	for _, class := range exp {
		n := 0
		for node, bitmap := range class {
			if atSwitch[node] {
				n++
			} else {
				n += bits.OnesCount64(bitmap)
			}
		}
		most = max(most, n)
	}
	return most
}
