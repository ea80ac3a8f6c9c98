package aggregator_test

import (
	"context"
	"encoding/binary"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/controller"
	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/p4rt"
	"github.com/grid-ina/grid/harness/p4rt/client"
)

// TestFragmentsArrivingOnEightPortsAtOnceAllCompleteOnTheP4RuntimeServer
// feeds the fragments of 8 workers from 8 goroutines, one per port, into
// the P4Runtime server's pipeline, as grid switch's data plane does (one
// receiver per port), after loading the aggregator and its entries over
// P4Runtime as the controller and the STF driver do. The workers send the
// same fragment ids at the same time, so packets of one memory unit meet
// on different ports: every fragment must reach the PS with all 8 workers
// counted and exact sums. A read-modify-write of a unit spans many actions;
// simple_switch keeps it whole by running ingress in one thread, and a
// pipeline that ran packets side by side would lose updates here.
func TestFragmentsArrivingOnEightPortsAtOnceAllCompleteOnTheP4RuntimeServer(t *testing.T) {
	const fanIn, values, frags = 8, 32, 4000
	st, err := gradproto.NewStar(1, fanIn, 0, values)
	if err != nil {
		t.Fatal(err)
	}
	setup, err := aggregator.Entries(st.Config)
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := aggregator.Compile(filepath.Join(repo.RootOrFail(t), "p4", "aggregator", "aggregator.p4"), aggregator.Build{Values: values})
	if err != nil {
		t.Fatal(err)
	}
	server := p4rt.NewServer(p4rt.Options{DeviceID: 1})
	g := grpc.NewServer()
	server.Register(g)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(lis)
	defer g.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := client.Dial(ctx, lis.Addr().String(), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.SetPipeline(ctx, compiled.P4Info, compiled.JSON); err != nil {
		t.Fatal(err)
	}
	if err := controller.InstallSetup(ctx, cl, setup); err != nil {
		t.Fatal(err)
	}

	type total struct{ count, packets int }
	var mu sync.Mutex
	sums := make([][values]int64, frags)
	totals := make([]total, frags)
	emit := func(o engine.Output) {
		p, err := gradproto.Parse(o.Data, values)
		if err != nil {
			t.Errorf("port %d: %v", o.Port, err)
			return
		}
		if p.Values == nil || o.Port != gradproto.StarPSPort || p.Frag >= frags {
			return // a collision's control packet to a worker
		}
		mu.Lock()
		defer mu.Unlock()
		totals[p.Frag].count += int(p.Count)
		totals[p.Frag].packets++
		for i, v := range p.Values {
			sums[p.Frag][i] += int64(v)
		}
	}
	var workers sync.WaitGroup
	for m := range fanIn {
		w := gradproto.NewWorker(&st.Plan, m, map[uint32][]int32{0: make([]int32, values)})
		p := w.Originals()[0]
		for i := range p.Values {
			p.Values[i] = int32((m + 1) * (i + 1))
		}
		frame := p.Marshal()
		workers.Go(func() {
			for frag := range uint32(frags) {
				binary.BigEndian.PutUint32(frame[gradproto.FrameOverhead+8:], frag)
				if err := server.Process(uint32(st.WorkerPort(m)), frame, emit); err != nil {
					t.Errorf("worker %d fragment %d: %v", m, frag, err)
					return
				}
			}
		})
	}
	workers.Wait()
	wrong := 0
	for frag, got := range totals {
		ok := got.count == fanIn
		for i := range values {
			// Worker m sends (m+1)*(i+1) as value i.
			ok = ok && sums[frag][i] == int64(fanIn*(fanIn+1)/2*(i+1))
		}
		if !ok {
			if wrong++; wrong <= 5 {
				t.Errorf("fragment %d: %d packet(s) to the PS counting %d workers, value 0 sums to %d; want %d workers, sum %d",
					frag, got.packets, got.count, sums[frag][0], fanIn, fanIn*(fanIn+1)/2)
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d fragments did not complete with exact sums", wrong, frags)
	}
}
