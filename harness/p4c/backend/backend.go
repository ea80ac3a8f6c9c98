// Package backend writes a lowered program (package midend) as the bmv2
// JSON that p4c-bm2-ss emits for v1model: numeric IDs, the
// scalars/standard_metadata conventions, tables with action_ids,
// next_tables and default entries, calculations and checksums. The shape
// follows bmv2's docs/JSON_format.md (version 2.23); the output is
// deterministic, so golden files can be compared byte for byte.
package backend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/midend"
)

// Convert builds the bmv2 JSON model of p.
func Convert(p *midend.Program) (*bmv2json.Program, error) {
	out := &bmv2json.Program{
		HeaderTypes: []bmv2json.HeaderType{}, Headers: []bmv2json.Header{}, HeaderStacks: []bmv2json.HeaderStack{},
		HeaderUnionTypes: []bmv2json.HeaderUnionType{}, HeaderUnions: []bmv2json.HeaderUnion{},
		HeaderUnionStacks: []bmv2json.HeaderUnionStack{}, FieldLists: []bmv2json.FieldList{},
		Errors: p.Errors, Enums: p.Enums, ParseVsets: []bmv2json.ParseVset{},
		MeterArrays: []bmv2json.MeterArray{}, CounterArrays: []bmv2json.CounterArray{},
		RegisterArrays: []bmv2json.RegisterArray{}, Calculations: []bmv2json.Calculation{},
		LearnLists: []bmv2json.FieldList{}, Actions: []bmv2json.Action{}, Pipelines: []bmv2json.Pipeline{},
		Checksums: []bmv2json.Checksum{}, ForceArith: [][]string{}, ExternInstances: []bmv2json.ExternInstance{},
		FieldAliases: v1modelAliases(),
		Program:      p.Source,
		Meta:         bmv2json.Meta{Version: []int{2, 23}, Compiler: "grid p4c (github.com/grid-ina/grid)"},
	}
	for i, vs := range p.ValueSets {
		out.ParseVsets = append(out.ParseVsets, bmv2json.ParseVset{Name: vs.Name, ID: i, CompressedBitwidth: vs.Width(), MaxSize: vs.Size})
	}
	if out.Errors == nil {
		out.Errors = []bmv2json.NamedValue{}
	}
	if out.Enums == nil {
		out.Enums = []bmv2json.Enum{}
	}
	for i, ht := range p.HeaderTypes {
		fields := ht.Fields
		if fields == nil {
			fields = []bmv2json.HeaderField{}
		}
		bt := bmv2json.HeaderType{Name: ht.Name, ID: i, Fields: fields}
		if ht.MaxLength > 0 {
			n := ht.MaxLength
			bt.MaxLength = &n
		}
		out.HeaderTypes = append(out.HeaderTypes, bt)
	}
	headerID := map[*midend.Header]int{}
	for i, h := range p.Headers {
		headerID[h] = i
		out.Headers = append(out.Headers, bmv2json.Header{Name: h.Name, ID: i, HeaderType: h.Type.Name, Metadata: h.Metadata, PiOmit: true})
	}
	for i, s := range p.Stacks {
		st := bmv2json.HeaderStack{Name: s.Name, ID: i, HeaderType: s.Type.Name, Size: len(s.Elems), HeaderIDs: []int{}}
		for _, e := range s.Elems {
			st.HeaderIDs = append(st.HeaderIDs, headerID[e])
		}
		out.HeaderStacks = append(out.HeaderStacks, st)
	}
	for i, ut := range p.UnionTypes {
		hut := bmv2json.HeaderUnionType{Name: ut.Name, ID: i, Headers: [][]string{}}
		for _, m := range ut.Members {
			hut.Headers = append(hut.Headers, []string{m.Name, m.Type.Name})
		}
		out.HeaderUnionTypes = append(out.HeaderUnionTypes, hut)
	}
	unionID := map[*midend.Union]int{}
	for i, u := range p.Unions {
		unionID[u] = i
		hu := bmv2json.HeaderUnion{Name: u.Name, ID: i, UnionType: u.Type.Name, HeaderIDs: []int{}, PiOmit: true}
		for _, h := range u.Members {
			hu.HeaderIDs = append(hu.HeaderIDs, headerID[h])
		}
		out.HeaderUnions = append(out.HeaderUnions, hu)
	}
	for i, s := range p.UnionStacks {
		hs := bmv2json.HeaderUnionStack{Name: s.Name, ID: i, UnionType: s.Type.Name, Size: len(s.Elems), HeaderUnionIDs: []int{}}
		for _, u := range s.Elems {
			hs.HeaderUnionIDs = append(hs.HeaderUnionIDs, unionID[u])
		}
		out.HeaderUnionStacks = append(out.HeaderUnionStacks, hs)
	}
	for _, fl := range p.FieldLists {
		el := fl.Elements
		if el == nil {
			el = []*bmv2json.Value{}
		}
		out.FieldLists = append(out.FieldLists, bmv2json.FieldList{ID: fl.ID, Name: fl.Name, Elements: el})
	}
	for _, ll := range p.LearnLists {
		out.LearnLists = append(out.LearnLists, bmv2json.FieldList{ID: ll.ID, Name: ll.Name, Elements: ll.Elements})
	}
	if p.Parser != nil {
		out.Parsers = append(out.Parsers, convertParser(p.Parser))
	}
	if p.Deparser != nil {
		order := p.Deparser.Order
		if order == nil {
			order = []string{}
		}
		out.Deparsers = append(out.Deparsers, bmv2json.Deparser{Name: "deparser", ID: 0, Order: order, Primitives: []bmv2json.Primitive{}})
	}
	for i, m := range p.Meters {
		ma := bmv2json.MeterArray{Name: m.Name, ID: i, IsDirect: m.Direct, Size: m.Size, RateCount: 2, Type: m.Unit, Binding: m.Binding, ResultTarget: m.ResultTarget}
		if m.Direct && m.ResultTarget == nil {
			return nil, &midend.Error{Pos: m.Pos, Unsupported: true, Msg: fmt.Sprintf("direct meter %s is never read", m.Name)}
		}
		out.MeterArrays = append(out.MeterArrays, ma)
	}
	for i, c := range p.Counters {
		out.CounterArrays = append(out.CounterArrays, bmv2json.CounterArray{Name: c.Name, ID: i, Size: c.Size, IsDirect: c.Direct, Binding: c.Binding})
	}
	for i, r := range p.Registers {
		out.RegisterArrays = append(out.RegisterArrays, bmv2json.RegisterArray{Name: r.Name, ID: i, Size: r.Size, Bitwidth: r.Width})
	}
	for i, c := range p.Calculations {
		in := c.Input
		if in == nil {
			in = []bmv2json.CalcInput{}
		}
		out.Calculations = append(out.Calculations, bmv2json.Calculation{Name: c.Name, ID: i, Algo: c.Algo, Input: in})
	}
	for i, a := range p.Actions {
		a.ID = i
		rd := []bmv2json.RuntimeData{}
		for _, prm := range a.Params {
			rd = append(rd, bmv2json.RuntimeData{Name: prm.Name, Bitwidth: prm.Width})
		}
		prims := a.Prims
		if prims == nil {
			prims = []bmv2json.Primitive{}
		}
		for j := range prims {
			if prims[j].Parameters == nil {
				prims[j].Parameters = []*bmv2json.Value{}
			}
		}
		out.Actions = append(out.Actions, bmv2json.Action{Name: a.Name, ID: i, RuntimeData: rd, Primitives: prims})
	}
	tableID, profileID := 0, 0
	for i, pl := range []*midend.Pipeline{p.Ingress, p.Egress} {
		if pl == nil {
			continue
		}
		bp, err := convertPipeline(pl, i, &tableID, &profileID)
		if err != nil {
			return nil, err
		}
		out.Pipelines = append(out.Pipelines, bp)
	}
	for i, c := range p.Checksums {
		out.Checksums = append(out.Checksums, bmv2json.Checksum{
			Name: c.Name, ID: i, Target: c.Target, Type: "generic", Calculation: c.Calculation,
			Verify: c.Verify, Update: !c.Verify, IfCond: c.IfCond,
		})
	}
	out.ShapeForBmv2()
	if err := out.CheckBmv2Shapes(); err != nil {
		return nil, fmt.Errorf("backend: the JSON would not run on bmv2: %w", err)
	}
	return out, nil
}

