package engine_test

import (
	"sync"
	"testing"

	"github.com/grid-ina/grid/harness/engine"
)

// Counters read, written and reset by the control plane while packets
// count into them from several goroutines end up exact, on a serial
// switch (where packets count without atomic operations) as on a parallel
// one.
func TestCountersStayExactWhileTheControlPlaneReadsAndWritesThem(t *testing.T) {
	prog := compileTestdata(t, "counted.p4")
	for _, serial := range []bool{true, false} {
		sw := engine.NewSwitch(prog, engine.Config{Serial: serial})
		h, err := sw.AddEntry("I.t", engine.Entry{Match: []engine.Match{engine.Exact([]byte{7})}, Action: "I.send"})
		if err != nil {
			t.Fatal(err)
		}
		const goroutines, packets = 4, 2000
		frame := []byte{7, 0, 0, 0}
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for range packets {
					if err := sw.Process(uint32(g), frame, func(engine.Output) {}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		// Meanwhile: reads everywhere, writes and resets where no packet
		// counts (port 5, and counter cells no goroutine touches).
		wg.Go(func() {
			for i := range 200 {
				if _, err := sw.ReadCounter("I.by_port", i%goroutines); err != nil {
					t.Error(err)
				}
				if _, err := sw.ReadDirectCounter("I.t", h); err != nil {
					t.Error(err)
				}
				if err := sw.WriteCounter("I.by_port", 5, engine.CounterValue{Packets: uint64(i), Bytes: 1}); err != nil {
					t.Error(err)
				}
			}
		})
		wg.Wait()
		for g := range goroutines {
			if v, err := sw.ReadCounter("I.by_port", g); err != nil || v.Packets != packets || v.Bytes != 4*packets {
				t.Errorf("serial %t: by_port[%d] = %+v, %v; want %d packets, %d bytes", serial, g, v, err, packets, 4*packets)
			}
		}
		if v, err := sw.ReadDirectCounter("I.t", h); err != nil || v.Packets != goroutines*packets {
			t.Errorf("serial %t: the entry's counter = %+v, %v; want %d packets", serial, v, err, goroutines*packets)
		}
		if v, _ := sw.ReadCounter("I.by_port", 5); v.Packets != 199 || v.Bytes != 1 {
			t.Errorf("serial %t: by_port[5] = %+v after writes, want the last one written", serial, v)
		}
		if err := sw.ResetCounter("I.by_port"); err != nil {
			t.Fatal(err)
		}
		if v, _ := sw.ReadCounter("I.by_port", 0); v != (engine.CounterValue{}) {
			t.Errorf("serial %t: by_port[0] = %+v after a reset", serial, v)
		}
	}
}

// Each entry's direct counter keeps its own count while other entries
// come and go around it: an exact table's index moves its slots, and the
// counters in them, as it grows and as entries leave.
func TestDirectCountersKeepTheirCountsAsEntriesComeAndGo(t *testing.T) {
	prog := compileTestdata(t, "counted.p4")
	sw := engine.NewSwitch(prog, engine.Config{Serial: true})
	handles := map[byte]engine.EntryHandle{}
	add := func(a byte) {
		h, err := sw.AddEntry("I.t", engine.Entry{Match: []engine.Match{engine.Exact([]byte{a})}, Action: "I.send"})
		if err != nil {
			t.Fatal(err)
		}
		handles[a] = h
	}
	sent := map[byte]uint64{}
	send := func(a byte, n int) {
		for range n {
			if err := sw.Process(0, []byte{a, 0, 0}, func(engine.Output) {}); err != nil {
				t.Fatal(err)
			}
		}
		sent[a] += uint64(n)
	}
	check := func(when string) {
		for a, h := range handles {
			if v, err := sw.ReadDirectCounter("I.t", h); err != nil || v.Packets != sent[a] || v.Bytes != 3*sent[a] {
				t.Fatalf("%s: entry %d counted %+v, %v; want %d packets", when, a, v, err, sent[a])
			}
		}
	}
	for a := range byte(5) {
		add(a)
		send(a, int(a)+1)
	}
	for a := byte(5); a < 200; a++ { // the index grows several times
		add(a)
		send(a, int(a%3))
	}
	check("after the index grew")
	for a := byte(0); a < 200; a += 2 { // slots move back over the freed ones
		if err := sw.DeleteEntry("I.t", handles[a]); err != nil {
			t.Fatal(err)
		}
		delete(handles, a)
		delete(sent, a)
	}
	send(1, 2)
	check("after entries left")
	if err := sw.WriteDirectCounter("I.t", handles[3], engine.CounterValue{Packets: 40, Bytes: 41}); err != nil {
		t.Fatal(err)
	}
	if v, _ := sw.ReadDirectCounter("I.t", handles[3]); v.Packets != 40 || v.Bytes != 41 {
		t.Errorf("entry 3 reads %+v after writing 40 packets, 41 bytes", v)
	}
}
