package client

import (
	"context"
	"fmt"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// Match is the value of one match field of a table entry. Values are
// big-endian byte strings of any length (leading zeros do not matter; a
// value wider than the field is an error). Which fields are used depends on
// the field's match kind:
//
//   - exact:    Value
//   - lpm:      Value and PrefixLen (bits of Value past the prefix are
//     cleared; PrefixLen 0 is "don't care")
//   - ternary:  Value and Mask (Value is masked; a nil Mask is all ones,
//     an all-zero Mask is "don't care")
//   - range:    Value (low) and High, inclusive (nil High is Value; the
//     full range is "don't care")
//   - optional: Value
//
// Wildcard makes any non-exact field "don't care". P4Runtime leaves
// "don't care" fields out of the entry, and so does the client.
type Match struct {
	// Field is the match field's name in the P4Info ("hdr.ipv4.dstAddr").
	// When empty, the Match's position in TableEntry.Match picks the
	// field, in the table's key order.
	Field     string
	Value     []byte
	Mask      []byte
	PrefixLen int
	High      []byte
	Wildcard  bool
}

// TableEntry is a table entry by names.
type TableEntry struct {
	// Table is the table's full name or alias.
	Table string
	// Match holds the match fields, by name or by position (see
	// Match.Field). Fields left out are "don't care"; exact fields may
	// not be left out.
	Match []Match
	// Action names the action (full name or alias); Args are its
	// parameters in the P4Info's order (the order of the P4 source).
	// Both are ignored by delete and by the reads that only identify an
	// entry (direct counters and meters).
	Action string
	Args   [][]byte
	// Priority orders overlapping entries as P4Runtime does: the LARGER
	// number wins. Tables with ternary, range or optional fields need a
	// priority of at least 1; other tables need 0.
	Priority int32
}

// tableEntry converts e to P4Runtime; withAction adds the action.
func (s *symbols) tableEntry(e TableEntry, withAction bool) (*p4v1.TableEntry, error) {
	t, err := s.tables.find(e.Table)
	if err != nil {
		return nil, err
	}
	tname := t.GetPreamble().GetName()
	out := &p4v1.TableEntry{TableId: t.GetPreamble().GetId(), Priority: e.Priority}
	fields := t.GetMatchFields()
	given := make([]*Match, len(fields))
	for i := range e.Match {
		m := &e.Match[i]
		j := i
		if m.Field != "" {
			j = -1
			for k, f := range fields {
				if f.GetName() == m.Field {
					j = k
				}
			}
			if j < 0 {
				var names []string
				for _, f := range fields {
					names = append(names, f.GetName())
				}
				return nil, fmt.Errorf("table %s has no match field %q (its fields: %s)", tname, m.Field, listOrNone(names))
			}
		}
		if j >= len(fields) {
			return nil, fmt.Errorf("table %s has %d match fields, entry gives %d", tname, len(fields), len(e.Match))
		}
		if given[j] != nil {
			return nil, fmt.Errorf("table %s: match field %s given twice", tname, fields[j].GetName())
		}
		given[j] = m
	}
	for i, f := range fields {
		fm, err := fieldMatch(f, given[i])
		if err != nil {
			return nil, fmt.Errorf("table %s match field %s: %w", tname, f.GetName(), err)
		}
		if fm != nil {
			out.Match = append(out.Match, fm)
		}
	}
	switch {
	case needsPriority(t) && e.Priority < 1:
		return nil, fmt.Errorf("table %s has ternary, range or optional fields: its entries need a priority of at least 1, not %d", tname, e.Priority)
	case !needsPriority(t) && e.Priority != 0:
		return nil, fmt.Errorf("table %s has only exact and lpm fields: its entries take priority 0, not %d", tname, e.Priority)
	}
	if withAction {
		act, err := s.action(t, e.Action, e.Args)
		if err != nil {
			return nil, err
		}
		out.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: act}}
	}
	return out, nil
}

