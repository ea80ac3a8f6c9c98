package runner

import (
	"time"

	"github.com/grid-ina/grid/harness/aggregator"
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
	endpoints int
}

// planWork estimates the work of d's jobs on t, each worker sending
// fragments packets of values values with an initial window of window.
func planWork(t *topo.Topology, d *aggregator.Deployment, fragments, values, window int) work {
	var w work
	frameBits := float64(8 * (gradproto.FrameOverhead + gradproto.HeaderLen + 4*values))
	for _, jd := range d.Jobs {
		hops := hopsFrom(t, jd.PS)
		w.endpoints += 1 + len(jd.Workers)
		for _, h := range jd.Workers {
			// Off the shortest path GRID may take a detour; two extra
			// links cover one.
			n := float64(hops[h] + 2)
			w.packetHops += 2 * n * float64(fragments)
			w.firstWindow += 2 * n * float64(min(window, fragments))
		}
		if rate := hostRate(t, jd.PS); rate > 0 {
			w.psSeconds = max(w.psSeconds, float64(len(jd.Workers)*fragments)*frameBits/rate)
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

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// hopsFrom is every node's distance in links from node from.
func hopsFrom(t *topo.Topology, from string) map[string]int {
	adj := map[string][]string{}
	for _, l := range t.Links {
		adj[l.A.Node] = append(adj[l.A.Node], l.B.Node)
		adj[l.B.Node] = append(adj[l.B.Node], l.A.Node)
	}
	dist := map[string]int{from: 0}
	queue := []string{from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range adj[n] {
			if _, seen := dist[m]; !seen {
				dist[m] = dist[n] + 1
				queue = append(queue, m)
			}
		}
	}
	return dist
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
