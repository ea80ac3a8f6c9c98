package p4info

import (
	"bytes"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/proto"

	"github.com/grid-ina/grid/harness/p4c/midend"
)

func TestBuildDescribesTablesActionsAndDirectCounters(t *testing.T) {
	set := &midend.Action{Name: "Ig.set", Params: []midend.Param{{Name: "port", Width: 9}}}
	drop := &midend.Action{Name: "Ig.drop"}
	hidden := &midend.Action{Name: "testl3", Hidden: true}
	tb := &midend.Table{
		Name: "Ig.fwd", Size: 256,
		Keys:    []midend.KeyElem{{MatchType: "lpm", Name: "hdr.ipv4.dst", Width: 32}},
		Actions: []midend.ActionUse{{Action: set}, {Action: drop, DefaultOnly: true}},
		Default: drop, DefaultConst: true, DirectCounter: "Ig.hits",
	}
	synth := &midend.Table{Name: "tbl_testl3", Hidden: true, Actions: []midend.ActionUse{{Action: hidden}}, Default: hidden}
	p := &midend.Program{
		Ingress:   &midend.Pipeline{Tables: []*midend.Table{synth, tb}},
		Counters:  []*midend.Counter{{Name: "Ig.hits", Unit: "packets", Direct: true, Binding: "Ig.fwd"}},
		Registers: []*midend.Register{{Name: "Ig.r", Size: 8, Width: 32}},
	}
	info, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Tables) != 1 {
		t.Fatalf("%d tables, want 1 (synthesized tables are hidden)", len(info.Tables))
	}
	pt := info.Tables[0]
	if pt.Preamble.Id>>24 != uint32(p4configv1.P4Ids_TABLE) || pt.Preamble.Alias != "fwd" {
		t.Errorf("table preamble %v", pt.Preamble)
	}
	if pt.MatchFields[0].GetMatchType() != p4configv1.MatchField_LPM || pt.MatchFields[0].Bitwidth != 32 {
		t.Errorf("match field %v", pt.MatchFields[0])
	}
	if pt.ActionRefs[1].Scope != p4configv1.ActionRef_DEFAULT_ONLY {
		t.Errorf("drop scope %v, want DEFAULT_ONLY", pt.ActionRefs[1].Scope)
	}
	if pt.ConstDefaultActionId == 0 || pt.ConstDefaultActionId != pt.ActionRefs[1].Id {
		t.Errorf("const default action %d, want drop's id %d", pt.ConstDefaultActionId, pt.ActionRefs[1].Id)
	}
	if len(info.Actions) != 2 || len(info.Actions[0].Params) != 1 || info.Actions[0].Params[0].Bitwidth != 9 {
		t.Errorf("actions %v", info.Actions)
	}
	if len(info.DirectCounters) != 1 || info.DirectCounters[0].DirectTableId != pt.Preamble.Id ||
		len(pt.DirectResourceIds) != 1 || pt.DirectResourceIds[0] != info.DirectCounters[0].Preamble.Id {
		t.Errorf("direct counter %v / table resources %v", info.DirectCounters, pt.DirectResourceIds)
	}
	if info.Registers[0].Preamble.Id>>24 != uint32(p4configv1.P4Ids_REGISTER) || info.Registers[0].TypeSpec.GetBitstring().GetBit().GetBitwidth() != 32 {
		t.Errorf("register %v", info.Registers[0])
	}

	txt, err := MarshalText(info)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(txt, []byte("# proto-file: p4/config/v1/p4info.proto")) || !bytes.Contains(txt, []byte(`"Ig.fwd"`)) {
		t.Errorf("text form:\n%s", txt)
	}
	bin, err := MarshalBinary(info)
	if err != nil {
		t.Fatal(err)
	}
	var back p4configv1.P4Info
	if err := proto.Unmarshal(bin, &back); err != nil || !proto.Equal(&back, info) {
		t.Errorf("binary form does not round-trip: %v", err)
	}
}

func TestControllerHeadersBecomePacketMetadata(t *testing.T) {
	p := &midend.Program{ControllerHeaders: []*midend.ControllerHeader{{
		Name:   "packet_in",
		Fields: []midend.ControllerField{{Name: "ingress_port", Width: 9}, {Name: "_pad", Width: 7}},
	}}}
	info, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.ControllerPacketMetadata) != 1 {
		t.Fatalf("%d controller headers, want 1", len(info.ControllerPacketMetadata))
	}
	cm := info.ControllerPacketMetadata[0]
	if cm.Preamble.Name != "packet_in" || cm.Preamble.Id>>24 != uint32(p4configv1.P4Ids_CONTROLLER_HEADER) {
		t.Errorf("preamble %v", cm.Preamble)
	}
	if len(cm.Metadata) != 2 || cm.Metadata[0].Id != 1 || cm.Metadata[0].Bitwidth != 9 || cm.Metadata[1].Name != "_pad" {
		t.Errorf("metadata %v", cm.Metadata)
	}
}
