package stf

import (
	"fmt"
	"strings"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// fieldSpan names bytes [from, to] of a protocol header.
type fieldSpan struct {
	from, to int
	name     string
}

// knownFields lays out the headers P4 examples most often rewrite, so a
// diff can say "IPv4 TTL" instead of "byte 22".
var knownFields = map[gopacket.LayerType][]fieldSpan{
	layers.LayerTypeEthernet: {{0, 5, "destination MAC"}, {6, 11, "source MAC"}, {12, 13, "EtherType"}},
	layers.LayerTypeDot1Q:    {{0, 1, "priority/VLAN ID"}, {2, 3, "EtherType"}},
	layers.LayerTypeIPv4: {{0, 0, "version/IHL"}, {1, 1, "DSCP/ECN"}, {2, 3, "total length"}, {4, 5, "identification"},
		{6, 7, "flags/fragment offset"}, {8, 8, "TTL"}, {9, 9, "protocol"}, {10, 11, "header checksum"},
		{12, 15, "source address"}, {16, 19, "destination address"}},
	layers.LayerTypeIPv6: {{0, 3, "version/traffic class/flow label"}, {4, 5, "payload length"}, {6, 6, "next header"},
		{7, 7, "hop limit"}, {8, 23, "source address"}, {24, 39, "destination address"}},
	layers.LayerTypeTCP: {{0, 1, "source port"}, {2, 3, "destination port"}, {4, 7, "sequence number"},
		{8, 11, "acknowledgement number"}, {12, 12, "data offset"}, {13, 13, "flags"}, {14, 15, "window"},
		{16, 17, "checksum"}, {18, 19, "urgent pointer"}},
	layers.LayerTypeUDP: {{0, 1, "source port"}, {2, 3, "destination port"}, {4, 5, "length"}, {6, 7, "checksum"}},
}

// FieldAt names the header field at byte offset off of an Ethernet frame as
// gopacket decodes it ("IPv4 TTL", "UDP checksum", "payload byte 3"), or ""
// when the frame does not decode that far. P4 programs often carry their
// own headers, which gopacket reads as payload or as whatever the EtherType
// suggests: the name is a hint, not a verdict.
func FieldAt(data []byte, off int) string {
	name, payloadOff := fieldAt(data, off)
	if name == "payload" {
		return fmt.Sprintf("payload byte %d", payloadOff)
	}
	return name
}

// fieldAt is FieldAt with the payload kept as one field: it returns
// "payload" and the offset into the payload.
func fieldAt(data []byte, off int) (name string, payloadOff int) {
	pkt := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.NoCopy)
	start := 0
	for _, l := range pkt.Layers() {
		n := len(l.LayerContents())
		switch l.LayerType() {
		case gopacket.LayerTypeDecodeFailure:
			return "", 0
		case gopacket.LayerTypePayload:
			return "payload", off - start
		}
		if off < start+n {
			rel := off - start
			for _, f := range knownFields[l.LayerType()] {
				if rel >= f.from && rel <= f.to {
					return l.LayerType().String() + " " + f.name, 0
				}
			}
			return fmt.Sprintf("%s byte %d", l.LayerType(), rel), 0
		}
		start += n
	}
	return "", 0
}

// DescribeBytes names the fields the given byte offsets of a frame fall
// in, merging neighbours of one field: "IPv4 TTL (byte 22), IPv4 header
// checksum (bytes 24-25), payload bytes 0-3 (bytes 42-45)". Offsets must be
// increasing; at most max fields are named.
func DescribeBytes(data []byte, offsets []int, max int) string {
	type group struct {
		name       string
		from, to   int // frame offsets
		payloadOff int // payload offset of from
	}
	var groups []group
	for _, off := range offsets {
		name, payloadOff := fieldAt(data, off)
		if n := len(groups); n > 0 && groups[n-1].name == name && groups[n-1].to == off-1 {
			groups[n-1].to = off
			continue
		}
		groups = append(groups, group{name, off, off, payloadOff})
	}
	span := func(word string, from, to int) string {
		if to > from {
			return fmt.Sprintf("%ss %d-%d", word, from, to)
		}
		return fmt.Sprintf("%s %d", word, from)
	}
	var parts []string
	for i, g := range groups {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(groups)-max))
			break
		}
		where := span("byte", g.from, g.to)
		switch g.name {
		case "":
			parts = append(parts, where)
		case "payload":
			parts = append(parts, fmt.Sprintf("%s (%s)", span("payload byte", g.payloadOff, g.payloadOff+g.to-g.from), where))
		default:
			parts = append(parts, fmt.Sprintf("%s (%s)", g.name, where))
		}
	}
	return strings.Join(parts, ", ")
}
