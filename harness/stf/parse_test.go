package stf

import (
	"errors"
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/internal/repo"
)

func mustParse(t *testing.T, text string) []Command {
	t.Helper()
	cmds, err := Parse("t.stf", text)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cmds
}

func TestParseAddWithPriorityMasksPrefixesAndHandle(t *testing.T) {
	cmds := mustParse(t, `
# a comment line
add acl 10 hdr.ipv4.dst:0x0a000000&&&0xff000000 hdr.tcp.dport:0x00**  ingress.deny(reason:3, code:0b101) = E1
add ipv4_lpm ipv4.dstAddr:0x0a010000/16 set_nhop(nhop:0x0a000001, port:2)  # trailing comment
add ports meta.port:10->20 allow()
add hdr_stack hdr.mpls[1].label:0x10 pop()
`)
	if len(cmds) != 4 {
		t.Fatalf("got %d commands, want 4", len(cmds))
	}
	acl := cmds[0].(*Add)
	if acl.Table != "acl" || acl.Priority != 10 || acl.HandleName != "E1" || acl.Position().Line != 3 {
		t.Errorf("acl entry parsed as %+v", acl)
	}
	if len(acl.Keys) != 2 || acl.Keys[0].Mask == nil || acl.Keys[0].Mask.Value.Cmp(big.NewInt(0xff000000)) != 0 {
		t.Fatalf("acl keys: %+v", acl.Keys)
	}
	dport := acl.Keys[1].Value
	if dport.Value.Int64() != 0 || dport.Care.Int64() != 0xff00 || dport.Bits != 16 || !dport.HasWildcards() {
		t.Errorf("0x00** parsed as value %v care %x bits %d", dport.Value, dport.Care, dport.Bits)
	}
	if acl.Action.Name != "ingress.deny" || len(acl.Action.Args) != 2 || acl.Action.Args[1].Value.Value.Int64() != 5 {
		t.Errorf("action parsed as %+v", acl.Action)
	}
	lpm := cmds[1].(*Add)
	if lpm.Priority != -1 || lpm.Keys[0].PrefixLen != 16 || lpm.Keys[0].Value.Value.Int64() != 0x0a010000 {
		t.Errorf("lpm entry parsed as %+v", lpm)
	}
	rng := cmds[2].(*Add)
	if rng.Keys[0].RangeHigh == nil || rng.Keys[0].RangeHigh.Value.Int64() != 20 || rng.Keys[0].Value.Value.Int64() != 10 {
		t.Errorf("range entry parsed as %+v", rng.Keys[0])
	}
	if f := cmds[3].(*Add).Keys[0].Field; f != "hdr.mpls[1].label" {
		t.Errorf("stack key field parsed as %q", f)
	}
}

func TestParsePacketAndExpectPatterns(t *testing.T) {
	cmds := mustParse(t, `packet 0 0a0B 0c0d  ee
expect 1 0a** 0c $
expect 2 0A0b0c0d
expect 3
no_packet
wait`)
	pkt := cmds[0].(*Packet)
	if pkt.Port != 0 || string(pkt.Data) != "\x0a\x0b\x0c\x0d\xee" {
		t.Errorf("packet parsed as port %d data %x", pkt.Port, pkt.Data)
	}
	e1 := cmds[1].(*Expect)
	if e1.Port != 1 || e1.Nibbles != "0A**0C" || !e1.Exact || e1.Any {
		t.Errorf("expect 1 parsed as %+v", e1)
	}
	e2 := cmds[2].(*Expect)
	if e2.Nibbles != "0A0B0C0D" || e2.Exact {
		t.Errorf("expect 2 parsed as %+v", e2)
	}
	if e3 := cmds[3].(*Expect); !e3.Any {
		t.Errorf("bare expect parsed as %+v", e3)
	}
	if _, ok := cmds[4].(*NoPacket); !ok {
		t.Errorf("no_packet parsed as %T", cmds[4])
	}
	if _, ok := cmds[5].(*Wait); !ok {
		t.Errorf("wait parsed as %T", cmds[5])
	}
}

