package p4rt

import (
	"math/big"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/p4c"
)

// Packets flow on several goroutines while the controller inserts and
// deletes routes and finally commits the pipeline anew: every packet either
// misses (dropped) or leaves on the port of a route, and the race detector
// sees no conflict.
func TestProcessDuringWritesIsSafe(t *testing.T) {
	f := newFixture(t)
	f.setup()
	f.mustWrite(update(p4v1.Update_INSERT, tableEntity(f.route(ip(10, 0, 0, 0), 8, 3))))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var forwarded, wrong atomic.Int64
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			frame := ipv4Frame([4]byte{10, byte(g), 0, 1})
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := f.srv.Process(1, frame, func(o engine.Output) {
					if o.Port == 3 || o.Port == 4 {
						forwarded.Add(1)
					} else {
						wrong.Add(1)
					}
				})
				if err != nil {
					wrong.Add(1)
				}
			}
		}()
	}
	for i := range 200 {
		e := f.route(ip(10, byte(i%4), 0, 0), 16, 4)
		f.mustWrite(update(p4v1.Update_INSERT, tableEntity(e)))
		f.mustWrite(update(p4v1.Update_DELETE, tableEntity(e)))
	}
	for range 3 {
		f.setPipeline(1, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT)
	}
	close(stop)
	wg.Wait()
	if wrong.Load() != 0 || forwarded.Load() == 0 {
		t.Fatalf("%d packets forwarded, %d to a wrong port or failed", forwarded.Load(), wrong.Load())
	}
}

// split_increment reads a register in one table's action and writes it back
// in the next: with packets from four ports processed concurrently, the
// count is right only because the server runs packets one at a time, as
// simple_switch's single ingress thread does (GRID's aggregation units
// update their registers the same way).
func TestSplitRegisterUpdateCountsEveryPacketFromConcurrentPorts(t *testing.T) {
	res, err := p4c.Compile(filepath.Join("..", "engine", "testdata", "split_increment.p4"), p4c.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	f.prog = res
	f.setup()
	const ports, packets = 4, 50000
	frame := make([]byte, 64)
	var wg sync.WaitGroup
	start := make(chan struct{}) // all ports begin together, so they overlap
	for port := range ports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range packets {
				if err := f.srv.Process(uint32(port), frame, func(engine.Output) {}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	reg := &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{
		RegisterId: preambleID(t, res.P4Info.Registers, "Ing.total"), Index: &p4v1.Index{Index: 0}}}}
	got := f.read(reg)
	if len(got) != 1 {
		t.Fatalf("read %d register cells, want 1", len(got))
	}
	if n := new(big.Int).SetBytes(got[0].GetRegisterEntry().GetData().GetBitstring()); n.Int64() != ports*packets {
		t.Fatalf("register total counts %d of %d packets: packets were not processed one at a time", n, ports*packets)
	}
}