// fieldMatch converts one match field; nil (no error) means "don't care".
func fieldMatch(f *p4configv1.MatchField, m *Match) (*p4v1.FieldMatch, error) {
	width := f.GetBitwidth()
	kind := f.GetMatchType()
	if m == nil || m.Wildcard {
		if kind == p4configv1.MatchField_EXACT {
			return nil, fmt.Errorf("an exact field needs a value")
		}
		return nil, nil
	}
	value, err := encode("value", m.Value, width)
	if err != nil {
		return nil, err
	}
	out := &p4v1.FieldMatch{FieldId: f.GetId()}
	switch kind {
	case p4configv1.MatchField_EXACT:
		out.FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: value}}
	case p4configv1.MatchField_LPM:
		if m.PrefixLen < 0 || m.PrefixLen > int(width) {
			return nil, fmt.Errorf("prefix length %d is outside 0..%d", m.PrefixLen, width)
		}
		if m.PrefixLen == 0 {
			return nil, nil
		}
		value = and(value, prefixMask(m.PrefixLen, int(width)))
		out.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: value, PrefixLen: int32(m.PrefixLen)}}
	case p4configv1.MatchField_TERNARY:
		mask := prefixMask(int(width), int(width))
		if m.Mask != nil {
			if mask, err = encode("mask", m.Mask, width); err != nil {
				return nil, err
			}
		}
		if isZero(mask) {
			return nil, nil
		}
		out.FieldMatchType = &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: and(value, mask), Mask: Canonical(mask)}}
	case p4configv1.MatchField_RANGE:
		high := value
		if m.High != nil {
			if high, err = encode("high end", m.High, width); err != nil {
				return nil, err
			}
		}
		if bitLen(value) == 0 && isAllOnes(high, int(width)) {
			return nil, nil
		}
		out.FieldMatchType = &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: value, High: high}}
	case p4configv1.MatchField_OPTIONAL:
		if m.Mask != nil {
			// An optional field given as a ternary one: all-zero is
			// "don't care", which P4Runtime says by omitting the field.
			mask, err := encode("mask", m.Mask, width)
			if err != nil {
				return nil, err
			}
			if isZero(mask) {
				return nil, nil
			}
			if !isAllOnes(mask, int(width)) {
				return nil, fmt.Errorf("an optional field matches all or nothing: mask %x is neither all ones nor zero", m.Mask)
			}
		}
		out.FieldMatchType = &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: value}}
	default:
		return nil, fmt.Errorf("match kind %v is not supported", kind)
	}
	return out, nil
}

// action converts an action call of table t.
func (s *symbols) action(t *p4configv1.Table, name string, args [][]byte) (*p4v1.Action, error) {
	a, err := s.tableAction(t, name)
	if err != nil {
		return nil, err
	}
	aname := a.GetPreamble().GetName()
	params := a.GetParams()
	if len(args) != len(params) {
		var names []string
		for _, p := range params {
			names = append(names, fmt.Sprintf("%s (%d bits)", p.GetName(), p.GetBitwidth()))
		}
		return nil, fmt.Errorf("action %s takes %d parameters (%s), got %d", aname, len(params), listOrNone(names), len(args))
	}
	out := &p4v1.Action{ActionId: a.GetPreamble().GetId()}
	for i, p := range params {
		v, err := encode(fmt.Sprintf("action %s parameter %s", aname, p.GetName()), args[i], p.GetBitwidth())
		if err != nil {
			return nil, err
		}
		out.Params = append(out.Params, &p4v1.Action_Param{ParamId: p.GetId(), Value: v})
	}
	return out, nil
}

// fromTableEntry converts a P4Runtime entry back to names: match fields by
// name in the table's key order, values padded to their width.
func (s *symbols) fromTableEntry(te *p4v1.TableEntry) (TableEntry, error) {
	t, ok := s.tables.byID[te.GetTableId()]
	if !ok {
		return TableEntry{}, fmt.Errorf("the server returned an entry of table id %d, which the P4Info does not have", te.GetTableId())
	}
	out := TableEntry{Table: t.GetPreamble().GetName(), Priority: te.GetPriority()}
	byID := map[uint32]*p4v1.FieldMatch{}
	for _, fm := range te.GetMatch() {
		byID[fm.GetFieldId()] = fm
	}
	for _, f := range t.GetMatchFields() {
		w := f.GetBitwidth()
		m := Match{Field: f.GetName()}
		fm, ok := byID[f.GetId()]
		switch {
		case !ok:
			m.Wildcard = true
		case fm.GetExact() != nil:
			m.Value = pad(fm.GetExact().GetValue(), w)
		case fm.GetLpm() != nil:
			m.Value, m.PrefixLen = pad(fm.GetLpm().GetValue(), w), int(fm.GetLpm().GetPrefixLen())
		case fm.GetTernary() != nil:
			m.Value, m.Mask = pad(fm.GetTernary().GetValue(), w), pad(fm.GetTernary().GetMask(), w)
		case fm.GetRange() != nil:
			m.Value, m.High = pad(fm.GetRange().GetLow(), w), pad(fm.GetRange().GetHigh(), w)
		case fm.GetOptional() != nil:
			m.Value = pad(fm.GetOptional().GetValue(), w)
		}
		out.Match = append(out.Match, m)
	}
	if act := te.GetAction().GetAction(); act != nil {
		a, ok := s.actions.byID[act.GetActionId()]
		if !ok {
			return out, fmt.Errorf("the server returned action id %d, which the P4Info does not have", act.GetActionId())
		}
		out.Action = a.GetPreamble().GetName()
		values := map[uint32][]byte{}
		for _, p := range act.GetParams() {
			values[p.GetParamId()] = p.GetValue()
		}
		for _, p := range a.GetParams() {
			out.Args = append(out.Args, pad(values[p.GetId()], p.GetBitwidth()))
		}
	}
	return out, nil
}

