package dataplane_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/dataplane/nstest"
	"github.com/grid-ina/grid/harness/internal/cputime"
)

// BenchmarkForwarding measures frames per second forwarded from one veth to
// another, by the dataplane with a trivial pipeline (port 0 to port 1) and,
// for comparison, by a Linux bridge doing the same in the kernel. The sender
// keeps at most window frames in flight, so nothing is lost to full queues
// and the rate is the forwarder's, not the sender's.
//
//	go test -run '^$' -bench Forwarding ./harness/dataplane
func BenchmarkForwarding(b *testing.B) {
	n := nstest.New(b)
	// The dataplane's link: da0 -> port 0 (sa0), port 1 (sa1) -> da1.
	n.Veth("sa0", "da0")
	n.Veth("sa1", "da1")
	dp := openDP(b, n, []dataplane.PortSpec{{Port: 0, Interface: "sa0"}, {Port: 1, Interface: "sa1"}}, dataplane.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- dp.Run(ctx, to(1)) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
	// The bridge's link: db0 -> sb0 = br0 = sb1 -> db1.
	n.Veth("sb0", "db0")
	n.Veth("sb1", "db1")
	bridge(b, n, "br0", "sb0", "sb1")

	for _, size := range []int{64, 1514} {
		for _, fwd := range []struct{ name, in, out string }{
			{"dataplane", "da0", "da1"},
			{"linux-bridge", "db0", "db1"},
		} {
			in, out := n.Socket(fwd.in), n.Socket(fwd.out)
			b.Run(fmt.Sprintf("%s/%dB", fwd.name, size), func(b *testing.B) { forward(b, in, out, size) })
		}
	}
}

func bridge(b *testing.B, n *nstest.Net, name string, ports ...string) {
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}
	if err := n.Netlink().LinkAdd(br); err != nil {
		b.Fatalf("add bridge: %v", err)
	}
	for _, p := range ports {
		l, err := n.Netlink().LinkByName(p)
		if err == nil {
			err = n.Netlink().LinkSetMaster(l, br)
		}
		if err != nil {
			b.Fatalf("enslave %s: %v", p, err)
		}
	}
	if err := n.Netlink().LinkSetUp(br); err != nil {
		b.Fatalf("bring up bridge: %v", err)
	}
}

// forward sends b.N frames into in and receives them on out, with at most
// window in flight, and reports the rate and this process's CPU time per
// frame (the sender's, the forwarder's and the receiver's, kernel work in
// their contexts included): the forwarder's cost whatever share of the
// CPU the run got.
func forward(b *testing.B, in, out *dataplane.Socket, size int) {
	const window = 64
	tokens := make(chan struct{}, window)
	for range window {
		tokens <- struct{}{}
	}
	frame := testFrame(0, size)
	b.SetBytes(int64(size))
	b.ResetTimer()
	start, cpu := time.Now(), cputime.Used()
	sendErr := make(chan error, 1)
	go func() {
		for range b.N {
			<-tokens
			if err := in.Send(frame); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- nil
	}()
	received := 0
	out.SetReadDeadline(time.Now().Add(30 * time.Second))
	for received < b.N {
		if _, err := out.Recv(); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			b.Fatal(err)
		}
		received++
		tokens <- struct{}{}
	}
	elapsed, cpu := time.Since(start), cputime.Used()-cpu
	b.StopTimer()
	out.SetReadDeadline(time.Time{})
	if received < b.N {
		// A lost frame holds its token: the sender stalls and the
		// deadline ended the run.
		b.Fatalf("%d of %d frames arrived", received, b.N)
	}
	if err := <-sendErr; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "frames/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/frame")
}
