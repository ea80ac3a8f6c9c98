package backend

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/midend"
)

// smallProgram is a lowered program with one table whose default action
// takes data, a hidden table and a conditional.
func smallProgram() *midend.Program {
	scalars := &midend.HeaderType{Name: "scalars_0"}
	ht := &midend.HeaderType{Name: "h_t", Fields: []bmv2json.HeaderField{{Name: "a", Bitwidth: 8}}}
	h := &midend.Header{Name: "h", Type: ht}
	set := &midend.Action{Name: "Ig.set", Params: []midend.Param{{Name: "v", Width: 8}},
		Prims: []bmv2json.Primitive{{Op: "assign", Parameters: []*bmv2json.Value{bmv2json.Field("h", "a"), bmv2json.Param(0)}}}}
	noop := &midend.Action{Name: "NoAction"}
	hidden := &midend.Action{Name: "testl9", Hidden: true}
	cond := "node_0"
	t := &midend.Table{
		Name: "Ig.t", Size: 64,
		Keys:    []midend.KeyElem{{MatchType: "ternary", Name: "hdr.h.a", Target: []string{"h", "a"}, Width: 8}, {MatchType: "exact", Name: "x", Target: []string{"h", "a"}, Width: 8}},
		Actions: []midend.ActionUse{{Action: set}, {Action: noop, DefaultOnly: true}},
		Default: set, DefaultArgs: []string{"0x07"}, DefaultConst: true,
		Next: map[string]*string{"Ig.set": &cond, "NoAction": nil},
	}
	ht2 := &midend.Table{Name: "tbl_testl9", Hidden: true, Actions: []midend.ActionUse{{Action: hidden}}, Default: hidden, Size: 1024, Next: map[string]*string{"testl9": nil}}
	init := "Ig.t"
	return &midend.Program{
		Source:      "test.p4",
		HeaderTypes: []*midend.HeaderType{scalars, ht},
		Headers:     []*midend.Header{{Name: "scalars", Type: scalars, Metadata: true}, h},
		Actions:     []*midend.Action{set, noop, hidden},
		Parser:      &midend.Parser{Init: "start", States: []*midend.ParseState{{Name: "start", Transitions: []*midend.Transition{{Value: "0x01", Mask: "0x0f", Next: "start"}, {Default: true}}}}},
		Deparser:    &midend.Deparser{Order: []string{"h"}},
		Ingress: &midend.Pipeline{Name: "ingress", Init: &init, Tables: []*midend.Table{t, ht2},
			Conds: []*midend.Cond{{Name: "node_0", Expr: bmv2json.Bool(true), True: nil, False: nil}}},
	}
}

func TestConvertNumbersActionsAndFillsTables(t *testing.T) {
	bp, err := Convert(smallProgram())
	if err != nil {
		t.Fatal(err)
	}
	if len(bp.Actions) != 3 || bp.Actions[2].ID != 2 || bp.Actions[0].RuntimeData[0].Bitwidth != 8 {
		t.Fatalf("actions %+v", bp.Actions)
	}
	tb := bp.Pipelines[0].Tables[0]
	if tb.MatchType != "ternary" {
		t.Errorf("match type %s, want ternary (a ternary key makes the table ternary)", tb.MatchType)
	}
	if tb.DefaultEntry == nil || tb.DefaultEntry.ActionID != 0 || !tb.DefaultEntry.ActionConst || tb.DefaultEntry.ActionData[0] != "0x07" {
		t.Errorf("default entry %+v", tb.DefaultEntry)
	}
	if len(tb.ActionIDs) != 2 || tb.ActionIDs[1] != 1 {
		t.Errorf("action ids %v, want [0 1]", tb.ActionIDs)
	}
	if n := tb.NextTables["Ig.set"]; n == nil || *n != "node_0" {
		t.Errorf("next of Ig.set %v", n)
	}
	if bp.Pipelines[0].Tables[1].ID != 1 {
		t.Errorf("second table id %d, want 1", bp.Pipelines[0].Tables[1].ID)
	}
	st := bp.Parsers[0].ParseStates[0]
	if st.Transitions[0].Mask == nil || *st.Transitions[0].Mask != "0x0f" || st.Transitions[1].Type != "default" || st.Transitions[1].NextState != nil {
		t.Errorf("transitions %+v", st.Transitions)
	}
}

func TestConvertRejectsDefaultActionWithoutItsData(t *testing.T) {
	p := smallProgram()
	p.Ingress.Tables[0].DefaultArgs = nil
	if _, err := Convert(p); err == nil {
		t.Fatal("default action without its argument accepted")
	}
}

func TestMarshalRoundTripsThroughTheBmv2Types(t *testing.T) {
	bp, err := Convert(smallProgram())
	if err != nil {
		t.Fatal(err)
	}
	js, err := Marshal(bp)
	if err != nil {
		t.Fatal(err)
	}
	back, err := bmv2json.Parse(js)
	if err != nil {
		t.Fatalf("our JSON does not parse: %v", err)
	}
	js2, err := Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(js, js2) {
		t.Errorf("JSON changes through a parse/marshal round trip")
	}
	ind, err := Indent(js)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ind, []byte("\n  \"header_types\"")) {
		t.Errorf("Indent did not indent")
	}
}

// The hand-written encoder produces the same document as encoding/json
// applied to the bmv2json types.
func TestMarshalEqualsEncodingJSON(t *testing.T) {
	bp, err := Convert(smallProgram())
	if err != nil {
		t.Fatal(err)
	}
	bp.Actions[0].Primitives = append(bp.Actions[0].Primitives, bmv2json.Primitive{Op: "log_msg", Parameters: []*bmv2json.Value{
		bmv2json.Named("string", "x=\"{}\"\n\u00e9"),
		bmv2json.Wrap(bmv2json.Expr("?", bmv2json.Hexstr("0x1"), bmv2json.Field("h", "a"))),
	}})
	bp.Actions[0].Primitives[1].Parameters[1].Inner.Op.Cond = bmv2json.Bool(false)
	bp.Calculations = append(bp.Calculations, bmv2json.Calculation{Name: "calc", Algo: "csum16", Input: []bmv2json.CalcInput{
		{Type: "field", Value: &bmv2json.Value{Kind: bmv2json.KindNames, Names: []string{"h", "a"}}}, {Type: "payload", Value: &bmv2json.Value{Kind: bmv2json.KindNull}},
	}})
	ours, err := Marshal(bp)
	if err != nil {
		t.Fatal(err)
	}
	std, err := json.Marshal(bp)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(ours, &a); err != nil {
		t.Fatalf("our output is not JSON: %v\n%s", err, ours)
	}
	if err := json.Unmarshal(std, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("documents differ:\nours %s\nstd  %s", ours, std)
	}
}