// InsertEntry adds a table entry.
func (c *Client) InsertEntry(ctx context.Context, e TableEntry) error {
	return c.writeEntry(ctx, p4v1.Update_INSERT, e)
}

// ModifyEntry changes the action of an existing entry (found by its match
// and priority).
func (c *Client) ModifyEntry(ctx context.Context, e TableEntry) error {
	return c.writeEntry(ctx, p4v1.Update_MODIFY, e)
}

// DeleteEntry deletes the entry with e's match and priority.
func (c *Client) DeleteEntry(ctx context.Context, e TableEntry) error {
	return c.writeEntry(ctx, p4v1.Update_DELETE, e)
}

// EntryUpdate builds the P4Runtime update that inserts, modifies or
// deletes e, for batching several updates in one Write.
func (c *Client) EntryUpdate(typ p4v1.Update_Type, e TableEntry) (*p4v1.Update, error) {
	s, err := c.symbols()
	if err != nil {
		return nil, err
	}
	te, err := s.tableEntry(e, typ != p4v1.Update_DELETE)
	if err != nil {
		return nil, err
	}
	return &p4v1.Update{Type: typ, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}}, nil
}

func (c *Client) writeEntry(ctx context.Context, typ p4v1.Update_Type, e TableEntry) error {
	u, err := c.EntryUpdate(typ, e)
	if err != nil {
		return err
	}
	return c.Write(ctx, u)
}

// SetDefaultAction sets the action a table runs on a miss; args are the
// action's parameters in order.
func (c *Client) SetDefaultAction(ctx context.Context, table, action string, args [][]byte) error {
	s, err := c.symbols()
	if err != nil {
		return err
	}
	t, err := s.tables.find(table)
	if err != nil {
		return err
	}
	act, err := s.action(t, action, args)
	if err != nil {
		return err
	}
	te := &p4v1.TableEntry{TableId: t.GetPreamble().GetId(), IsDefaultAction: true,
		Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: act}}}
	return c.Write(ctx, &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}})
}

// readTable reads the entries of a table (without its default entry).
func (c *Client) readTable(ctx context.Context, table string) (*symbols, []*p4v1.TableEntry, error) {
	s, err := c.symbols()
	if err != nil {
		return nil, nil, err
	}
	t, err := s.tables.find(table)
	if err != nil {
		return nil, nil, err
	}
	entities, err := c.Read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: t.GetPreamble().GetId()}}})
	if err != nil {
		return nil, nil, err
	}
	var out []*p4v1.TableEntry
	for _, ent := range entities {
		if te := ent.GetTableEntry(); te != nil && !te.GetIsDefaultAction() {
			out = append(out, te)
		}
	}
	return s, out, nil
}

// ReadEntries returns every entry of a table (not its default entry),
// in the order the server lists them.
func (c *Client) ReadEntries(ctx context.Context, table string) ([]TableEntry, error) {
	s, entries, err := c.readTable(ctx, table)
	if err != nil {
		return nil, err
	}
	out := make([]TableEntry, len(entries))
	for i, te := range entries {
		if out[i], err = s.fromTableEntry(te); err != nil {
			return nil, fmt.Errorf("read table %s: %w", table, err)
		}
	}
	return out, nil
}

// DeleteAllEntries deletes every entry of a table in one write; a table
// without entries is left as it is.
func (c *Client) DeleteAllEntries(ctx context.Context, table string) error {
	_, entries, err := c.readTable(ctx, table)
	if err != nil {
		return err
	}
	var updates []*p4v1.Update
	for _, te := range entries {
		// The match and priority identify the entry; drop the rest.
		key := &p4v1.TableEntry{TableId: te.GetTableId(), Match: te.GetMatch(), Priority: te.GetPriority()}
		updates = append(updates, &p4v1.Update{Type: p4v1.Update_DELETE, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: key}}})
	}
	if len(updates) == 0 {
		return nil
	}
	return c.Write(ctx, updates...)
}
