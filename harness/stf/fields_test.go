package stf

import (
	"encoding/hex"
	"strings"
	"testing"
)

// ipv4UDP is Ethernet | IPv4 (20 bytes) | UDP (8 bytes) | 4 bytes payload.
var ipv4UDP, _ = hex.DecodeString(strings.Join([]string{
	"000000000002", "000000000001", "0800",
	"45000020000100004011f9c40a0000010a000002",
	"04d2162e000cd8a1",
	"cafef00d"}, ""))

func TestFieldAtNamesHeaderFields(t *testing.T) {
	cases := map[int]string{
		0:  "Ethernet destination MAC",
		11: "Ethernet source MAC",
		13: "Ethernet EtherType",
		22: "IPv4 TTL",
		25: "IPv4 header checksum",
		33: "IPv4 destination address",
		36: "UDP destination port",
		40: "UDP checksum",
		43: "payload byte 1",
	}
	for off, want := range cases {
		if got := FieldAt(ipv4UDP, off); got != want {
			t.Errorf("FieldAt(%d) = %q, want %q", off, got, want)
		}
	}
	if got := FieldAt(ipv4UDP[:10], 3); got != "" {
		t.Errorf("FieldAt on a truncated frame = %q, want \"\"", got)
	}
}

func TestDescribeBytesMergesNeighboursOfOneField(t *testing.T) {
	got := DescribeBytes(ipv4UDP, []int{22, 24, 25, 40, 41, 42, 43, 45}, 4)
	want := "IPv4 TTL (byte 22), IPv4 header checksum (bytes 24-25), UDP checksum (bytes 40-41), payload bytes 0-1 (bytes 42-43), and 1 more"
	if got != want {
		t.Errorf("DescribeBytes = %q\nwant            %q", got, want)
	}
}
