package engine_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/engine"
)

// fixedQueues answers every Enqueue with one state, or drops.
type fixedQueues struct {
	st       engine.QueueState
	drop     bool
	port     uint32
	priority uint8
	size     int
}

func (q *fixedQueues) Enqueue(port uint32, priority uint8, size int, _ func() time.Time) (engine.QueueState, bool) {
	q.port, q.priority, q.size = port, priority, size
	return q.st, !q.drop
}

func TestQueueModelFillsTheQueueingMetadataAndTheOutputsWait(t *testing.T) {
	prog := compileTestdata(t, "queueing.p4")
	q := &fixedQueues{st: engine.QueueState{EnqDepth: 12, DeqDepth: 11, Wait: 3500 * time.Microsecond, QID: 5}}
	sw := engine.NewSwitch(prog, engine.Config{Queues: q})
	frame := make([]byte, 17)
	frame[0] = 2 // priority
	var out []engine.Output
	if err := sw.Process(0, frame, func(o engine.Output) {
		out = append(out, engine.Output{Port: o.Port, Data: append([]byte(nil), o.Data...), Wait: o.Wait})
	}); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("%d outputs", len(out))
	}
	d := out[0].Data
	got := [4]uint32{binary.BigEndian.Uint32(d[1:]), binary.BigEndian.Uint32(d[5:]), binary.BigEndian.Uint32(d[9:]), uint32(d[13])}
	if got != [4]uint32{12, 11, 3500, 7} || out[0].Wait != 3500*time.Microsecond {
		t.Errorf("enq_qdepth, deq_qdepth, deq_timedelta, qid = %v, wait %v; want [12 11 3500 7], 3.5ms", got, out[0].Wait)
	}
	if q.port != 1 || q.priority != 2 || q.size != 17 {
		t.Errorf("Enqueue(port %d, priority %d, size %d), want 1, 2, 17", q.port, q.priority, q.size)
	}
	q.drop = true
	out = nil
	sw.Process(0, frame, func(o engine.Output) { out = append(out, o) })
	if len(out) != 0 {
		t.Errorf("a full queue let %d packets through", len(out))
	}
}
