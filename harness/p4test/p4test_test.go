package p4test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// l2acl loads package stf's hand-written test program: exact forwarding on
// the destination MAC (forward(port) | drop by default) and a ternary ACL.
func l2acl(t *testing.T) *Switch {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "stf", "testdata", "l2acl.json"))
	if err != nil {
		t.Fatal(err)
	}
	sw, err := Load(data)
	if err != nil {
		t.Fatal(err)
	}
	return sw
}

func frame(dst byte) []gopacket.SerializableLayer {
	return []gopacket.SerializableLayer{
		&layers.Ethernet{DstMAC: net.HardwareAddr{0, 0, 0, 0, 0, dst}, SrcMAC: net.HardwareAddr{0, 0, 0, 0, 0, 0x0a}, EthernetType: layers.EthernetTypeIPv4},
		gopacket.Payload{1, 2, 3},
	}
}

func TestSendReturnsWhatCameOutDecoded(t *testing.T) {
	sw := l2acl(t)
	if err := sw.Exec("add fwd dstAddr:0x000000000002 forward(port:2)"); err != nil {
		t.Fatal(err)
	}
	out, err := sw.Send(1, frame(2)...)
	if err != nil {
		t.Fatal(err)
	}
	pkt, err := out.Only(2)
	if err != nil {
		t.Fatal(err)
	}
	eth := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	// gopacket pads Ethernet frames to the 60-byte minimum.
	if eth.DstMAC.String() != "00:00:00:00:00:02" || len(eth.Payload) != 46 || string(eth.Payload[:3]) != "\x01\x02\x03" {
		t.Errorf("came out as %v with payload %x", eth.DstMAC, eth.Payload)
	}
	if len(out.On(2)) != 1 || len(out.On(3)) != 0 {
		t.Errorf("On(2) = %v, On(3) = %v", out.On(2), out.On(3))
	}
}

func TestOnlyExplainsWhatCameOutInstead(t *testing.T) {
	sw := l2acl(t)
	out, err := sw.Send(1, frame(9)...) // no entry: the default action drops it
	if err != nil {
		t.Fatal(err)
	}
	if _, err := out.Only(2); err == nil || err.Error() != "want exactly one packet, on port 2; got no packet" {
		t.Errorf("Only on a dropped packet: %v", err)
	}
	if err := sw.Exec("setdefault fwd forward(port:5)"); err != nil {
		t.Fatal(err)
	}
	out, err = sw.Send(1, frame(9)...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := out.Only(2); err == nil || !strings.Contains(err.Error(), "got 60 bytes on port 5") {
		t.Errorf("Only on the wrong port: %v", err)
	}
}

func TestExecReportsBadCommands(t *testing.T) {
	sw := l2acl(t)
	err := sw.Exec("add fwd dstAddr:0x02 forward(port:2)", "add nosuch k:1 a()")
	if err == nil || !strings.Contains(err.Error(), `no table "nosuch"`) {
		t.Errorf("Exec error: %v", err)
	}
	if err := sw.Exec("add fwd"); err == nil {
		t.Error("Exec accepted an add without action")
	}
}

func TestEngineGivesAccessToState(t *testing.T) {
	sw := l2acl(t)
	if _, err := sw.Send(3, frame(9)...); err != nil {
		t.Fatal(err)
	}
	v, err := sw.Engine().ReadCounter("ingress.port_in", 3)
	if err != nil {
		t.Fatal(err)
	}
	if v.Packets != 1 || v.Bytes != 60 {
		t.Errorf("port_in[3] = %+v, want 1 packet of 60 bytes (the padded frame)", v)
	}
}

func TestWithTraceLogsEveryPacket(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "stf", "testdata", "l2acl.json"))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	sw, err := Load(data, WithTrace(&log))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Send(1, frame(2)...); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "Table 'ingress.fwd': miss") {
		t.Errorf("trace:\n%s", log.String())
	}
}
