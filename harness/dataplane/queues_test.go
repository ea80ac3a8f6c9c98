package dataplane

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at is a clock that says t.
func at(t time.Time) func() time.Time { return func() time.Time { return t } }

func TestQueueWithoutARateStaysEmpty(t *testing.T) {
	q, err := NewQueues([]PortSpec{{Port: 1, Interface: "x"}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		st, ok := q.Enqueue(1, 0, 1500, at(t0))
		if !ok || st.EnqDepth != 0 || st.Wait != 0 {
			t.Fatalf("unlimited port: %+v %v", st, ok)
		}
	}
	eight, _ := NewQueues(nil, 8)
	if st, ok := eight.Enqueue(1, 7, 100, at(t0)); !ok || st.QID != 0 || st.Wait != 0 {
		t.Errorf("priority 7 of 8 queues without a rate: %+v %v, want qid 0 at once", st, ok)
	}
	if _, ok := eight.Enqueue(1, 8, 100, at(t0)); ok {
		t.Error("priority 8 of 8 queues accepted without a rate")
	}
}

// A burst into a port limited to 1000 packets/s queues up: the first
// packet is dequeued at once, each later one waits 1 ms more than the one
// before and finds one more ahead, until 64 wait; later the queue has
// drained by the time that passed.
func TestQueueAtARateFillsToItsDepthAndDrains(t *testing.T) {
	q, _ := NewQueues([]PortSpec{{Port: 1, Interface: "x"}}, 1)
	if err := q.SetRate(1, false, 1000); err != nil {
		t.Fatal(err)
	}
	for i := range DefaultQueueDepth + 1 {
		st, ok := q.Enqueue(1, 0, 100, at(t0))
		ahead := uint32(max(i-1, 0))
		if !ok || st.EnqDepth != ahead || st.DeqDepth != ahead || st.Wait != time.Duration(i)*time.Millisecond {
			t.Fatalf("packet %d: %+v %v", i, st, ok)
		}
	}
	if _, ok := q.Enqueue(1, 0, 100, at(t0)); ok {
		t.Error("a packet beyond the 64 waiting fits")
	}
	st, ok := q.Enqueue(1, 0, 100, at(t0.Add(10500*time.Microsecond)))
	if !ok || st.EnqDepth != 54 {
		t.Errorf("after 10.5 ms, 11 of the 65 left and 54 wait: %+v %v", st, ok)
	}
	if _, ok := q.Enqueue(2, 0, 100, at(t0)); !ok {
		t.Error("another port has its own queue")
	}
}

// A port's link rate paces by bytes: 1500-byte frames on 1.2 Mbit/s take
// 10 ms each.
func TestQueueDrainsAtTheLinksBitRate(t *testing.T) {
	q, _ := NewQueues([]PortSpec{{Port: 3, Interface: "x", Rate: 1.2e6}}, 1)
	q.Enqueue(3, 0, 1500, at(t0))
	q.Enqueue(3, 0, 1500, at(t0))
	st, _ := q.Enqueue(3, 0, 1500, at(t0))
	if st.Wait != 20*time.Millisecond || st.EnqDepth != 1 {
		t.Errorf("third frame %+v, want 20 ms behind the one sending and one waiting", st)
	}
	if err := q.SetDepth(3, false, 2); err != nil {
		t.Fatal(err)
	}
	if _, ok := q.Enqueue(3, 0, 1500, at(t0)); ok {
		t.Error("set_queue_depth 2: a third waiting packet fits")
	}
}

// With priority queues the higher priority is served first: it waits only
// for its own queue, and holds up the lower one; qid is N-1-priority.
func TestPriorityQueuesServeTheHigherPriorityFirst(t *testing.T) {
	q, _ := NewQueues(nil, 8)
	q.SetRate(0, true, 1000)
	for range 5 {
		q.Enqueue(1, 0, 100, at(t0))
	}
	hi, ok := q.Enqueue(1, 7, 100, at(t0))
	if !ok || hi.Wait != 0 || hi.QID != 0 || hi.EnqDepth != 4 {
		t.Errorf("priority 7 behind 4 waiting of priority 0: %+v", hi)
	}
	lo, _ := q.Enqueue(1, 0, 100, at(t0))
	if lo.Wait != 6*time.Millisecond || lo.QID != 7 {
		t.Errorf("the next priority-0 packet waits for 5 and the priority-7 one: %+v", lo)
	}
	if _, ok := q.Enqueue(1, 8, 100, at(t0)); ok {
		t.Error("priority 8 of 8 queues is out of range (simple_switch drops it)")
	}
	single, _ := NewQueues(nil, 1)
	if _, ok := single.Enqueue(1, 1, 100, at(t0)); ok {
		t.Error("priority 1 without priority queues is out of range (simple_switch drops it)")
	}
}

func TestQueueSettingsRefuseNonsense(t *testing.T) {
	q, _ := NewQueues(nil, 1)
	if q.SetRate(1, false, -1) == nil || q.SetDepth(1, false, 0) == nil {
		t.Error("a negative rate or an empty queue accepted")
	}
	if _, err := NewQueues(nil, 9); err == nil {
		t.Error("9 priority queues accepted")
	}
}
