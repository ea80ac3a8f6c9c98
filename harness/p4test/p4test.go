// Package p4test writes packet tests for P4 programs in Go. It loads a
// program (bmv2 JSON, or a P4 file through the embedded compiler) into an
// in-memory switch, installs table entries and other control-plane state
// with STF command lines, sends packets built with gopacket and returns what
// came out, decoded by gopacket, for the test to assert on.
//
//	sw, err := p4test.Compile("p4/examples/basic_ipv4.p4")
//	err = sw.Exec("add ipv4_lpm hdr.ipv4.dstAddr:0x0a000100/24 ipv4_forward(dstAddr:0x000000000102, port:2)")
//	out, err := sw.Send(0, &layers.Ethernet{...}, &layers.IPv4{...}, gopacket.Payload(data))
//	pkt, err := out.Only(2) // exactly one packet, on port 2
//	ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
//
// For whole test files in p4c's STF format use package stf (or `grid
// p4test`); this package is for tests that are easier to write in Go.
//
// The package also runs STF files on real switch processes (RunSTF,
// Remote, an stf.Target): `grid switch` (grid's drop-in for
// simple_switch_grpc) or simple_switch_grpc itself, each in a private
// network namespace ("gridp4t-<pid>-<n>") on veth ports sw<i>/h<i>,
// started with simple_switch_grpc's command line, loaded and configured
// over P4Runtime (package p4rt/client) and fed through packet sockets on
// the h<i> ends. On bmv2, whose P4Runtime server does not implement
// registers, register access goes through simple_switch_CLI. Everything is
// removed afterwards; a namespace left by a killed process is removed by
// the next run. p4/README.md ("Real bmv2") describes the whole path.
//
//	prog, err := p4test.CompileFor(ctx, p4test.Bmv2, "prog.p4", p4test.CompileOptions{}) // p4c-bm2-ss
//	result, err := p4test.RunSTF(ctx, p4test.Bmv2, p4test.RemoteConfig{}, prog, cmds, stf.Options{})
package p4test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/stf"
)

// Switch is a program loaded into an in-memory switch.
type Switch struct {
	session *stf.Session
}

// Load builds a switch from bmv2 JSON (from the embedded compiler or real
// p4c).
func Load(programJSON []byte, options ...Option) (*Switch, error) {
	opts := stf.Options{}
	for _, o := range options {
		o(&opts)
	}
	s, err := stf.NewSession(programJSON, opts)
	if err != nil {
		return nil, err
	}
	return &Switch{session: s}, nil
}

// Compile compiles a P4 file with the embedded compiler and loads it; a
// .json path is loaded as bmv2 JSON.
func Compile(path string, options ...Option) (*Switch, error) {
	if filepath.Ext(path) == ".json" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return Load(data, options...)
	}
	res, err := p4c.Compile(path, p4c.Options{})
	if err != nil {
		return nil, err
	}
	return Load(res.JSON, options...)
}

// Option configures Load and Compile.
type Option func(*stf.Options)

// WithTrace sends every command and the engine's per-packet log to w (for
// instance a testing.T's writer or os.Stderr).
func WithTrace(w io.Writer) Option {
	return func(o *stf.Options) { o.Trace = w }
}

// Exec applies STF command lines: add, setdefault, mc_mgrp_create,
// mc_node_create, mc_node_associate, mirroring_add, register_write,
// meter_set_rates, ... Table, action, key and parameter names resolve as in
// STF files: full or unique suffix ("ipv4_lpm" for "MyIngress.ipv4_lpm").
func (s *Switch) Exec(lines ...string) error {
	for _, l := range lines {
		if err := s.session.Exec(l); err != nil {
			return err
		}
	}
	return nil
}

// Engine is the switch itself, for registers, counters and other state.
func (s *Switch) Engine() *engine.Switch { return s.session.Switch() }

// Packet is a packet that came out of the switch.
type Packet struct {
	Port int
	Data []byte
}

// Decode parses the packet as Ethernet with gopacket.
func (p Packet) Decode() gopacket.Packet {
	return gopacket.NewPacket(p.Data, layers.LayerTypeEthernet, gopacket.Default)
}

// Outputs are the packets one Send caused, in the order they came out.
type Outputs []Packet

// On returns the packets that came out of port.
func (o Outputs) On(port int) []Packet {
	var out []Packet
	for _, p := range o {
		if p.Port == port {
			out = append(out, p)
		}
	}
	return out
}

// Only checks that exactly one packet came out, on port, and returns it
// decoded.
func (o Outputs) Only(port int) (gopacket.Packet, error) {
	if len(o) != 1 || o[0].Port != port {
		return nil, fmt.Errorf("want exactly one packet, on port %d; got %s", port, o)
	}
	return o[0].Decode(), nil
}

// String lists the ports the packets came out of, or "no packet".
func (o Outputs) String() string {
	if len(o) == 0 {
		return "no packet"
	}
	parts := make([]string, len(o))
	for i, p := range o {
		parts[i] = fmt.Sprintf("%d bytes on port %d", len(p.Data), p.Port)
	}
	return strings.Join(parts, ", ")
}

// Send serializes the layers (fixing lengths and computing checksums, as
// gopacket does with those options) and injects the frame on port.
func (s *Switch) Send(port int, frame ...gopacket.SerializableLayer) (Outputs, error) {
	data, err := Serialize(frame...)
	if err != nil {
		return nil, err
	}
	return s.SendBytes(port, data)
}

// SendBytes injects a raw frame on port.
func (s *Switch) SendBytes(port int, frame []byte) (Outputs, error) {
	outs, err := s.session.Send(port, frame)
	if err != nil {
		return nil, err
	}
	res := make(Outputs, len(outs))
	for i, o := range outs {
		res[i] = Packet{Port: o.Port, Data: o.Data}
	}
	return res, nil
}

// Serialize builds a frame from gopacket layers with lengths and checksums
// filled in.
func Serialize(frame ...gopacket.SerializableLayer) ([]byte, error) {
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, frame...); err != nil {
		return nil, fmt.Errorf("serialize packet: %w", err)
	}
	return buf.Bytes(), nil
}
