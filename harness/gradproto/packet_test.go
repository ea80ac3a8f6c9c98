package gradproto

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net/netip"
	"reflect"
	"testing"
)

func samplePacket(values int) *Packet {
	p := &Packet{
		DstMAC: MAC{0x02, 0xaa, 0, 0, 0, 1}, SrcMAC: MAC{2, 0, 0, 0, 0, 7},
		SrcIP: netip.MustParseAddr("10.0.1.7"), DstIP: netip.MustParseAddr("10.0.0.100"),
		TTL: 64, SrcPort: UDPPort, DstPort: UDPPort,
		Header: Header{Version: Version, Flags: FlagResend, Job: 3, Node: 9, Count: 1, Frag: 0x01020304, Bitmap: 1 << 63},
	}
	for i := 0; i < values; i++ {
		p.Values = append(p.Values, int32(i*1000-7))
	}
	return p
}

func TestPacketMarshalParseRoundTripsEveryField(t *testing.T) {
	for _, n := range []int{32, 64} {
		p := samplePacket(n)
		frame := p.Marshal()
		if len(frame) != FrameOverhead+HeaderLen+4*n {
			t.Fatalf("N=%d: frame is %d bytes", n, len(frame))
		}
		q, err := Parse(frame, n)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("N=%d: round trip changed the packet:\n%+v\n%+v", n, p, q)
		}
	}
}

func TestHeaderBytesFollowTheDocumentedLayout(t *testing.T) {
	p := samplePacket(32)
	frame := p.Marshal()
	got := hex.EncodeToString(frame[FrameOverhead : FrameOverhead+HeaderLen])
	// version 01, flags 20 (resend), job 0003, node 0009, count 0001,
	// fragment 01020304, bitmap 8000000000000000.
	const want = "012000030009000101020304" + "8000000000000000"
	if got != want {
		t.Fatalf("header bytes %s, want %s", got, want)
	}
	if frame[FrameOverhead+HeaderLen+3] != 0xf9 { // first value -7
		t.Fatalf("first value bytes % x", frame[FrameOverhead+HeaderLen:FrameOverhead+HeaderLen+4])
	}
}

func TestIPv4ChecksumMatchesAKnownHeader(t *testing.T) {
	// The worked example of RFC 1071 style checksums used by many tutorials.
	hdr, _ := hex.DecodeString("450000730000400040110000c0a80001c0a800c7")
	if got := IPv4Checksum(hdr); got != 0xb861 {
		t.Fatalf("checksum %#04x, want 0xb861", got)
	}
}

func TestParseReadsHeaderOnlyPacketsAsControlPackets(t *testing.T) {
	p := samplePacket(0)
	p.Values = nil
	p.Flags = FlagCongestion
	q, err := Parse(p.Marshal(), 32)
	if err != nil {
		t.Fatal(err)
	}
	if q.Values != nil || !q.Has(FlagCongestion) {
		t.Fatalf("control packet parsed as %+v", q)
	}
}

func TestParseRejectsOtherTrafficAndTruncation(t *testing.T) {
	p := samplePacket(32)
	frame := p.Marshal()
	other := bytes.Clone(frame)
	other[FrameOverhead-5] = 0x35 // UDP destination port 0x4735
	if _, err := Parse(other, 32); !errors.Is(err, ErrNotGRID) {
		t.Fatalf("other UDP port: %v", err)
	}
	if _, err := Parse(frame[:len(frame)-4], 32); !errors.Is(err, ErrTruncated) {
		t.Fatalf("truncated: %v", err)
	}
	if _, err := Parse(frame, 64); !errors.Is(err, ErrTruncated) {
		t.Fatalf("32 values read as 64: %v", err)
	}
}

func TestPayloadIsTheUDPPayloadOfTheFrame(t *testing.T) {
	p := samplePacket(32)
	frame := p.Marshal()
	pl := p.Payload()
	if !bytes.Equal(pl, frame[FrameOverhead:]) {
		t.Fatal("payload differs from the frame's UDP payload")
	}
	h, vs, err := ParsePayload(pl, 32)
	if err != nil || h != p.Header || !reflect.DeepEqual(vs, p.Values) {
		t.Fatalf("ParsePayload = %+v %v %v", h, vs, err)
	}
	if _, vs, err := ParsePayload(pl[:HeaderLen], 32); err != nil || vs != nil {
		t.Fatalf("header-only payload: %v %v", vs, err)
	}
	if _, _, err := ParsePayload(pl[:HeaderLen+8], 32); !errors.Is(err, ErrTruncated) {
		t.Fatalf("short payload: %v", err)
	}
}
