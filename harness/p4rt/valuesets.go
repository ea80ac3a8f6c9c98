package p4rt

import (
	"fmt"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/grid-ina/grid/harness/engine"
)

// valueSetDef is a parser value set of the P4Info: its match fields are
// the select components it matches, each taking whole bytes of the
// engine's key as bmv2's parser does.
type valueSetDef struct {
	id     uint32
	name   string
	size   int
	widths []int
	// members is what the control plane last wrote (canonical), as Read
	// returns it (under Server.mu).
	members []*p4v1.ValueSetMember
}

// resolveValueSets checks the P4Info's value sets against the bmv2 JSON's.
func (pl *pipeline) resolveValueSets(prog *engine.Program) error {
	pl.valueSets = map[uint32]*valueSetDef{}
	inJSON := prog.ParseVsetBytes()
	for i, vs := range pl.info.ValueSets {
		path := fmt.Sprintf("config.p4info.value_sets[%d]", i)
		if err := checkID(path, vs.GetPreamble(), pl.valueSets); err != nil {
			return err
		}
		name := vs.Preamble.GetName()
		bytes, ok := inJSON[name]
		if !ok {
			return fmt.Errorf("%s: value set %q is not a parse_vset of the bmv2 JSON", path, name)
		}
		d := &valueSetDef{id: vs.Preamble.Id, name: name, size: int(vs.Size)}
		n := 0
		for j, m := range vs.Match {
			if m.Id != uint32(j+1) {
				return fmt.Errorf("%s.match[%d].id: %d, want %d (fields are numbered from 1)", path, j, m.Id, j+1)
			}
			if m.GetMatchType() != p4configv1.MatchField_EXACT {
				return fmt.Errorf("%s.match[%d]: only exact value set fields are supported, not %v", path, j, m.GetMatchType())
			}
			d.widths = append(d.widths, int(m.Bitwidth))
			n += (int(m.Bitwidth) + 7) / 8
		}
		if n != bytes {
			return fmt.Errorf("%s: value set %q matches %d bytes in the P4Info, %d in the bmv2 JSON", path, name, n, bytes)
		}
		pl.valueSets[d.id] = d
	}
	return nil
}

// writeValueSet replaces a value set's members (P4Runtime allows only
// MODIFY): each member gives every field an exact value.
func (pl *pipeline) writeValueSet(typ p4v1.Update_Type, e *p4v1.ValueSetEntry) *fieldError {
	const path = "value_set_entry"
	if typ != p4v1.Update_MODIFY {
		return errAt(codes.InvalidArgument, "type", "value sets can only be modified (the whole set at once), not %s", typ)
	}
	d, ok := pl.valueSets[e.ValueSetId]
	if !ok {
		return errAt(codes.NotFound, path+".value_set_id", "%d is not a value set of the P4Info", e.ValueSetId)
	}
	if len(e.Members) > d.size {
		return errAt(codes.ResourceExhausted, path+".members", "%d members: value set %s holds at most %d", len(e.Members), d.name, d.size)
	}
	values := make([][]byte, 0, len(e.Members))
	canon := make([]*p4v1.ValueSetMember, 0, len(e.Members))
	for i, m := range e.Members {
		mpath := fmt.Sprintf("%s.members[%d]", path, i)
		byID := map[uint32][]byte{}
		for j, fm := range m.Match {
			fpath := fmt.Sprintf("%s.match[%d]", mpath, j)
			if fm.FieldId < 1 || int(fm.FieldId) > len(d.widths) {
				return errAt(codes.InvalidArgument, fpath+".field_id", "value set %s has fields 1 to %d, not %d", d.name, len(d.widths), fm.FieldId)
			}
			if _, dup := byID[fm.FieldId]; dup {
				return errAt(codes.InvalidArgument, fpath+".field_id", "field %d given twice", fm.FieldId)
			}
			ex := fm.GetExact()
			if ex == nil {
				return errAt(codes.InvalidArgument, fpath, "value set fields are exact: give exact, not %T", fm.GetFieldMatchType())
			}
			v, err := fitValue(ex.Value, d.widths[fm.FieldId-1])
			if err != nil {
				return errAt(codes.InvalidArgument, fpath+".exact.value", "value set %s field %d: %v", d.name, fm.FieldId, err)
			}
			byID[fm.FieldId] = v
		}
		var value []byte
		c := &p4v1.ValueSetMember{}
		for id := uint32(1); int(id) <= len(d.widths); id++ {
			v, ok := byID[id]
			if !ok {
				return errAt(codes.InvalidArgument, mpath+".match", "field %d of value set %s is missing", id, d.name)
			}
			value = append(value, v...)
			c.Match = append(c.Match, &p4v1.FieldMatch{FieldId: id, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: canonical(v)}}})
		}
		values = append(values, value)
		canon = append(canon, c)
	}
	if err := pl.sw.SetParseVsetValues(d.name, values); err != nil {
		return errAt(codes.Internal, path, "%v", err)
	}
	d.members = canon
	return nil
}

// readValueSets returns the members of one value set, or of all (id 0).
func (pl *pipeline) readValueSets(e *p4v1.ValueSetEntry, emit func(*p4v1.Entity)) *fieldError {
	if e.ValueSetId != 0 {
		if _, ok := pl.valueSets[e.ValueSetId]; !ok {
			return errAt(codes.NotFound, "value_set_entry.value_set_id", "%d is not a value set of the P4Info", e.ValueSetId)
		}
	}
	for _, vs := range pl.info.ValueSets {
		d := pl.valueSets[vs.Preamble.Id]
		if e.ValueSetId != 0 && d.id != e.ValueSetId {
			continue
		}
		out := &p4v1.ValueSetEntry{ValueSetId: d.id}
		for _, m := range d.members {
			out.Members = append(out.Members, proto.Clone(m).(*p4v1.ValueSetMember))
		}
		emit(&p4v1.Entity{Entity: &p4v1.Entity_ValueSetEntry{ValueSetEntry: out}})
	}
	return nil
}
