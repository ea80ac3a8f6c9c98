// Package gradproto is the wire format of GRID gradient packets and a Go
// reference model of the aggregator switch (p4/aggregator) and of the worker
// and parameter-server rules of its recovery protocol.
//
// A GRID packet is an ordinary Ethernet/IPv4/UDP datagram to and from UDP
// port 18258 whose payload is a 20-byte GRID header followed by N int32
// gradient values (N = 32 by default, 64 when the program is built with
// GRID_VALUES_64). Control packets carry the header only. p4/README.md has the
// byte diagram; this file is its executable form.
package gradproto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// Wire constants shared with p4/aggregator/aggregator.p4.
const (
	// UDPPort is the source and destination UDP port of every GRID packet.
	UDPPort = 18258
	// Version is the value of the header's version byte.
	Version = 1
	// HeaderLen is the size of the GRID header in bytes.
	HeaderLen = 20
	// DefaultValues is N, the number of int32 values per packet, of the
	// default build.
	DefaultValues = 32
	// MaxFanIn is the largest fan-in of one aggregation node id: the
	// width of the worker bitmap. A node with more workers has one id per
	// MaxFanIn of them (Plan.PSAliases, Aggregation.UnitOffset).
	MaxFanIn = 64

	EthernetLen = 14
	IPv4Len     = 20
	UDPLen      = 8
	// FrameOverhead is the number of bytes before the GRID header.
	FrameOverhead = EthernetLen + IPv4Len + UDPLen

	EtherTypeIPv4 = 0x0800
	ProtoUDP      = 17
	// ECNCongestion is the IPv4 ECN codepoint (CE) set on control packets.
	ECNCongestion = 3
)

// Flag bits of the header's flags byte.
const (
	// FlagResult marks the parameter server's global sums on their way back
	// to the workers (multicast per job).
	FlagResult uint8 = 0x80
	// FlagCongestion marks a control packet a switch sends back to a worker
	// when its fragment collided with another fragment's memory unit or
	// exceeded the switch's processing capacity. The IP header carries ECN CE.
	FlagCongestion uint8 = 0x40
	// FlagResend marks a worker's retransmission after a timeout.
	FlagResend uint8 = 0x20
	// FlagOverflow marks a partial sum that a switch sent early because
	// adding the next contribution would overflow int32.
	FlagOverflow uint8 = 0x10
	// FlagAggregated marks a packet that has finished in-network processing
	// and goes to the parameter server: a partial sum, or a retransmitted
	// fragment the switch passed through. Switches route it by IPv4 only.
	FlagAggregated uint8 = 0x08
)

// Header is the GRID header.
//
//	offset size field
//	0      1    version
//	1      1    flags
//	2      2    job id
//	4      2    aggregation node id
//	6      2    count: how many workers' values the packet contains
//	8      4    fragment id
//	12     8    bitmap: one bit per contained worker (its slot at the node)
type Header struct {
	Version uint8
	Flags   uint8
	Job     uint16
	Node    uint16
	Count   uint16
	Frag    uint32
	Bitmap  uint64
}

// Has reports whether all bits of f are set in the header's flags.
func (h Header) Has(f uint8) bool { return h.Flags&f == f }

func (h Header) put(b []byte) {
	b[0] = h.Version
	b[1] = h.Flags
	binary.BigEndian.PutUint16(b[2:], h.Job)
	binary.BigEndian.PutUint16(b[4:], h.Node)
	binary.BigEndian.PutUint16(b[6:], h.Count)
	binary.BigEndian.PutUint32(b[8:], h.Frag)
	binary.BigEndian.PutUint64(b[12:], h.Bitmap)
}

func getHeader(b []byte) Header {
	return Header{
		Version: b[0],
		Flags:   b[1],
		Job:     binary.BigEndian.Uint16(b[2:]),
		Node:    binary.BigEndian.Uint16(b[4:]),
		Count:   binary.BigEndian.Uint16(b[6:]),
		Frag:    binary.BigEndian.Uint32(b[8:]),
		Bitmap:  binary.BigEndian.Uint64(b[12:]),
	}
}

// MAC is an Ethernet address.
type MAC [6]byte

func (m MAC) String() string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

// Uint64 returns the address as the 48-bit number P4 tables take.
func (m MAC) Uint64() uint64 {
	var v uint64
	for _, b := range m {
		v = v<<8 | uint64(b)
	}
	return v
}

// Packet is a whole GRID frame. Values is nil for control packets.
type Packet struct {
	DstMAC, SrcMAC MAC
	SrcIP, DstIP   netip.Addr
	// DSCP and ECN are the two parts of the IPv4 TOS byte.
	DSCP, ECN uint8
	ID        uint16
	TTL       uint8
	SrcPort   uint16
	DstPort   uint16
	// UDPChecksum is sent as is; GRID senders use 0 (no checksum) and the
	// switch zeroes it on every GRID packet it rewrites.
	UDPChecksum uint16
	Header
	Values []int32
}

// Len is the frame's length in bytes.
func (p *Packet) Len() int { return FrameOverhead + HeaderLen + 4*len(p.Values) }

