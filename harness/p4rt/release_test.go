package p4rt

import (
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

func releases() int {
	release.Lock()
	defer release.Unlock()
	return release.runs
}

// waitRelease waits until the release count passes before, or 5 s.
func waitRelease(before int) {
	for deadline := time.Now().Add(5 * time.Second); releases() == before && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}

// A pipeline that replaces another leaves the old one's memory to be
// released; a first pipeline replaces nothing.
func TestAReplacedPipelineIsReleasedAndAFirstOneReleasesNothing(t *testing.T) {
	f := newFixture(t)
	f.primary(1)
	before := releases()
	f.setPipeline(1, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT)
	time.Sleep(2 * releaseQuiet)
	if got := releases(); got != before {
		t.Fatalf("a first pipeline released memory %d times", got-before)
	}
	f.setPipeline(1, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT)
	waitRelease(before)
	if releases() == before {
		t.Errorf("a replaced pipeline's memory was not released within 5 s")
	}
}

// Replacements in a burst, as when a fabric's switches are all given a new
// pipeline, release memory once, when they stop.
func TestABurstOfReplacementsReleasesMemoryOnce(t *testing.T) {
	before := releases()
	for range 80 {
		releaseReplaced()
	}
	waitRelease(before)
	time.Sleep(2 * releaseQuiet)
	if got := releases() - before; got != 1 {
		t.Errorf("80 replacements in a row released memory %d times, want once", got)
	}
}