func convertParser(p *midend.Parser) bmv2json.Parser {
	bp := bmv2json.Parser{Name: "parser", ID: 0, InitState: p.Init, ParseStates: []bmv2json.ParseState{}}
	for i, s := range p.States {
		ops := s.Ops
		if ops == nil {
			ops = []bmv2json.Primitive{}
		}
		key := s.Key
		if key == nil {
			key = []*bmv2json.Value{}
		}
		st := bmv2json.ParseState{Name: s.Name, ID: i, ParserOps: ops, TransitionKey: key, Transitions: []bmv2json.Transition{}}
		for _, t := range s.Transitions {
			bt := bmv2json.Transition{Type: "hexstr"}
			switch {
			case t.ValueSet != "":
				bt.Type = "parse_vset"
				v := t.ValueSet
				bt.Value = &v
			case t.Default:
				bt.Type = "default"
			default:
				v := t.Value
				bt.Value = &v
				if t.Mask != "" {
					m := t.Mask
					bt.Mask = &m
				}
			}
			if t.Next != "" {
				n := t.Next
				bt.NextState = &n
			}
			st.Transitions = append(st.Transitions, bt)
		}
		bp.ParseStates = append(bp.ParseStates, st)
	}
	return bp
}

// tableMatchType is the overall match type of a table as p4c computes it:
// range if any key is range, else ternary if any key is ternary/optional,
// else lpm if any is lpm, else exact.
func tableMatchType(t *midend.Table) string {
	has := map[string]bool{}
	for _, k := range t.Keys {
		has[k.MatchType] = true
	}
	switch {
	case has["range"]:
		return "range"
	case has["ternary"] || has["optional"]:
		return "ternary"
	case has["lpm"]:
		return "lpm"
	}
	return "exact"
}