// Marshal encodes the frame, computing the IPv4 length and checksum and
// the UDP length.
func (p *Packet) Marshal() []byte {
	b := make([]byte, p.Len())
	copy(b[0:6], p.DstMAC[:])
	copy(b[6:12], p.SrcMAC[:])
	binary.BigEndian.PutUint16(b[12:], EtherTypeIPv4)
	ip := b[EthernetLen:]
	ip[0] = 0x45
	ip[1] = p.DSCP<<2 | p.ECN&3
	binary.BigEndian.PutUint16(ip[2:], uint16(len(b)-EthernetLen))
	binary.BigEndian.PutUint16(ip[4:], p.ID)
	ip[8] = p.TTL
	ip[9] = ProtoUDP
	src, dst := p.SrcIP.As4(), p.DstIP.As4()
	copy(ip[12:16], src[:])
	copy(ip[16:20], dst[:])
	SetIPv4Checksum(ip[:IPv4Len])
	udp := ip[IPv4Len:]
	binary.BigEndian.PutUint16(udp[0:], p.SrcPort)
	binary.BigEndian.PutUint16(udp[2:], p.DstPort)
	binary.BigEndian.PutUint16(udp[4:], uint16(len(b)-EthernetLen-IPv4Len))
	binary.BigEndian.PutUint16(udp[6:], p.UDPChecksum)
	p.Header.put(udp[UDPLen:])
	PutValues(udp[UDPLen+HeaderLen:], p.Values)
	return b
}

// Payload is the packet's UDP payload — the GRID header and the values —
// what a worker or PS using an ordinary UDP socket sends and receives.
func (p *Packet) Payload() []byte {
	b := make([]byte, HeaderLen+4*len(p.Values))
	p.Header.put(b)
	PutValues(b[HeaderLen:], p.Values)
	return b
}

// ParsePayload decodes a UDP payload: the header, and values values unless
// the payload is a header-only control packet.
func ParsePayload(b []byte, values int) (Header, []int32, error) {
	if len(b) < HeaderLen {
		return Header{}, nil, fmt.Errorf("%d-byte payload, the GRID header has %d: %w", len(b), HeaderLen, ErrTruncated)
	}
	h := getHeader(b)
	if len(b) == HeaderLen {
		return h, nil, nil
	}
	if len(b) < HeaderLen+4*values {
		return h, nil, fmt.Errorf("%d-byte payload, %d values need %d: %w", len(b), values, HeaderLen+4*values, ErrTruncated)
	}
	vs := make([]int32, values)
	for i := range vs {
		vs[i] = int32(binary.BigEndian.Uint32(b[HeaderLen+4*i:]))
	}
	return h, vs, nil
}

// PutValues writes vs as big-endian int32s.
func PutValues(b []byte, vs []int32) {
	for i, v := range vs {
		binary.BigEndian.PutUint32(b[4*i:], uint32(v))
	}
}

// Broadcast is where the PS sends a result meant for every worker of its
// job: the first switch multicasts it by job and arrival port.
var Broadcast = netip.AddrFrom4([4]byte{255, 255, 255, 255})

// Errors returned by Parse.
var (
	ErrNotGRID   = errors.New("not a GRID packet")
	ErrTruncated = errors.New("truncated GRID packet")
)

// Parse decodes a frame. values is N, the number of values a fragment
// carries; a GRID packet whose UDP length covers only the header is a
// control packet and gets nil Values. It returns ErrNotGRID (wrapped) for
// frames that are not IPv4/UDP to port UDPPort, ErrTruncated when the frame
// is shorter than its UDP length says.
func Parse(frame []byte, values int) (*Packet, error) {
	if len(frame) < FrameOverhead+HeaderLen {
		return nil, fmt.Errorf("%d-byte frame: %w", len(frame), ErrNotGRID)
	}
	if binary.BigEndian.Uint16(frame[12:]) != EtherTypeIPv4 {
		return nil, fmt.Errorf("ethertype %#04x: %w", binary.BigEndian.Uint16(frame[12:]), ErrNotGRID)
	}
	ip := frame[EthernetLen:]
	if ip[0] != 0x45 || ip[9] != ProtoUDP {
		return nil, fmt.Errorf("IPv4 version/IHL %#02x protocol %d: %w", ip[0], ip[9], ErrNotGRID)
	}
	udp := ip[IPv4Len:]
	if dp := binary.BigEndian.Uint16(udp[2:]); dp != UDPPort {
		return nil, fmt.Errorf("UDP destination port %d: %w", dp, ErrNotGRID)
	}
	p := &Packet{
		DSCP:        ip[1] >> 2,
		ECN:         ip[1] & 3,
		ID:          binary.BigEndian.Uint16(ip[4:]),
		TTL:         ip[8],
		SrcIP:       netip.AddrFrom4([4]byte(ip[12:16])),
		DstIP:       netip.AddrFrom4([4]byte(ip[16:20])),
		SrcPort:     binary.BigEndian.Uint16(udp[0:]),
		DstPort:     binary.BigEndian.Uint16(udp[2:]),
		UDPChecksum: binary.BigEndian.Uint16(udp[6:]),
		Header:      getHeader(udp[UDPLen:]),
	}
	copy(p.DstMAC[:], frame[0:6])
	copy(p.SrcMAC[:], frame[6:12])
	udpLen := int(binary.BigEndian.Uint16(udp[4:]))
	if udpLen == UDPLen+HeaderLen {
		return p, nil
	}
	need := UDPLen + HeaderLen + 4*values
	if udpLen < need || len(udp) < need {
		return nil, fmt.Errorf("UDP length %d, frame holds %d UDP bytes, %d values need %d: %w", udpLen, len(udp), values, need, ErrTruncated)
	}
	p.Values = make([]int32, values)
	for i := range p.Values {
		p.Values[i] = int32(binary.BigEndian.Uint32(udp[UDPLen+HeaderLen+4*i:]))
	}
	return p, nil
}

// IPv4Checksum is the Internet checksum of an IPv4 header with its checksum
// field taken as zero.
func IPv4Checksum(hdr []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(hdr); i += 2 {
		if i == 10 {
			continue
		}
		sum += uint32(binary.BigEndian.Uint16(hdr[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// SetIPv4Checksum recomputes and stores the checksum of an IPv4 header.
func SetIPv4Checksum(hdr []byte) {
	binary.BigEndian.PutUint16(hdr[10:], IPv4Checksum(hdr))
}
