// Package p4info derives the P4Runtime P4Info (p4.config.v1.P4Info) of a
// lowered v1model program, with the names, aliases and IDs p4c's
// --p4runtime-files output has, so controllers written against p4c's P4Info
// work unchanged.
package p4info

import (
	"fmt"
	"math/big"
	"regexp"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
	"github.com/grid-ina/grid/harness/p4c/midend"
)

var matchTypes = map[string]p4configv1.MatchField_MatchType{
	"exact": p4configv1.MatchField_EXACT, "lpm": p4configv1.MatchField_LPM, "ternary": p4configv1.MatchField_TERNARY,
	"range": p4configv1.MatchField_RANGE, "optional": p4configv1.MatchField_OPTIONAL,
}

// idAnno returns the value of an @id annotation, 0 when absent.
func idAnno(annos ast.Annotations) uint32 {
	v, ok := midend.AnnotationInt(annos.Get("id"))
	if !ok {
		return 0
	}
	return uint32(v.Uint64())
}

// Build derives the P4Info of p.
func Build(p *midend.Program) (*p4configv1.P4Info, error) {
	syms := NewSymbolTable()
	var tables []*midend.Table
	for _, pl := range []*midend.Pipeline{p.Ingress, p.Egress} {
		if pl == nil {
			continue
		}
		for _, t := range pl.Tables {
			// Synthesized tables and @hidden ones are not for the control plane.
			if !t.Hidden && t.Annos.Get("hidden") == nil {
				tables = append(tables, t)
			}
		}
	}
	// Actions in P4Info are those the control plane can use: the ones
	// listed in tables, in the order of first use.
	var actions []*midend.Action
	seenAction := map[string]bool{}
	for _, t := range tables {
		for _, u := range t.Actions {
			if u.Action.Annos.Get("hidden") == nil && !seenAction[u.Action.Name] {
				seenAction[u.Action.Name] = true
				actions = append(actions, u.Action)
			}
		}
	}
	for _, a := range p.CalledActions {
		if a.Annos.Get("hidden") == nil && !seenAction[a.Name] {
			seenAction[a.Name] = true
			actions = append(actions, a)
		}
	}
	var symbols []Symbol
	add := func(kind p4configv1.P4Ids_Prefix, name string, annos ast.Annotations) {
		symbols = append(symbols, Symbol{Kind: kind, Name: name, ID: idAnno(annos)})
	}
	for _, t := range tables {
		add(p4configv1.P4Ids_TABLE, t.Name, t.Annos)
	}
	for _, a := range actions {
		add(p4configv1.P4Ids_ACTION, a.Name, a.Annos)
	}
	for _, c := range p.Counters {
		add(kindOf(c.Direct, p4configv1.P4Ids_COUNTER, p4configv1.P4Ids_DIRECT_COUNTER), c.Name, c.Annos)
	}
	for _, m := range p.Meters {
		add(kindOf(m.Direct, p4configv1.P4Ids_METER, p4configv1.P4Ids_DIRECT_METER), m.Name, m.Annos)
	}
	for _, r := range p.Registers {
		add(p4configv1.P4Ids_REGISTER, r.Name, r.Annos)
	}
	for _, ch := range p.ControllerHeaders {
		add(p4configv1.P4Ids_CONTROLLER_HEADER, ch.Name, ch.Annos)
	}
	for _, ap := range p.ActionProfiles {
		add(p4configv1.P4Ids_ACTION_PROFILE, ap.Name, ap.Annos)
	}
	for _, vs := range p.ValueSets {
		add(p4configv1.P4Ids_VALUE_SET, vs.Name, vs.Annos)
	}
	digestName := digestNames(p.LearnLists)
	for _, ll := range p.LearnLists {
		add(p4configv1.P4Ids_DIGEST, digestName[ll], nil)
	}
	for _, sym := range symbols {
		if err := syms.Add(sym); err != nil {
			return nil, err
		}
	}
	if err := syms.AssignIDs(); err != nil {
		return nil, err
	}
	pre := func(kind p4configv1.P4Ids_Prefix, name string, annos ast.Annotations) *p4configv1.Preamble {
		return &p4configv1.Preamble{Id: syms.ID(kind, name), Name: name, Alias: syms.Alias(name), Annotations: annotationStrings(annos)}
	}
	info := &p4configv1.P4Info{PkgInfo: &p4configv1.PkgInfo{Arch: "v1model"}}
	actionID := func(a *midend.Action) uint32 { return syms.ID(p4configv1.P4Ids_ACTION, a.Name) }
	for _, t := range tables {
		pt := &p4configv1.Table{Preamble: pre(p4configv1.P4Ids_TABLE, t.Name, t.Annos), Size: int64(t.Size)}
		for i, k := range t.Keys {
			if k.Opaque {
				k.Width = 0
			}
			id := uint32(i + 1)
			if n := idAnno(k.Annos); n != 0 {
				id = n // @id on a key element numbers its match field
			}
			pt.MatchFields = append(pt.MatchFields, &p4configv1.MatchField{
				Id: id, Name: k.Name, Bitwidth: int32(k.Width),
				Match: &p4configv1.MatchField_MatchType_{MatchType: matchTypes[k.MatchType]},
			})
		}
		for _, u := range t.Actions {
			ref := &p4configv1.ActionRef{Id: actionID(u.Action)}
			switch {
			case u.DefaultOnly:
				ref.Scope = p4configv1.ActionRef_DEFAULT_ONLY
				ref.Annotations = []string{"@defaultonly"}
			case u.TableOnly:
				ref.Scope = p4configv1.ActionRef_TABLE_ONLY
				ref.Annotations = []string{"@tableonly"}
			}
			pt.ActionRefs = append(pt.ActionRefs, ref)
		}
		if t.Default != nil {
			if t.DefaultConst {
				pt.ConstDefaultActionId = actionID(t.Default)
			}
			ida := &p4configv1.TableActionCall{ActionId: actionID(t.Default)}
			for i, arg := range t.DefaultArgs {
				v, ok := new(big.Int).SetString(arg[2:], 16)
				if !ok {
					return nil, fmt.Errorf("table %s: bad default argument %q", t.Name, arg)
				}
				// p4c writes the value in the parameter's whole byte width.
				w := t.Default.Params[i].Width
				v.And(v, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(w)), big.NewInt(1)))
				ida.Arguments = append(ida.Arguments, &p4configv1.TableActionCall_Argument{ParamId: uint32(i + 1), Value: v.FillBytes(make([]byte, (w+7)/8))})
			}
			pt.InitialDefaultAction = ida
		}
		if t.DirectCounter != "" {
			pt.DirectResourceIds = append(pt.DirectResourceIds, syms.ID(p4configv1.P4Ids_DIRECT_COUNTER, t.DirectCounter))
		}
		if t.DirectMeter != "" {
			pt.DirectResourceIds = append(pt.DirectResourceIds, syms.ID(p4configv1.P4Ids_DIRECT_METER, t.DirectMeter))
		}
		if t.SupportTimeout {
			pt.IdleTimeoutBehavior = p4configv1.Table_NOTIFY_CONTROL
		}
		if t.Profile != nil {
			pt.ImplementationId = syms.ID(p4configv1.P4Ids_ACTION_PROFILE, t.Profile.Name)
		}
		if len(t.Entries) > 0 {
			pt.IsConstTable = t.EntriesConst
			pt.HasInitialEntries = true
		}
		info.Tables = append(info.Tables, pt)
	}
	for _, a := range actions {
		pa := &p4configv1.Action{Preamble: pre(p4configv1.P4Ids_ACTION, a.Name, a.Annos)}
		for i, prm := range a.Params {
			pa.Params = append(pa.Params, &p4configv1.Action_Param{Id: uint32(i + 1), Name: prm.Name, Bitwidth: int32(prm.Width)})
		}
		info.Actions = append(info.Actions, pa)
	}
	counterUnit := map[string]p4configv1.CounterSpec_Unit{
		"packets": p4configv1.CounterSpec_PACKETS, "bytes": p4configv1.CounterSpec_BYTES, "packets_and_bytes": p4configv1.CounterSpec_BOTH,
	}
	for _, c := range p.Counters {
		spec := &p4configv1.CounterSpec{Unit: counterUnit[c.Unit]}
		if c.Direct {
			info.DirectCounters = append(info.DirectCounters, &p4configv1.DirectCounter{
				Preamble: pre(p4configv1.P4Ids_DIRECT_COUNTER, c.Name, c.Annos), Spec: spec,
				DirectTableId: syms.ID(p4configv1.P4Ids_TABLE, c.Binding),
			})
			continue
		}
		info.Counters = append(info.Counters, &p4configv1.Counter{Preamble: pre(p4configv1.P4Ids_COUNTER, c.Name, c.Annos), Spec: spec, Size: int64(c.Size)})
	}
	meterUnit := map[string]p4configv1.MeterSpec_Unit{"packets": p4configv1.MeterSpec_PACKETS, "bytes": p4configv1.MeterSpec_BYTES}
	for _, m := range p.Meters {
		spec := &p4configv1.MeterSpec{Unit: meterUnit[m.Unit]}
		if m.Direct {
			info.DirectMeters = append(info.DirectMeters, &p4configv1.DirectMeter{
				Preamble: pre(p4configv1.P4Ids_DIRECT_METER, m.Name, m.Annos), Spec: spec,
				DirectTableId: syms.ID(p4configv1.P4Ids_TABLE, m.Binding),
			})
			continue
		}
		info.Meters = append(info.Meters, &p4configv1.Meter{Preamble: pre(p4configv1.P4Ids_METER, m.Name, m.Annos), Spec: spec, Size: int64(m.Size)})
	}
	for _, r := range p.Registers {
		ts := &p4configv1.P4DataTypeSpec{TypeSpec: &p4configv1.P4DataTypeSpec_Bitstring{
			Bitstring: &p4configv1.P4BitstringLikeTypeSpec{TypeSpec: &p4configv1.P4BitstringLikeTypeSpec_Bit{
				Bit: &p4configv1.P4BitTypeSpec{Bitwidth: int32(r.Width)},
			}},
		}}
		if r.Enum != "" {
			ts.TypeSpec = &p4configv1.P4DataTypeSpec_SerializableEnum{SerializableEnum: &p4configv1.P4NamedType{Name: r.Enum}}
		}
		info.Registers = append(info.Registers, &p4configv1.Register{
			Preamble: pre(p4configv1.P4Ids_REGISTER, r.Name, r.Annos), TypeSpec: ts, Size: int32(r.Size),
		})
	}
	for _, ap := range p.ActionProfiles {
		info.ActionProfiles = append(info.ActionProfiles, actionProfile(ap, pre(p4configv1.P4Ids_ACTION_PROFILE, ap.Name, ap.Annos), func(name string) uint32 {
			return syms.ID(p4configv1.P4Ids_TABLE, name)
		}))
	}
	for _, vs := range p.ValueSets {
		pv := &p4configv1.ValueSet{Preamble: pre(p4configv1.P4Ids_VALUE_SET, vs.Name, vs.Annos), Size: int32(vs.Size)}
		for i, f := range vs.Fields {
			mf := &p4configv1.MatchField{Id: uint32(i + 1), Name: f.Name, Bitwidth: int32(f.Width),
				Match: &p4configv1.MatchField_MatchType_{MatchType: p4configv1.MatchField_EXACT}}
			if f.Enum != "" {
				mf.TypeName = &p4configv1.P4NamedType{Name: f.Enum}
			}
			pv.Match = append(pv.Match, mf)
		}
		info.ValueSets = append(info.ValueSets, pv)
	}
	info.TypeInfo = &p4configv1.P4TypeInfo{}
	// Like p4c, describe the serializable enums the control plane sees:
	// types of match fields and action parameters.
	usedEnums := map[string]bool{}
	for _, t := range tables {
		for _, k := range t.Keys {
			usedEnums[k.Enum] = true
		}
	}
	for _, a := range actions {
		for _, prm := range a.Params {
			usedEnums[prm.Enum] = true
		}
	}
	for _, ch := range p.ControllerHeaders {
		for _, f := range ch.Fields {
			usedEnums[f.Enum] = true
		}
	}
	for _, vs := range p.ValueSets {
		for _, f := range vs.Fields {
			usedEnums[f.Enum] = true
		}
	}
	for _, r := range p.Registers {
		usedEnums[r.Enum] = true
	}
	for _, ll := range p.LearnLists {
		d := &p4configv1.Digest{Preamble: pre(p4configv1.P4Ids_DIGEST, digestName[ll], nil), TypeSpec: &p4configv1.P4DataTypeSpec{}}
		var members []*p4configv1.P4DataTypeSpec
		for _, m := range ll.Members {
			members = append(members, typeSpec(m.Type, usedEnums))
		}
		if ll.Struct == "" {
			d.TypeSpec.TypeSpec = &p4configv1.P4DataTypeSpec_Tuple{Tuple: &p4configv1.P4TupleTypeSpec{Members: members}}
		} else {
			d.TypeSpec.TypeSpec = &p4configv1.P4DataTypeSpec_Struct{Struct: &p4configv1.P4NamedType{Name: ll.Struct}}
			st := &p4configv1.P4StructTypeSpec{}
			for i, m := range ll.Members {
				st.Members = append(st.Members, &p4configv1.P4StructTypeSpec_Member{Name: m.Name, TypeSpec: members[i]})
			}
			if info.TypeInfo.Structs == nil {
				info.TypeInfo.Structs = map[string]*p4configv1.P4StructTypeSpec{}
			}
			info.TypeInfo.Structs[ll.Struct] = st
		}
		info.Digests = append(info.Digests, d)
	}
	for _, se := range p.SerEnums {
		if !usedEnums[se.Name] {
			continue
		}
		if info.TypeInfo.SerializableEnums == nil {
			info.TypeInfo.SerializableEnums = map[string]*p4configv1.P4SerializableEnumTypeSpec{}
		}
		spec := &p4configv1.P4SerializableEnumTypeSpec{UnderlyingType: &p4configv1.P4BitTypeSpec{Bitwidth: int32(se.Width)}}
		for _, m := range se.Members {
			// The value is big-endian, padded to the underlying width.
			v := new(big.Int).And(m.Value, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(se.Width)), big.NewInt(1)))
			spec.Members = append(spec.Members, &p4configv1.P4SerializableEnumTypeSpec_Member{Name: m.Name, Value: v.FillBytes(make([]byte, (se.Width+7)/8))})
		}
		info.TypeInfo.SerializableEnums[se.Name] = spec
	}
	for _, ch := range p.ControllerHeaders {
		cm := &p4configv1.ControllerPacketMetadata{Preamble: pre(p4configv1.P4Ids_CONTROLLER_HEADER, ch.Name, ch.Annos)}
		for i, f := range ch.Fields {
			md := &p4configv1.ControllerPacketMetadata_Metadata{Id: uint32(i + 1), Name: f.Name, Bitwidth: int32(f.Width)}
			if f.Enum != "" {
				md.TypeName = &p4configv1.P4NamedType{Name: f.Enum}
			}
			cm.Metadata = append(cm.Metadata, md)
		}
		info.ControllerPacketMetadata = append(info.ControllerPacketMetadata, cm)
	}
	return info, nil
}

