package p4test_test

import (
	"fmt"
	"net"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/grid-ina/grid/harness/p4test"
)

// Route a packet through the basic_ipv4 example: the /24 route sends it to
// port 2 with new MAC addresses and the TTL decremented.
func Example() {
	sw, err := p4test.Compile("../../p4/examples/basic_ipv4.p4")
	if err != nil {
		fmt.Println(err)
		return
	}
	err = sw.Exec(
		"add ipv4_lpm hdr.ipv4.dstAddr:0x0a000100/24 ipv4_forward(dstAddr:0x000000000102, port:2)",
		"add ipv4_lpm hdr.ipv4.dstAddr:0x0a000000/8 ipv4_forward(dstAddr:0x0000000001ff, port:1)",
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := sw.Send(0,
		&layers.Ethernet{SrcMAC: net.HardwareAddr{0, 0, 0, 0, 0, 0xaa}, DstMAC: net.HardwareAddr{0, 0, 0, 0, 0, 1}, EthernetType: layers.EthernetTypeIPv4},
		&layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 1, 5}},
		gopacket.Payload("hello"))
	if err != nil {
		fmt.Println(err)
		return
	}
	pkt, err := out.Only(2)
	if err != nil {
		fmt.Println(err)
		return
	}
	eth := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	fmt.Printf("out of port 2: %v -> %v, %v -> %v, TTL %d\n", eth.SrcMAC, eth.DstMAC, ip.SrcIP, ip.DstIP, ip.TTL)
	fmt.Printf("checksum valid: %v\n", ipChecksumValid(ip))
	// Output:
	// out of port 2: 00:00:00:00:00:01 -> 00:00:00:00:01:02, 10.0.0.1 -> 10.0.1.5, TTL 63
	// checksum valid: true
}

// ipChecksumValid recomputes the header checksum: the one's-complement sum
// of a correct header, checksum included, is 0xffff.
func ipChecksumValid(ip *layers.IPv4) bool {
	var sum uint32
	for i := 0; i+1 < len(ip.Contents); i += 2 {
		sum += uint32(ip.Contents[i])<<8 | uint32(ip.Contents[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return sum == 0xffff
}