func convertPipeline(pl *midend.Pipeline, id int, tableID, profileID *int) (bmv2json.Pipeline, error) {
	bp := bmv2json.Pipeline{Name: pl.Name, ID: id, InitTable: pl.Init, Tables: []bmv2json.Table{}, ActionProfiles: []bmv2json.ActionProfile{}, Conditionals: []bmv2json.Conditional{}}
	for _, t := range pl.Tables {
		bt := bmv2json.Table{
			Name: t.Name, ID: *tableID, Key: []bmv2json.TableKey{}, MatchType: tableMatchType(t), Type: "simple",
			MaxSize: t.Size, WithCounters: t.DirectCounter != "", SupportTimeout: t.SupportTimeout, ActionIDs: []int{}, Actions: []string{},
			NextTables: map[string]*string{},
		}
		*tableID++
		if ap := t.Profile; ap != nil {
			// An indirect table: members (and groups) instead of actions,
			// and no default entry (p4c writes none).
			bt.Type, bt.ActionProfile = "indirect", ap.Name
			if ap.Selector != nil {
				bt.Type = "indirect_ws"
			}
			if !slices.ContainsFunc(bp.ActionProfiles, func(p bmv2json.ActionProfile) bool { return p.Name == ap.Name }) {
				jp := bmv2json.ActionProfile{Name: ap.Name, ID: *profileID, MaxSize: ap.Size}
				*profileID++
				if ap.Selector != nil {
					jp.Selector = &bmv2json.Selector{Algo: ap.Selector.Algo, Input: ap.Selector.Input}
				}
				bp.ActionProfiles = append(bp.ActionProfiles, jp)
			}
		}
		if t.DirectMeter != "" {
			m := t.DirectMeter
			bt.DirectMeters = &m
		}
		for _, k := range t.Keys {
			tk := bmv2json.TableKey{MatchType: k.MatchType, Name: k.Name, Target: k.Target}
			if k.MatchType == "optional" {
				// An optional key is a ternary one whose mask is all ones
				// or zero, and p4c writes it so: bmv2 loads an "optional"
				// key but refuses every entry simple_switch_grpc's
				// P4Runtime server sends for it ("Error when adding match
				// entry to target"), and const entries are value/mask
				// pairs anyway.
				tk.MatchType = "ternary"
			}
			if k.Mask != "" {
				m := k.Mask
				tk.Mask = &m
			}
			bt.Key = append(bt.Key, tk)
		}
		for _, u := range t.Actions {
			bt.ActionIDs = append(bt.ActionIDs, u.Action.ID)
			bt.Actions = append(bt.Actions, u.Action.Name)
		}
		for k, v := range t.Next {
			bt.NextTables[k] = v
		}
		if t.Default != nil && t.Profile == nil {
			data := t.DefaultArgs
			if data == nil {
				data = []string{}
			}
			if len(data) != len(t.Default.Params) {
				return bp, &midend.Error{Pos: t.Pos, Msg: fmt.Sprintf("default action %s of table %s needs %d arguments, has %d", t.Default.Name, t.Name, len(t.Default.Params), len(data))}
			}
			bt.DefaultEntry = &bmv2json.DefaultEntry{ActionID: t.Default.ID, ActionConst: t.DefaultConst, ActionData: data, ActionEntryConst: t.DefaultConst}
		}
		for _, e := range t.Entries {
			args := e.Args
			if args == nil {
				args = []string{}
			}
			bt.Entries = append(bt.Entries, bmv2json.TableEntry{
				MatchKey: e.Keys, ActionEntry: bmv2json.ActionEntry{ActionID: e.Action.ID, ActionData: args}, Priority: e.Priority,
			})
		}
		bp.Tables = append(bp.Tables, bt)
	}
	for _, c := range pl.Conds {
		bp.Conditionals = append(bp.Conditionals, bmv2json.Conditional{Name: c.Name, ID: len(bp.Conditionals), Expression: c.Expr, TrueNext: c.True, FalseNext: c.False})
	}
	return bp, nil
}

