package dataplane_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/dataplane/nstest"
	"github.com/grid-ina/grid/harness/engine"
)

// TestFramesTheReceiverSendsInBatchesLeaveInTheOrderEmittedEvenAroundHeldOnes:
// each received frame becomes copies (more than one batch's worth in
// all, of every size) sent out of one port, some of them held for an
// egress queue's wait; every copy arrives, in the order the pipeline
// emitted them, and the port counts them all.
func TestFramesTheReceiverSendsInBatchesLeaveInTheOrderEmittedEvenAroundHeldOnes(t *testing.T) {
	eachReceiver(t, testFramesTheReceiverSendsInBatchesLeaveInTheOrderEmittedEvenAroundHeldOnes)
}

func testFramesTheReceiverSendsInBatchesLeaveInTheOrderEmittedEvenAroundHeldOnes(t *testing.T, opts dataplane.Options) {
	n := nstest.New(t)
	dp := openTwoPorts(t, n, opts)
	h0, h1 := n.Socket("h0"), n.Socket("h1")
	const copies = 50
	var out uint32
	run(t, dp, dataplane.PipelineFunc(func(_ uint32, frame []byte, emit func(engine.Output)) error {
		for range copies {
			f := testFrame(out, 60+int(out%1400))
			o := engine.Output{Port: 1, Data: f}
			if out%37 == 5 {
				o.Wait = time.Millisecond // held; what follows queues behind it
			}
			emit(o)
			out++
		}
		return nil
	}))
	const frames = 4
	for i := range frames {
		send(t, h0, testFrame(uint32(i), 64))
	}
	got := nstest.Receive(t, h1, frames*copies, 10*time.Second)
	if len(got) != frames*copies {
		t.Fatalf("%d of %d frames arrived", len(got), frames*copies)
	}
	for i, f := range got {
		if seq := binary.BigEndian.Uint32(f[14:]); seq != uint32(i) || len(f) != 60+i%1400 {
			t.Fatalf("frame %d is copy %d of %d bytes, want copy %d of %d", i, seq, len(f), i, 60+i%1400)
		}
	}
	// Counted once the system call that sent them returns, which may be
	// after they arrived.
	eventually(t, dp, "port 1 counts every frame sent", func(st dataplane.Stats) bool {
		return st.Ports[1].TxFrames == frames*copies
	})
}