var (
	fieldSep    = regexp.MustCompile(`(?m)^(\s*[A-Za-z_][A-Za-z0-9_]*):\s+`)
	messageOpen = regexp.MustCompile(`(?m)^(\s*[A-Za-z_][A-Za-z0-9_]*): \{`)
)

// MarshalText writes info in protobuf text format with the header comment
// p4c puts on .p4info.txtpb files.
func MarshalText(info *p4configv1.P4Info) ([]byte, error) {
	b, err := prototext.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("encode P4Info text: %w", err)
	}
	// prototext varies its spacing from build to build on purpose; settle
	// on p4c's layout ("name: value", "message {") so files diff cleanly.
	b = fieldSep.ReplaceAll(b, []byte("$1: "))
	b = messageOpen.ReplaceAll(b, []byte("$1 {"))
	return append([]byte("# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n"), b...), nil
}

// MarshalBinary writes info in protobuf wire format (deterministic).
func MarshalBinary(info *p4configv1.P4Info) ([]byte, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("encode P4Info: %w", err)
	}
	return b, nil
}

// annotationStrings renders the annotations p4c copies into P4Info
// preambles (all but the ones that name, number or hide the object).
func annotationStrings(annos ast.Annotations) []string {
	var out []string
	for _, a := range annos {
		if a.Structured {
			continue // P4Info's structured_annotations, not plain strings
		}
		switch a.Name {
		case "name", "id", "hidden", "brief", "description", "defaultonly", "tableonly",
			"max_group_size", "selector_size_semantics", "max_member_weight": // P4Info fields of their own
			continue
		}
		s := "@" + a.Name
		if a.HasBody {
			s += "(" + a.Raw + ")"
		}
		out = append(out, s)
	}
	return out
}

