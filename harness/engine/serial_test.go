package engine_test

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/grid-ina/grid/harness/engine"
)

// countPackets sends packets from goroutines goroutines into a switch
// running testdata/split_increment.p4 and returns the register's count.
func countPackets(t *testing.T, cfg engine.Config, goroutines, packets int) uint32 {
	t.Helper()
	prog := compileTestdata(t, "split_increment.p4")
	sw := engine.NewSwitch(prog, cfg)
	frame := make([]byte, 64)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range packets {
				if err := sw.Process(uint32(g), frame, func(engine.Output) {}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	v, err := sw.ReadRegister("total", 0)
	if err != nil {
		t.Fatal(err)
	}
	return binary.BigEndian.Uint32(append(make([]byte, 4-len(v)), v...))
}

// A read-modify-write split over two tables' actions counts every packet
// when the switch takes one packet at a time, as simple_switch does. With
// Serial off, the same run loses thousands of updates on two cores.
func TestSerialSwitchKeepsUpdatesSplitOverActionsAtomic(t *testing.T) {
	const goroutines, packets = 4, 5000
	if got := countPackets(t, engine.Config{Serial: true}, goroutines, packets); got != goroutines*packets {
		t.Errorf("serial switch counted %d packets, want %d", got, goroutines*packets)
	}
}