func TestParseDirectCommandsAndChecks(t *testing.T) {
	cmds := mustParse(t, `mirroring_add 5 4
mc_mgrp_create 1113
mc_node_create 400 6 7
mc_node_associate 1113 0
register_write ingress.reg 3 0xdead
meter_array_set_rates m 0.0001:1 0.0005:1
check_counter ingress.cnt(3) bytes >= 64
check_counter direct_cnt($A)
check_register ingress.reg(3) == 0xdead
setdefault ipv4_lpm drop()`)
	mir := cmds[0].(*Direct)
	if mir.Name != "mirroring_add" || len(mir.Args) != 2 || mir.Args[1].Value.Int64() != 4 {
		t.Errorf("mirroring_add parsed as %+v", mir)
	}
	node := cmds[2].(*Direct)
	if len(node.Args) != 3 {
		t.Errorf("mc_node_create parsed as %+v", node)
	}
	reg := cmds[4].(*Direct)
	if reg.Object != "ingress.reg" || reg.Args[1].Value.Int64() != 0xdead {
		t.Errorf("register_write parsed as %+v", reg)
	}
	m := cmds[5].(*Direct)
	if len(m.Rates) != 2 || m.Rates[0].Rate != 0.0001 || m.Rates[1].Burst != 1 {
		t.Errorf("meter rates parsed as %+v", m.Rates)
	}
	cc := cmds[6].(*CounterCheck)
	if cc.Counter != "ingress.cnt" || cc.Index.Value.Int64() != 3 || cc.Kind != "bytes" || cc.Op != ">=" || cc.Value.Value.Int64() != 64 {
		t.Errorf("check_counter parsed as %+v", cc)
	}
	dc := cmds[7].(*CounterCheck)
	if dc.Handle != "$A" || dc.Kind != "packets" || dc.Op != "==" || dc.Value.Value.Sign() != 0 {
		t.Errorf("bare check_counter parsed as %+v", dc)
	}
	rc := cmds[8].(*RegisterCheck)
	if rc.Register != "ingress.reg" || rc.Op != "==" || rc.Value.Value.Int64() != 0xdead {
		t.Errorf("check_register parsed as %+v", rc)
	}
	sd := cmds[9].(*SetDefault)
	if sd.Table != "ipv4_lpm" || sd.Action.Name != "drop" {
		t.Errorf("setdefault parsed as %+v", sd)
	}
}

func TestParseErrorsNameFileLineAndColumn(t *testing.T) {
	cases := []struct{ text, want string }{
		{"frobnicate 1 2", "bad.stf:1:1: unknown STF command \"frobnicate\""},
		{"packet 0 0x0a", "bad.stf:1:11: packet data may only hold hex digits, found 'x'"},
		{"expect 1 0a $ 0b", "bad.stf:1:15: '$' must end the expected packet"},
		{"add t k:0x0g a()", "bad.stf:1:9: value of key k: \"0x0g\" has an invalid digit 'g'"},
		{"add t k:1", "bad.stf:1:10: missing action"},
		{"add t k:1 a(p 1)", "bad.stf:1:15: expected \":\" after parameter p"},
		{"mirroring_add 5", "bad.stf:1:16: missing argument (usage: mirroring_add SESSION PORT)"},
		{"check_counter c(1) packets ~ 2", "bad.stf:1:28: expected a comparison"},
		{"wait now", "bad.stf:1:6: unexpected \"now\" after wait command"},
	}
	for _, c := range cases {
		_, err := Parse("bad.stf", c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", c.text, err, c.want)
		}
	}
}

func TestParseReportsEveryBadLine(t *testing.T) {
	_, err := Parse("x.stf", "bogus\nwait\npacket zero 00\n")
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("error %v is not an *Error", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "x.stf:1:") || !strings.Contains(msg, "x.stf:3:") {
		t.Errorf("error %q should name lines 1 and 3", msg)
	}
}

func TestParseRoundTripsThroughString(t *testing.T) {
	text := `add acl 10 k:0x0a&&&0xff m:0x1/8 r:1->2 a.b(x:1, y:0x2) = H
setdefault t NoAction()
packet 3 0A0B
expect 4 0A**$
expect 5
check_counter c(2) bytes > 1
check_register r(1) != 0
mc_node_create 1 2 3
meter_set_rates m 1 0.5:10`
	cmds := mustParse(t, text)
	var lines []string
	for _, c := range cmds {
		lines = append(lines, c.String())
	}
	again := mustParse(t, strings.Join(lines, "\n"))
	for i := range cmds {
		if cmds[i].String() != again[i].String() {
			t.Errorf("round trip changed %q into %q", cmds[i].String(), again[i].String())
		}
	}
}

// TestParseAcceptsEveryConformanceTest parses the STF files of p4c's test
// suite that ../shared carries: the parser must know every command they use.
func TestParseAcceptsEveryConformanceTest(t *testing.T) {
	dir := repo.SharedOrSkip(t, "p4c-conformance", "programs")
	files, _ := filepath.Glob(filepath.Join(dir, "*.stf"))
	if len(files) == 0 {
		t.Fatalf("no STF files in %s", dir)
	}
	for _, f := range files {
		cmds, err := ParseFile(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(cmds) == 0 {
			t.Errorf("%s: no commands", f)
		}
	}
}

func TestPacketWithOddDigitsEndsInAByteOfTheLastDigit(t *testing.T) {
	cmds := mustParse(t, "packet 0 20 5")
	pkt, ok := cmds[0].(*Packet)
	if !ok || string(pkt.Data) != "\x20\x05" {
		t.Fatalf("packet 0 20 5 parsed as %#v, want bytes 20 05 as p4c's bmv2stf.py reads them", cmds[0])
	}
}
