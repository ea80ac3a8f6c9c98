package lab

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/gopacket/pcapgo"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/p4rt/client"
)

// burst sends n UDP datagrams of size bytes from host to dst as fast as
// it can, with the IP TOS byte set (ECN-capable: 1).
func burst(t *testing.T, st *fabric.State, host, dst string, n, size int) {
	t.Helper()
	to, err := net.ResolveUDPAddr("udp4", dst)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Node(host).Do(func() error {
		// Unconnected, so the port unreachable messages coming back
		// (nothing listens at dst) do not fail later writes.
		conn, err := net.ListenUDP("udp4", nil)
		if err != nil {
			return err
		}
		defer conn.Close()
		raw, _ := conn.SyscallConn()
		var serr error
		raw.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_TOS, 1) })
		if serr != nil {
			return serr
		}
		payload := make([]byte, size)
		for range n {
			if _, err := conn.WriteToUDP(payload, to); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ecnMarks counts the UDP frames in a pcap file by their ECN bits: marked
// Congestion Experienced (3) or not.
func ecnMarks(t *testing.T, path string) (marked, unmarked int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, _, err := r.ReadPacketData()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < 34 || data[12] != 0x08 || data[13] != 0 || data[23] != 17 {
			continue
		}
		if data[15]&3 == 3 {
			marked++
		} else {
			unmarked++
		}
	}
}

// waitQuiet waits until a pcap file stops growing.
func waitQuiet(path string) {
	last := int64(-1)
	for range 100 {
		time.Sleep(100 * time.Millisecond)
		st, err := os.Stat(path)
		if err == nil && st.Size() == last {
			return
		}
		if err == nil {
			last = st.Size()
		}
	}
}

// The course's ECN exercise in miniature: a burst from h1 into s1's port 2,
// whose link runs at 2 Mbit/s, queues up in the port's egress queue (64
// packets, as bmv2's) and egress marks those that found 10 or more ahead.
// Then set_queue_depth, over the runtime CLI, shortens the queue so that no
// packet finds 10 ahead and what does not fit is dropped.
func TestLabQueuesFillBehindASlowLinkAndTakeTheCLIsSetQueueDepth(t *testing.T) {
	dir := copyExercise(t, "ecn")
	l, st, _ := startLab(t, dir)
	out := filepath.Join(dir, "pcaps", "s1-eth2_out.pcap")
	burst(t, st, "h1", "10.0.2.2:9", 40, 1000)
	waitQuiet(out)
	marked, unmarked := ecnMarks(t, out)
	if marked == 0 || unmarked < 10 || marked+unmarked != 40 {
		t.Fatalf("behind the 2 Mbit/s link: %d marked, %d not; want the first 11 unmarked, the rest of 40 marked\n%s",
			marked, unmarked, tail(filepath.Join(dir, "logs", "s1.log"), 5))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, l.Switches[0].GRPCAddr, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var cli strings.Builder
	s, err := NewSession(ctx, c, &cli)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(ctx, strings.NewReader("set_queue_depth 4 2\n"), "test"); err != nil {
		t.Fatalf("set_queue_depth: %v\n%s", err, cli.String())
	}
	burst(t, st, "h1", "10.0.2.2:9", 40, 1000)
	waitQuiet(out)
	m2, u2 := ecnMarks(t, out)
	// How many get through depends on how fast the burst arrives (the
	// queue drains one packet per 4.2 ms meanwhile); none finds 10 ahead.
	if m2 != marked || u2-unmarked < 5 || u2-unmarked >= 40 {
		t.Errorf("with 4-packet queues: %d more marked, %d more unmarked; want none marked and some of 40 dropped", m2-marked, u2-unmarked)
	}
}