// actionProfile describes an action profile or selector as p4c does: a
// selector's @max_group_size and the size semantics @selector_size_semantics
// names (sum_of_weights, or sum_of_members with @max_member_weight).
func actionProfile(ap *midend.ActionProfile, pre *p4configv1.Preamble, tableID func(string) uint32) *p4configv1.ActionProfile {
	pa := &p4configv1.ActionProfile{Preamble: pre, Size: int64(ap.Size), WithSelector: ap.Selector != nil}
	for _, t := range ap.Tables {
		pa.TableIds = append(pa.TableIds, tableID(t))
	}
	if ap.Selector == nil {
		return pa
	}
	if an := ap.Annos.Get("max_group_size"); an != nil {
		if v, ok := midend.AnnotationInt(an); ok {
			pa.MaxGroupSize = int32(v.Int64())
		}
	}
	sem, given := ap.Annos.StringArg("selector_size_semantics")
	switch {
	case sem == "sum_of_members":
		som := &p4configv1.ActionProfile_SumOfMembers{}
		if an := ap.Annos.Get("max_member_weight"); an != nil {
			if v, ok := midend.AnnotationInt(an); ok {
				som.MaxMemberWeight = int32(v.Int64())
			}
		}
		pa.SelectorSizeSemantics = &p4configv1.ActionProfile_SumOfMembers_{SumOfMembers: som}
	case given:
		pa.SelectorSizeSemantics = &p4configv1.ActionProfile_SumOfWeights_{SumOfWeights: &p4configv1.ActionProfile_SumOfWeights{}}
	}
	return pa
}

