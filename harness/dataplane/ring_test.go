package dataplane_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/dataplane/nstest"
)

// A port's receive ring has slots for frames of its interface's MTU when
// it opens; a longer frame, once the MTU is raised, is counted as an error
// and dropped, and frames that fit go on through.
func TestAFrameLongerThanTheRingsSlotsIsCountedAndTheNextOneForwarded(t *testing.T) {
	n := nstest.New(t)
	dp := openTwoPorts(t, n, dataplane.Options{})
	for _, name := range []string{"sw0", "h0"} {
		l, err := n.Netlink().LinkByName(name)
		if err == nil {
			err = n.Netlink().LinkSetMTU(l, 9000)
		}
		if err != nil {
			t.Fatalf("MTU of %s: %v", name, err)
		}
	}
	h0, h1 := n.Socket("h0"), n.Socket("h1")
	run(t, dp, to(1))
	jumbo, small := testFrame(1, 8000), testFrame(2, 1514)
	send(t, h0, jumbo, small)
	got := nstest.Receive(t, h1, 1, 5*time.Second)
	if len(got) != 1 || !bytes.Equal(got[0], small) {
		t.Fatalf("h1 received %d frames, want only the %d-byte one", len(got), len(small))
	}
	st := eventually(t, dp, "the jumbo frame counted", func(st dataplane.Stats) bool { return st.Ports[0].RxErrors == 1 })
	if st.Ports[0].RxFrames != 1 {
		t.Errorf("port 0 counted %d frames received, want the one that fit", st.Ports[0].RxFrames)
	}
}

// The rings of a switch's ports take their memory from the kernel whatever
// the traffic: a share of the switch's slots per port, within bounds, at
// about an MTU's worth each.
func TestRingMemoryIsASwitchsShareOfSlotsPerPortOfAboutAnMTUEach(t *testing.T) {
	perPort := func(ports int) float64 { return float64(dataplane.RingMemory(ports, 1500)) / float64(ports) }
	if two, eight := perPort(2), perPort(8); two < 1024*1500 || eight < 256*1500 || eight > 256*2048 || two <= eight {
		t.Errorf("a port of a 2-port switch has %.0f bytes of ring, of an 8-port one %.0f", two, eight)
	}
	if fifty := perPort(50); fifty < 128*1500 || fifty > 128*2048 {
		t.Errorf("a port of a 50-port switch has %.0f bytes of ring, want 128 slots", fifty)
	}
	if jumbo, std := dataplane.RingMemory(8, 9000), dataplane.RingMemory(8, 1500); jumbo < 5*std {
		t.Errorf("rings at MTU 9000 take %d bytes, at 1500 %d", jumbo, std)
	}
}
