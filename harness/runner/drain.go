package runner

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/monitor"
	"github.com/grid-ina/grid/harness/topo"
)

// drainInterval is how often drain reads the links' counters, drainQuiet
// the least time no link may carry a frame before the fabric counts as
// drained.
const (
	drainInterval = 25 * time.Millisecond
	drainQuiet    = 150 * time.Millisecond
)

// drain waits until no link of the run carries a frame. Plans run one after
// another on one fabric and reuse the job's ids and fragment ids, so a
// frame still queued from one plan (a resend, a result in a slow link's
// queue, a frame a switch holds for its link's delay) would otherwise reach
// the next plan's switches and PS as a contribution of the wrong plan. It
// gives up after twice the longest time a frame can take to cross the
// fabric, plus a second, and says so: the next plan may then see strays.
func drain(ctx context.Context, st *fabric.State, emulated *topo.Topology) error {
	quiet, limit := drainTimes(emulated)
	mon, err := monitor.New(st, monitor.Options{Interval: drainInterval, Keep: 2})
	if err != nil {
		return fmt.Errorf("drain the fabric: %w", err)
	}
	defer mon.Close()
	began := time.Now()
	last, lastChange := framesSent(mon.Snapshot()), began
	tick := time.NewTicker(drainInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if err := mon.Sample(); err != nil {
			return fmt.Errorf("drain the fabric: %w", err)
		}
		now := time.Now()
		if n := framesSent(mon.Snapshot()); n != last {
			last, lastChange = n, now
		}
		switch {
		case now.Sub(lastChange) >= quiet:
			slog.Debug("fabric drained", "run", st.Run, "took", now.Sub(began).Round(time.Millisecond))
			return nil
		case now.Sub(began) >= limit:
			slog.Warn("the fabric still carries frames of the previous plan; the next plan may see strays", "run", st.Run, "waited", limit)
			return nil
		}
	}
}

// drainTimes are how long the links must be quiet (longer than a switch
// holds a frame for its link's delay) and how long drain waits at most.
func drainTimes(emulated *topo.Topology) (quiet, limit time.Duration) {
	var delay, path time.Duration
	for _, l := range emulated.Links {
		delay = max(delay, l.Delay)
		path += l.Delay
	}
	quiet = max(drainQuiet, 2*delay)
	// A frame crosses at most every link once, waiting at most a full queue
	// on each of a handful of them: bound by the sum of delays and queues.
	limit = 2*(path+4*QueueWait(emulated)) + time.Second
	return quiet, limit
}

func framesSent(s monitor.Snapshot) uint64 {
	var n uint64
	for _, l := range s.Links {
		n += l.AB.Sent.Packets + l.BA.Sent.Packets
	}
	return n
}
