package p4rt

import (
	"sync"
	"sync/atomic"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/grid-ina/grid/harness/engine"
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
