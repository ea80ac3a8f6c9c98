package nstest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vishvananda/netns"
)

func TestNewRemovesTheNamespaceOfADeadTestProcessAndItsOwnAtTheEnd(t *testing.T) {
	NeedRoot(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf("%s%d-0000", Prefix, dead.Process.Pid)
	// A namespace of this process that is not its own stays: another test
	// of the same process may be using it.
	live := fmt.Sprintf("%s%d-ffff", Prefix, os.Getpid())
	for _, name := range []string{stale, live} {
		err := onScratchThread(func() error {
			ns, err := netns.NewNamed(name)
			if err == nil {
				ns.Close()
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	defer netns.DeleteNamed(live)

	var own string
	t.Run("New", func(t *testing.T) {
		own = New(t).Name()
		if left := Leftovers(); slices.Contains(left, stale) || !slices.Contains(left, live) || !slices.Contains(left, own) {
			t.Errorf("namespaces %v: want %s and %s, not %s", left, live, own, stale)
		}
	})
	if _, err := os.Stat(filepath.Join(NetnsDir, own)); !os.IsNotExist(err) {
		t.Errorf("namespace %s still there after its test ended (%v)", own, err)
	}
}

func TestAFrameFromTheOtherEndOfAVethArrivesOnceLinkUpHasReturned(t *testing.T) {
	n := New(t)
	frame := make([]byte, 60)
	copy(frame, []byte{0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, 0x88, 0xb5})
	// The other end lags behind only sometimes, mostly on a veth just
	// created and when another one goes down and up with it (as a
	// switch's ports do), so each round takes two new veths.
	const rounds = 30
	lost := 0
	for i := range rounds {
		a, b, c, d := fmt.Sprint("a", i), fmt.Sprint("b", i), fmt.Sprint("c", i), fmt.Sprint("d", i)
		n.Veth(a, b)
		n.Veth(c, d)
		sa, sb := n.Socket(a), n.Socket(b)
		n.LinkDown(a)
		n.LinkDown(c)
		n.LinkUp(a)
		n.LinkUp(c)
		if err := sb.Send(frame); err != nil {
			t.Fatal(err)
		}
		if got := Receive(t, sa, 1, 200*time.Millisecond); len(got) != 1 {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d frames sent from a veth's other end right after LinkUp(end) returned were lost", lost, rounds)
	}
}

func TestLinkUpOfAVethEndNamesItsPeer(t *testing.T) {
	n := New(t)
	n.Veth("a", "b")
	// x's peer lives in another namespace, whatever link has its index here.
	n.Veth("x", "y")
	y, err := n.nl.LinkByName("y")
	if err != nil {
		t.Fatal(err)
	}
	if err := n.nl.LinkSetNsFd(y, int(New(t).ns)); err != nil {
		t.Fatal(err)
	}
	for end, want := range map[string]string{"a": "b", "b": "a", "lo": "", "x": ""} {
		if got := n.vethPeer(end); got != want {
			t.Errorf("peer of %s is %q, want %q", end, got, want)
		}
	}
}