// v1modelAliases are the field aliases p4c emits for v1model so that
// bmv2's simple_switch finds its intrinsic metadata.
func v1modelAliases() []bmv2json.FieldAlias {
	pairs := [][2]string{
		{"queueing_metadata.enq_timestamp", "enq_timestamp"},
		{"queueing_metadata.enq_qdepth", "enq_qdepth"},
		{"queueing_metadata.deq_timedelta", "deq_timedelta"},
		{"queueing_metadata.deq_qdepth", "deq_qdepth"},
		{"intrinsic_metadata.ingress_global_timestamp", "ingress_global_timestamp"},
		{"intrinsic_metadata.egress_global_timestamp", "egress_global_timestamp"},
		{"intrinsic_metadata.mcast_grp", "mcast_grp"},
		{"intrinsic_metadata.egress_rid", "egress_rid"},
		{"intrinsic_metadata.priority", "priority"},
	}
	out := make([]bmv2json.FieldAlias, 0, len(pairs))
	for _, p := range pairs {
		out = append(out, bmv2json.FieldAlias{Alias: p[0], Target: []string{"standard_metadata", p[1]}})
	}
	return out
}

// Marshal writes the bmv2 JSON of p compactly, with a trailing newline
// (indenting costs as much as the whole compilation of a large program;
// Indent makes a readable copy).
func Marshal(p *bmv2json.Program) ([]byte, error) {
	e := &encoder{b: make([]byte, 0, 64<<10)}
	e.program(p)
	if e.err != nil {
		return nil, fmt.Errorf("encode bmv2 JSON: %w", e.err)
	}
	return e.b, nil
}

// Indent returns an indented copy of bmv2 JSON for people and diffs.
func Indent(js []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, js, "", "  "); err != nil {
		return nil, fmt.Errorf("indent bmv2 JSON: %w", err)
	}
	return buf.Bytes(), nil
}
