package fabric

import (
	"fmt"
	"math"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/topo"
)

// TestTbfShapesTheBoundsOfTheLinkRatesTopologiesMayHave adds tbf at
// topo's smallest and largest link rate on interfaces of the smallest and
// largest MTU: the kernel takes each, and the burst time fits tbf's 32-bit
// ticks without wrapping (below the bound it wraps, and the link would
// get a burst the kernel silently shortens).
func TestTbfShapesTheBoundsOfTheLinkRatesTopologiesMayHave(t *testing.T) {
	needRoot(t)
	err := inScratchNamespace(func() error {
		h, err := netlink.NewHandleAt(netns.None(), unix.NETLINK_ROUTE)
		if err != nil {
			return err
		}
		defer h.Close()
		for i, mtu := range []int{topo.MinMTU, topo.MaxMTU} {
			index := 10 + 2*i
			veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: fmt.Sprintf("shape%d", i), Index: index, MTU: mtu}, PeerName: fmt.Sprintf("shape%dp", i)}
			if err := h.LinkAdd(veth); err != nil {
				return fmt.Errorf("veth with MTU %d: %w", mtu, err)
			}
			for _, rate := range []topo.Bandwidth{topo.MinLinkBandwidth, topo.MaxLinkBandwidth} {
				q := tbfQdisc(netlink.QdiscAttrs{LinkIndex: index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}, float64(rate), mtu)
				if err := h.QdiscReplace(q); err != nil {
					t.Errorf("tbf at %v on MTU %d: %v", rate, mtu, err)
				}
				burst, _ := tbfParams(float64(rate)/8, mtu)
				ticks := float64(burst) / float64(q.Rate) * 1e6 * float64(netlink.TickInUsec())
				if ticks >= math.MaxUint32 || ticks < 1 {
					t.Errorf("tbf at %v on MTU %d: burst of %d bytes is %.0f ticks, outside 1..2^32", rate, mtu, burst, ticks)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
