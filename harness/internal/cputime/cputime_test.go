package cputime

import (
	"testing"
	"time"
)

func TestUsedGrowsWithWorkAndNotWithSleep(t *testing.T) {
	// Spin until 20 ms of CPU time are counted: on a loaded machine 50 ms
	// of wall time may give this process only a few milliseconds of CPU,
	// so the wall clock bounds the wait, not the work.
	start := Used()
	x := 0
	for deadline := time.Now().Add(10 * time.Second); Used()-start < 20*time.Millisecond; x++ {
		if time.Now().After(deadline) {
			t.Fatalf("10 s of spinning (%d rounds) counted %v of CPU time", x, Used()-start)
		}
	}
	start = Used()
	time.Sleep(100 * time.Millisecond)
	if idle := Used() - start; idle > 50*time.Millisecond {
		t.Fatalf("a 100 ms sleep counted %v of CPU time", idle)
	}
}
