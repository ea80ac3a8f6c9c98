package engine_test

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/grid-ina/grid/harness/engine"
)

// A switch forwarding IPv4 by longest prefix: one route, one packet.
func ExampleSwitch_Process() {
	data, err := os.ReadFile("testdata/ipv4_lpm.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	prog, err := engine.Load(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	sw := engine.NewSwitch(prog, engine.Config{})
	_, err = sw.AddEntry("ipv4_lpm", engine.Entry{
		Match:  []engine.Match{engine.LPM([]byte{10, 0, 0, 0}, 8)},
		Action: "forward",
		Args:   [][]byte{{2}, {0x02, 0, 0, 0, 0, 0x02}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	frame := make([]byte, 14+20)
	binary.BigEndian.PutUint16(frame[12:], 0x0800)
	frame[14], frame[22] = 0x45, 64 // IPv4, TTL 64
	copy(frame[30:34], []byte{10, 1, 2, 3})
	err = sw.Process(1, frame, func(o engine.Output) {
		fmt.Printf("port %d, TTL %d, dst MAC % x\n", o.Port, o.Data[22], o.Data[0:6])
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: port 2, TTL 63, dst MAC 02 00 00 00 00 02
}
