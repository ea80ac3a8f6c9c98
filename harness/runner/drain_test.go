package runner

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/controller/controllertest"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/monitor"
	"github.com/grid-ina/grid/harness/topo"
)

func TestDrainWaitsForTheLastQueuedFrameToLeave(t *testing.T) {
	controllertest.NeedFabric(t)
	// 1 Mbit/s links: a 1000-byte frame takes 8 ms, so a burst queues in
	// w1's tbf for a while after the sender is done.
	emulated, err := Emulated(topo.Testbed(), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := fabric.Up(ctx, emulated, fabric.Options{Name: runName()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fabric.Down(st.Run); err != nil {
			t.Error(err)
		}
	})
	fd, err := st.Node("w1").OpenPort(0)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 1000)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5}) // broadcast, local experimental type
	for range 40 {
		if _, err := unix.Write(fd, frame); err != nil && err != unix.ENOBUFS {
			t.Fatal(err)
		}
	}
	unix.Close(fd)
	mon, err := monitor.New(st, monitor.Options{Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	began := time.Now()
	if err := drain(ctx, st, emulated); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	if err := mon.Sample(); err != nil {
		t.Fatal(err)
	}
	atDrain := framesSent(mon.Snapshot())
	time.Sleep(300 * time.Millisecond)
	if err := mon.Sample(); err != nil {
		t.Fatal(err)
	}
	if after := framesSent(mon.Snapshot()); after != atDrain {
		t.Fatalf("drain returned after %v with frames still queued: %d frames left after it, %d more in the next 300 ms", took, atDrain, after-atDrain)
	}
	if atDrain == 0 {
		t.Fatalf("no frame left w1 while drain waited: the burst never queued")
	}
	if quiet, _ := drainTimes(emulated); took < quiet {
		t.Fatalf("drain returned after %v, before the links were quiet for %v", took, quiet)
	}
}

func TestDrainWaitsLongerThanTheLongestLinkDelay(t *testing.T) {
	tp := topo.Testbed()
	tp.Links[0].Delay = 400 * time.Millisecond
	quiet, limit := drainTimes(tp)
	if quiet < 800*time.Millisecond || limit <= quiet {
		t.Fatalf("a 400 ms link: quiet %v, limit %v; want quiet of at least twice the delay and a longer limit", quiet, limit)
	}
}
