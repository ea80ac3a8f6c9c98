package p4rt

import (
	"runtime/debug"
	"sync"
	"time"
)

// A committed pipeline replaces one whose tables, registers and compiled
// program are garbage from then on: for the aggregator several megabytes a
// switch. Go's collector lets the heap grow to twice what was live at its
// last cycle before it collects, and the moment of a replacement has both
// pipelines live, so a process hosting many switches, each given a new
// pipeline per experiment plan, kept the garbage of several plans: a k=8
// switch host ran at 1.3 GB where 0.5 GB holds it. Once replacements stop
// for releaseQuiet, the process collects and returns the memory to the
// operating system, once for a whole fabric's reload.

// releaseQuiet is how long after the last replacement the memory is
// released.
const releaseQuiet = 200 * time.Millisecond

var release struct {
	sync.Mutex
	timer *time.Timer
	runs  int // releases done, for tests
}

// releaseReplaced schedules the release of a replaced pipeline's memory.
func releaseReplaced() {
	release.Lock()
	defer release.Unlock()
	if release.timer != nil {
		release.timer.Reset(releaseQuiet)
		return
	}
	release.timer = time.AfterFunc(releaseQuiet, func() {
		release.Lock()
		release.timer = nil
		release.runs++
		release.Unlock()
		debug.FreeOSMemory()
	})
}
