package monitor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/monitor/monitortest"
)

// Integration tests: real namespaces, so root (monitortest skips without).

func upLine(t *testing.T) *fabric.State { return monitortest.Up(t, monitortest.Line) }

// sendFrames sends count frames of size bytes out of host's eth0.
func sendFrames(t *testing.T, st *fabric.State, host string, count, size int) {
	t.Helper()
	s := monitortest.NewSender(t, st, host, size)
	defer s.Close()
	s.SendN(t, count)
}

// linkOf returns the snapshot of the link with an end on node, and whether
// node is its A end.
func linkOf(t *testing.T, s Snapshot, node string) (LinkStats, bool) {
	t.Helper()
	for _, l := range s.Links {
		if l.NodeA == node || l.NodeB == node {
			return l, l.NodeA == node
		}
	}
	t.Fatalf("no link of %s in %+v", node, s.Links)
	return LinkStats{}, false
}

func TestFramesAHostSendsCountExactlyOnItsLinkAndNowhereElse(t *testing.T) {
	st := upLine(t)
	m, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const frames, size = 50, 300
	sendFrames(t, st, "w1", frames, size)
	if err := m.Sample(); err != nil {
		t.Fatal(err)
	}
	s := m.Snapshot()
	l, wIsA := linkOf(t, s, "w1")
	out, back := l.BA, l.AB
	if wIsA {
		out, back = l.AB, l.BA
	}
	want := Totals{Bytes: frames * size, Packets: frames}
	if out.Sent != want || out.Received != want {
		t.Errorf("w1 to s1: host sent %+v, switch port received %+v, want %+v both", out.Sent, out.Received, want)
	}
	if out.Peak <= 0 || out.Rates[0] <= 0 {
		t.Errorf("w1 to s1 rate %v, peak %v: want > 0", out.Rates, out.Peak)
	}
	if back.Sent != (Totals{}) || back.Received != (Totals{}) {
		t.Errorf("s1 to w1 counted %+v sent, %+v received; nothing went that way", back.Sent, back.Received)
	}
	for _, other := range s.Links {
		if other.Index != l.Index && (other.AB.Sent != Totals{} || other.BA.Sent != Totals{}) {
			t.Errorf("link %s-%s counted traffic %+v / %+v; only w1's link carried any", other.A, other.B, other.AB.Sent, other.BA.Sent)
		}
	}
	if len(m.Interfaces()) != 6 || len(m.Samples()) != 2 || len(m.LinkSamples()) != 2*3 {
		t.Errorf("%d interfaces, %d samples, %d link samples; want 6, 2, 6", len(m.Interfaces()), len(m.Samples()), len(m.LinkSamples()))
	}
}

func TestStartSamplesInTheBackgroundUntilClose(t *testing.T) {
	st := upLine(t)
	m, err := New(st, Options{Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Start(context.Background())
	sendFrames(t, st, "ps", 7, 100)
	deadline := time.Now().Add(5 * time.Second)
	for {
		l, psIsA := linkOf(t, m.Snapshot(), "ps")
		d := l.AB
		if !psIsA {
			d = l.BA
		}
		if d.Sent == (Totals{700, 7}) && m.Snapshot().Samples >= 3 {
			break
		}
		if err := m.Err(); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s of sampling: %d samples, ps sent %+v, want {700 7}", m.Snapshot().Samples, d.Sent)
		}
		time.Sleep(10 * time.Millisecond)
	}
	m.Close()
	taken := m.Snapshot().Samples
	time.Sleep(60 * time.Millisecond)
	if after := m.Snapshot().Samples; after != taken {
		t.Errorf("%d samples taken after Close", after-taken)
	}
	if err := m.Sample(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Sample after Close: %v, want an error saying it is closed", err)
	}
	if held := socketsInOtherNamespaces(t); len(held) > 0 {
		t.Errorf("after Close this process still has sockets in other namespaces: %v", held)
	}
}

func TestSamplingARunThatWasTakenDownFailsNamingTheNode(t *testing.T) {
	st := upLine(t)
	m, err := New(st, Options{Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// Deleting w1's veth from s1's side removes both ends while the monitor
	// keeps the namespaces open.
	s1 := st.Node("s1")
	if err := s1.Do(func() error {
		return deleteLink(s1.Port(1).Name)
	}); err != nil {
		t.Fatal(err)
	}
	err = m.Sample()
	if err == nil || !strings.Contains(err.Error(), "interfaces are gone") || !strings.Contains(err.Error(), "node s1") {
		t.Fatalf("sampling a deleted link: %v, want an error naming s1", err)
	}
	m.Start(context.Background())
	deadline := time.Now().Add(5 * time.Second)
	for m.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if m.Err() == nil {
		t.Error("background sampling of a deleted link reported no error")
	}
}

func TestNewOnAMissingNamespaceFailsAndLeavesNoSocket(t *testing.T) {
	st := upLine(t)
	broken := *st
	broken.Nodes = append([]fabric.Node(nil), st.Nodes...)
	broken.Nodes[len(broken.Nodes)-1].Namespace = "gm-no-such-namespace"
	if _, err := New(&broken, Options{}); err == nil || !strings.Contains(err.Error(), "node ps") {
		t.Fatalf("New with a missing namespace: %v, want an error naming node ps", err)
	}
	if held := socketsInOtherNamespaces(t); len(held) > 0 {
		t.Errorf("failed New left sockets in other namespaces: %v", held)
	}
}

// socketsInOtherNamespaces lists this process's sockets that live in a
// network namespace other than its own (SIOCGSKNS names a socket's namespace).
func socketsInOtherNamespaces(t *testing.T) []string {
	t.Helper()
	own, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, e := range fds {
		link, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		var fd int
		fmt.Sscan(e.Name(), &fd)
		nsfd, err := unix.IoctlRetInt(fd, unix.SIOCGSKNS)
		if err != nil {
			continue
		}
		ns, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", nsfd))
		unix.Close(nsfd)
		if ns != own {
			held = append(held, fmt.Sprintf("%s in %s", link, ns))
		}
	}
	return held
}

func deleteLink(name string) error {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return err
	}
	return netlink.LinkDel(l)
}

func TestStartStopsWhenItsContextEnds(t *testing.T) {
	st := upLine(t)
	m, err := New(st, Options{Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithCancel(context.Background())
	m.Start(ctx)
	deadline := time.Now().Add(5 * time.Second)
	for m.Snapshot().Samples < 3 {
		if m.Err() != nil || time.Now().After(deadline) {
			t.Fatalf("background sampling: %d samples in 5 s, error %v", m.Snapshot().Samples, m.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	time.Sleep(30 * time.Millisecond) // a tick already under way may still land
	taken := m.Snapshot().Samples
	time.Sleep(50 * time.Millisecond)
	if after := m.Snapshot().Samples; after != taken {
		t.Errorf("%d samples taken after the context ended", after-taken)
	}
	if err := m.Sample(); err != nil {
		t.Errorf("Sample after the context ended (not closed): %v", err)
	}
}
