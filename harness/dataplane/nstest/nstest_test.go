package nstest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

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