// digestNames are the P4Info names of the digests: the struct's name, or
// digest_N for the Nth digest of a tuple (as p4c names them).
func digestNames(lls []*midend.LearnList) map[*midend.LearnList]string {
	names := map[*midend.LearnList]string{}
	tuples := 0
	for _, ll := range lls {
		if ll.Struct != "" {
			names[ll] = ll.Struct
			continue
		}
		names[ll] = fmt.Sprintf("digest_%d", tuples)
		tuples++
	}
	return names
}

// typeSpec describes a digested field's type; serializable enums it uses
// are marked in used for type_info.
func typeSpec(t ast.Type, used map[string]bool) *p4configv1.P4DataTypeSpec {
	switch x := t.(type) {
	case *ast.BoolType:
		return &p4configv1.P4DataTypeSpec{TypeSpec: &p4configv1.P4DataTypeSpec_Bool{Bool: &p4configv1.P4BoolType{}}}
	case *ast.EnumDecl:
		if x.Underlying != nil {
			used[x.Name] = true
			return &p4configv1.P4DataTypeSpec{TypeSpec: &p4configv1.P4DataTypeSpec_SerializableEnum{SerializableEnum: &p4configv1.P4NamedType{Name: x.Name}}}
		}
	}
	bs := &p4configv1.P4BitstringLikeTypeSpec{}
	if b := ast.Bits(t, true); b != nil && b.Signed {
		bs.TypeSpec = &p4configv1.P4BitstringLikeTypeSpec_Int{Int: &p4configv1.P4IntTypeSpec{Bitwidth: int32(b.Width)}}
	} else if b != nil {
		bs.TypeSpec = &p4configv1.P4BitstringLikeTypeSpec_Bit{Bit: &p4configv1.P4BitTypeSpec{Bitwidth: int32(b.Width)}}
	}
	return &p4configv1.P4DataTypeSpec{TypeSpec: &p4configv1.P4DataTypeSpec_Bitstring{Bitstring: bs}}
}

// kindOf picks the P4Runtime kind of an indexed or a direct resource.
func kindOf(direct bool, indexed, directKind p4configv1.P4Ids_Prefix) p4configv1.P4Ids_Prefix {
	if direct {
		return directKind
	}
	return indexed
}
