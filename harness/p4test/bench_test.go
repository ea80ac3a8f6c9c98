package p4test_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/p4test"
	"github.com/grid-ina/grid/harness/p4test/targettest"
)

// BenchmarkPacketRoundTrip sends a packet into basic_ipv4 and waits for it
// to come out of port 2: on the engine in this process (its peer), and
// through grid switch on veth ports (packet socket in, switch process,
// packet socket out; no grace period, so the figure is the latency).
func BenchmarkPacketRoundTrip(b *testing.B) {
	path := filepath.Join(repo.RootOrFail(b), "p4", "examples", "basic_ipv4.p4")
	frame, err := p4test.Serialize(
		&layers.Ethernet{SrcMAC: net.HardwareAddr{0, 0, 0, 0, 0, 0xaa}, DstMAC: net.HardwareAddr{0, 0, 0, 0, 0, 1}, EthernetType: layers.EthernetTypeIPv4},
		&layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 1, 5}},
		gopacket.Payload(make([]byte, 100)))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("engine", func(b *testing.B) {
		sw, err := p4test.Compile(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := sw.Exec("add ipv4_lpm hdr.ipv4.dstAddr:0x0a000100/24 ipv4_forward(dstAddr:0x000000000102, port:2)"); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			out, err := sw.SendBytes(0, frame)
			if err != nil || len(out) != 1 {
				b.Fatalf("%v, %v", out, err)
			}
		}
	})
	b.Run("grid-switch", func(b *testing.B) {
		if os.Geteuid() != 0 {
			b.Skip("needs root")
		}
		prog, err := p4test.CompileEmbedded(path, p4test.CompileOptions{})
		if err != nil {
			b.Fatal(err)
		}
		cfg := p4test.RemoteConfig{Kind: p4test.GridSwitch, Ports: 3, Switch: targettest.GridBinary(b), Grace: time.Nanosecond}
		ctx := context.Background()
		r, err := p4test.StartRemote(ctx, cfg, prog)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		_, err = r.AddEntry("MyIngress.ipv4_lpm", engine.Entry{Match: []engine.Match{{Value: []byte{10, 0, 1, 0}, PrefixLen: 24}},
			Action: "MyIngress.ipv4_forward", Args: [][]byte{{0, 0, 0, 0, 1, 2}, {0, 2}}})
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := range b.N {
			if _, err := r.Send(0, frame); err != nil {
				b.Fatal(err)
			}
			out, err := r.Settle(ctx, i+1)
			if err != nil || len(out) != 1 || out[0].Port != 2 {
				b.Fatalf("packet %d: %v, %v", i, out, err)
			}
		}
	})
}
