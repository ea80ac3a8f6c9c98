package dataplane_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/dataplane/nstest"
	"github.com/grid-ina/grid/harness/engine"
)

// eachReceiver runs test with a Dataplane receiving on its own and with
// one in a Group (closed when the test ends, after the Dataplane).
func eachReceiver(t *testing.T, test func(t *testing.T, opts dataplane.Options)) {
	t.Run("alone", func(t *testing.T) { test(t, dataplane.Options{}) })
	t.Run("group", func(t *testing.T) { test(t, dataplane.Options{Group: newGroup(t, 4)}) })
}

// newGroup starts a group for size dataplanes, closed when the test ends
// (after the dataplanes opened later have stopped).
func newGroup(t *testing.T, size int) *dataplane.Group {
	t.Helper()
	g, err := dataplane.NewGroup(size, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("closing the group: %v", err)
		}
	})
	return g
}

// across forwards a frame from port 0 to port 1 and the other way.
var across = dataplane.PipelineFunc(func(port uint32, frame []byte, emit func(engine.Output)) error {
	emit(engine.Output{Port: 1 - port, Data: frame})
	return nil
})

// linkedPair is two switches of a group, a (ports 0 on a0, 1 on a1) and b
// (0 on b0, 1 on b1), with the veth a1-b1 between them, linked in the
// group; h0 faces a0 and h1 faces b0. Both forward across.
func linkedPair(t *testing.T, n *nstest.Net, opts dataplane.Options) (a, b *dataplane.Dataplane) {
	t.Helper()
	n.Veth("a0", "h0")
	n.Veth("b0", "h1")
	n.Veth("a1", "b1")
	g := newGroup(t, 2)
	opts.Group = g
	a = openDP(t, n, []dataplane.PortSpec{{Port: 0, Interface: "a0"}, {Port: 1, Interface: "a1"}}, opts)
	b = openDP(t, n, []dataplane.PortSpec{{Port: 0, Interface: "b0"}, {Port: 1, Interface: "b1"}}, opts)
	if err := g.Link(a, 1, b, 1); err != nil {
		t.Fatal(err)
	}
	if err := g.Link(a, 1, b, 1); err == nil {
		t.Error("a port linked twice was accepted")
	}
	return a, b
}

// TestLinkedSwitchesOfAGroupForwardEveryFrameInOrderBothWays: frames from
// h0 cross a, the link and b to h1, and back, all of them in order,
// whether the link's frames leave at once or after a delay (sent by the
// port's own sender, which wakes the next switch too).
func TestLinkedSwitchesOfAGroupForwardEveryFrameInOrderBothWays(t *testing.T) {
	for _, delay := range []time.Duration{0, time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			n := nstest.New(t)
			n.Veth("a0", "h0")
			n.Veth("b0", "h1")
			n.Veth("a1", "b1")
			g := newGroup(t, 2)
			a := openDP(t, n, []dataplane.PortSpec{{Port: 0, Interface: "a0"}, {Port: 1, Interface: "a1", Delay: delay}}, dataplane.Options{Group: g})
			b := openDP(t, n, []dataplane.PortSpec{{Port: 0, Interface: "b0"}, {Port: 1, Interface: "b1", Delay: delay}}, dataplane.Options{Group: g})
			if err := g.Link(a, 1, b, 1); err != nil {
				t.Fatal(err)
			}
			h0, h1 := n.Socket("h0"), n.Socket("h1")
			run(t, a, across)
			run(t, b, across)
			const frames = 600 // fewer than a ring holds: none is dropped however slow the switches
			for _, way := range []struct {
				name     string
				from, to *dataplane.Socket
			}{{"h0 to h1", h0, h1}, {"h1 to h0", h1, h0}} {
				var want [][]byte
				for i := range frames {
					f := testFrame(uint32(i), 60+i%500)
					want = append(want, f)
					send(t, way.from, f)
				}
				got := nstest.Receive(t, way.to, frames, 10*time.Second)
				if len(got) != frames {
					t.Fatalf("%s: %d of %d frames arrived", way.name, len(got), frames)
				}
				for i := range want {
					if !bytes.Equal(got[i], want[i]) {
						t.Fatalf("%s: frame %d is %x, want %x", way.name, i, got[i][:18], want[i][:18])
					}
				}
			}
		})
	}
}

