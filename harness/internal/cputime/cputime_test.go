package cputime

import (
	"testing"
	"time"
)

func TestUsedGrowsWithWorkAndNotWithSleep(t *testing.T) {
	start := Used()
	x := 0
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
		x++
	}
	busy := Used() - start
	if busy < 10*time.Millisecond {
		t.Fatalf("50 ms of spinning (%d rounds) counted %v of CPU time", x, busy)
	}
	start = Used()
	time.Sleep(100 * time.Millisecond)
	if idle := Used() - start; idle > 50*time.Millisecond {
		t.Fatalf("a 100 ms sleep counted %v of CPU time", idle)
	}
}