// TestALinkedPortWhoseInterfaceWentDownAndUpForwardsAgainAndSaysSo: the
// group takes the kernel's report from a linked port's socket, which rings
// no epoll set, within a second or so.
func TestALinkedPortWhoseInterfaceWentDownAndUpForwardsAgainAndSaysSo(t *testing.T) {
	n := nstest.New(t)
	var log lockedBuffer
	a, b := linkedPair(t, n, dataplane.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	h0, h1 := n.Socket("h0"), n.Socket("h1")
	run(t, a, across)
	run(t, b, across)
	n.LinkDown("a1")
	n.LinkUp("a1")
	forwardsAfterDownAndUp(t, h0, h1)
	waitForDownLog(t, &log, 1, "a1")
}

// TestAGroupFindsFramesOnALinkedPortThatNoSwitchOfItSent: a linked port's
// socket wakes nobody, so frames sent into the link from outside the group
// (here a socket on a1, as a capture tool could) are found by the group's
// sweep, counted as late, and forwarded.
func TestAGroupFindsFramesOnALinkedPortThatNoSwitchOfItSent(t *testing.T) {
	n := nstest.New(t)
	a, b := linkedPair(t, n, dataplane.Options{})
	intruder, h1 := n.Socket("a1"), n.Socket("h1")
	run(t, a, across)
	run(t, b, across)
	const frames = 5
	for i := range frames {
		send(t, intruder, testFrame(uint32(i), 64))
		time.Sleep(5 * time.Millisecond) // each its own sweep, mostly
	}
	if got := nstest.Receive(t, h1, frames, 5*time.Second); len(got) != frames {
		t.Fatalf("%d of the %d frames sent into the link reached h1", len(got), frames)
	}
	if late := b.Stats().LateWakes; late == 0 {
		t.Error("b found the frames no switch of its group sent without counting a late wake-up")
	}
}

// TestAGroupsCloseReleasesItsDescriptors (its dataplanes' are
// TestRunStopsWhenCancelledAndCloseReleasesEverything's).
func TestAGroupsCloseReleasesItsDescriptors(t *testing.T) {
	before := openFDs(t)
	g, err := dataplane.NewGroup(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d file descriptors open before the group, %d after its Close", before, after)
	}
}

// TestAGroupRefusesMoreDataplanesThanItsSize: of two Runs in a group made
// for one, one returns an error at once and the other runs until stopped.
func TestAGroupRefusesMoreDataplanesThanItsSize(t *testing.T) {
	g := newGroup(t, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 2)
	for range 2 {
		dp, err := dataplane.Open(nil, dataplane.Options{Group: g})
		if err != nil {
			t.Fatal(err)
		}
		defer dp.Close()
		go func() { done <- dp.Run(ctx, to()) }()
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "the group holds 1 dataplanes already") {
			t.Errorf("the Run that did not fit returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("neither Run returned although the group holds one dataplane")
	}
	select {
	case err := <-done:
		t.Fatalf("the other Run returned before it was stopped: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("the Run that fit: %v", err)
	}
}

// TestAFloodedSwitchDoesNotStarveTheOthersOfItsGroup: with one worker for
// two switches, one flooded with frames, the other's frame is passed
// through long before the flood is.
func TestAFloodedSwitchDoesNotStarveTheOthersOfItsGroup(t *testing.T) {
	n := nstest.New(t)
	n.Veth("a0", "h0")
	n.Veth("b0", "h1")
	g, err := dataplane.NewGroup(2, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	a := openDP(t, n, []dataplane.PortSpec{{Port: 0, Interface: "a0"}}, dataplane.Options{Group: g})
	b := openDP(t, n, []dataplane.PortSpec{{Port: 0, Interface: "b0"}}, dataplane.Options{Group: g})
	h0, h1 := n.Socket("h0"), n.Socket("h1")
	release := make(chan struct{})
	var flooded atomic.Int64
	run(t, a, dataplane.PipelineFunc(func(uint32, []byte, func(engine.Output)) error {
		if flooded.Add(1) == 1 {
			<-release // hold the only worker until both switches have their frames waiting
		}
		return nil
	}))
	seen := make(chan int64, 1)
	run(t, b, dataplane.PipelineFunc(func(uint32, []byte, func(engine.Output)) error {
		seen <- flooded.Load()
		return nil
	}))
	const flood = 1000 // fewer than a's ring holds
	send(t, h0, testFrame(0, 64))
	eventually(t, a, "a holding its first frame", func(dataplane.Stats) bool { return flooded.Load() == 1 })
	for i := range flood {
		send(t, h0, testFrame(uint32(i+1), 64))
	}
	send(t, h1, testFrame(0, 64))
	time.Sleep(50 * time.Millisecond) // the frames' arrival in the rings
	close(release)
	select {
	case at := <-seen:
		// After at most a few rounds of a's (64 frames each), not after
		// the whole flood; half leaves room for a busy machine.
		if at > flood/2 {
			t.Errorf("b's frame was passed through after %d of a's %d", at, flood+1)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b's frame never reached its pipeline")
	}
}
