package stf

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// nameIndex indexes the names of a bmv2 JSON program the way bmv2stf.py looks
// them up: tables and actions by full name or by a unique suffix, key fields
// by their P4 name or by the header.field they read.
type nameIndex struct {
	json    *bmv2json.Program
	tables  []*tableInfo
	actions map[int]*bmv2json.Action
}

type tableInfo struct {
	t    *bmv2json.Table
	keys []keyInfo
	// needsPriority is true for tables with ternary, range or optional keys:
	// their entries overlap, so bmv2 orders them by priority.
	needsPriority bool
}

type keyInfo struct {
	name      string // the key's P4 name, or header.field of its target
	matchType string
	width     int
}

// newNames indexes prog for name resolution.
func newNames(prog *bmv2json.Program) (*nameIndex, error) {
	p := &nameIndex{json: prog, actions: map[int]*bmv2json.Action{}}
	for i := range prog.Actions {
		p.actions[prog.Actions[i].ID] = &prog.Actions[i]
	}
	for pi := range prog.Pipelines {
		for ti := range prog.Pipelines[pi].Tables {
			t := &prog.Pipelines[pi].Tables[ti]
			info := &tableInfo{t: t}
			for _, k := range t.Key {
				name := k.Name
				if name == "" {
					name = strings.Join(k.Target, ".")
				}
				width, err := p.keyWidth(k)
				if err != nil {
					return nil, fmt.Errorf("table %s key %s: %w", t.Name, name, err)
				}
				info.keys = append(info.keys, keyInfo{name: name, matchType: k.MatchType, width: width})
				switch k.MatchType {
				case "ternary", "range", "optional":
					info.needsPriority = true
				}
			}
			p.tables = append(p.tables, info)
		}
	}
	return p, nil
}

// keyWidth is the width of the field a table key reads.
func (p *nameIndex) keyWidth(k bmv2json.TableKey) (int, error) {
	if len(k.Target) != 2 {
		return 0, fmt.Errorf("key target %v is not [header, field]", k.Target)
	}
	if k.Target[1] == "$valid$" || k.MatchType == "valid" {
		return 1, nil
	}
	return p.fieldWidth(k.Target[0], k.Target[1])
}

// fieldWidth returns the width in bits of field f of header (or stack
// element) instance hdr.
func (p *nameIndex) fieldWidth(hdr, f string) (int, error) {
	typeName := ""
	for _, h := range p.json.Headers {
		if h.Name == hdr {
			typeName = h.HeaderType
			break
		}
	}
	if typeName == "" {
		return 0, fmt.Errorf("no header instance %q", hdr)
	}
	for _, ht := range p.json.HeaderTypes {
		if ht.Name != typeName {
			continue
		}
		for _, fld := range ht.Fields {
			if fld.Name == f {
				return fld.Bitwidth, nil
			}
		}
		return 0, fmt.Errorf("header type %s has no field %q", typeName, f)
	}
	return 0, fmt.Errorf("no header type %q", typeName)
}

// lookup finds name among candidates: an exact match first, then a unique
// candidate ending with name (bmv2stf.py uses a plain suffix test, so
// "ipv4_lpm" finds "MyIngress.ipv4_lpm").
func lookup[T any](kind, name string, candidates []T, nameOf func(T) string) (T, error) {
	return lookupIn(kind, name, "the program has", candidates, nameOf)
}

// lookupIn is lookup with the phrase that introduces the candidates in the
// "not found" error.
func lookupIn[T any](kind, name, listed string, candidates []T, nameOf func(T) string) (T, error) {
	var zero T
	for _, c := range candidates {
		if nameOf(c) == name {
			return c, nil
		}
	}
	var found []T
	for _, c := range candidates {
		if strings.HasSuffix(nameOf(c), name) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		var names []string
		for _, c := range candidates {
			names = append(names, nameOf(c))
		}
		return zero, fmt.Errorf("no %s %q (%s: %s)", kind, name, listed, listOrNone(names))
	}
	var names []string
	for _, c := range found {
		names = append(names, nameOf(c))
	}
	return zero, fmt.Errorf("%s name %q is ambiguous: %s", kind, name, strings.Join(names, ", "))
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	const max = 12
	if len(names) > max {
		return strings.Join(names[:max], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
	}
	return strings.Join(names, ", ")
}

func (p *nameIndex) table(name string) (*tableInfo, error) {
	return lookup("table", name, p.tables, func(t *tableInfo) string { return t.t.Name })
}

// tableAction finds an action the table may run.
func (p *nameIndex) tableAction(t *tableInfo, name string) (*bmv2json.Action, error) {
	var cands []*bmv2json.Action
	for _, id := range t.t.ActionIDs {
		if a := p.actions[id]; a != nil {
			cands = append(cands, a)
		}
	}
	return lookupIn("action", name, "table "+t.t.Name+" allows", cands, func(a *bmv2json.Action) string { return a.Name })
}

var stackIndexDollar = regexp.MustCompile(`^(.*)\$([0-9]+)(.*)$`)

// keyIndex finds the key element an STF "FIELD:" names, following
// bmv2stf.py: the exact name, or with "$" or ".$valid$" appended, or with
// ".valid" written "$valid$"; failing that, a unique key whose name ends in
// "." followed by one of those (p4c names keys "hdr.ipv4.dstAddr", tests
// often write "ipv4.dstAddr"). "h$0.f" stands for "h[0].f".
func (t *tableInfo) keyIndex(field string) (int, error) {
	if m := stackIndexDollar.FindStringSubmatch(field); m != nil {
		field = m[1] + "[" + m[2] + "]" + m[3]
	}
	alts := []string{field, field + "$", field + ".$valid$"}
	if strings.HasSuffix(field, ".valid") {
		alts = append(alts, strings.TrimSuffix(field, "valid")+"$valid$")
	}
	for _, name := range alts {
		for i, k := range t.keys {
			if k.name == name {
				return i, nil
			}
		}
	}
	match := -1
	for i, k := range t.keys {
		hit := field == "valid" && strings.HasSuffix(k.name, ".$valid$")
		for _, alt := range alts {
			hit = hit || strings.HasSuffix(k.name, "."+alt)
		}
		if !hit {
			continue
		}
		if match >= 0 {
			return 0, fmt.Errorf("table %s: key field %q is ambiguous: %s, %s", t.t.Name, field, t.keys[match].name, k.name)
		}
		match = i
	}
	if match < 0 {
		var names []string
		for _, k := range t.keys {
			names = append(names, k.name)
		}
		return 0, fmt.Errorf("table %s has no key field %q (its keys: %s)", t.t.Name, field, listOrNone(names))
	}
	return match, nil
}

// resolvedKey is one resolved key element of an entry, ready for the engine.
// Values are big-endian bytes of the key's width (rounded up to bytes).
type resolvedKey struct {
	Field     string // the key's name in the program
	MatchType string // exact, lpm, ternary, range, optional, valid
	Width     int
	Value     []byte
	Mask      []byte // ternary and optional
	PrefixLen int    // lpm
	High      []byte // range: Value is the low end
}

// resolvedEntry is an "add" resolved against the program.
type resolvedEntry struct {
	Table      string // full table name
	Keys       []resolvedKey
	Action     string // full action name
	ActionArgs [][]byte
	// Priority follows P4Runtime: a larger value wins. It is the STF
	// priority unchanged; 0 when the table needs none.
	Priority int
}

// defaultAction is a "setdefault" resolved against the program.
type defaultAction struct {
	Table      string
	Action     string
	ActionArgs [][]byte
}

// resolveAdd maps an add command onto the program's table, keys and action.
func (p *nameIndex) resolveAdd(c *Add) (*resolvedEntry, error) {
	t, err := p.table(c.Table)
	if err != nil {
		return nil, err
	}
	e := &resolvedEntry{Table: t.t.Name, Keys: make([]resolvedKey, len(t.keys))}
	set := make([]bool, len(t.keys))
	for _, km := range c.Keys {
		i, err := t.keyIndex(km.Field)
		if err != nil {
			return nil, err
		}
		if set[i] {
			return nil, fmt.Errorf("key field %s given twice", t.keys[i].name)
		}
		set[i] = true
		if e.Keys[i], err = matchValue(t.keys[i], km); err != nil {
			// bmv2stf.py hands such values to simple_switch_CLI, which
			// refuses the entry.
			return nil, rejected(fmt.Errorf("table %s key %s: %w", t.t.Name, t.keys[i].name, err))
		}
	}
	for i, k := range t.keys {
		if !set[i] {
			// bmv2stf.py leaves unspecified keys as wildcards (ternary, lpm)
			// or zero (exact).
			e.Keys[i] = wildcard(k)
		}
	}
	if t.needsPriority {
		if c.Priority < 0 {
			return nil, rejected(fmt.Errorf("table %s has ternary or range keys: write a priority after the table name (add %s PRIORITY ...)", t.t.Name, c.Table))
		}
		e.Priority = c.Priority
	}
	a, err := p.tableAction(t, c.Action.Name)
	if err != nil {
		return nil, err
	}
	e.Action = a.Name
	if e.ActionArgs, err = actionArgs(a, c.Action); err != nil {
		return nil, err
	}
	return e, nil
}

// resolveSetDefault maps a setdefault command onto the program.
func (p *nameIndex) resolveSetDefault(c *SetDefault) (*defaultAction, error) {
	t, err := p.table(c.Table)
	if err != nil {
		return nil, err
	}
	a, err := p.tableAction(t, c.Action.Name)
	if err != nil {
		return nil, err
	}
	args, err := actionArgs(a, c.Action)
	if err != nil {
		return nil, err
	}
	return &defaultAction{Table: t.t.Name, Action: a.Name, ActionArgs: args}, nil
}

func actionArgs(a *bmv2json.Action, call ActionCall) ([][]byte, error) {
	args := make([][]byte, len(a.RuntimeData))
	for _, arg := range call.Args {
		i := -1
		for j, rd := range a.RuntimeData {
			if rd.Name == arg.Name {
				i = j
			}
		}
		if i < 0 {
			var names []string
			for _, rd := range a.RuntimeData {
				names = append(names, rd.Name)
			}
			return nil, fmt.Errorf("action %s has no parameter %q (its parameters: %s)", a.Name, arg.Name, listOrNone(names))
		}
		if args[i] != nil {
			return nil, fmt.Errorf("action %s: parameter %s given twice", a.Name, arg.Name)
		}
		if arg.Value.HasWildcards() {
			return nil, rejected(fmt.Errorf("action %s parameter %s: %q may not contain '*'", a.Name, arg.Name, arg.Value.Text))
		}
		b, err := toBytes(arg.Value.Value, a.RuntimeData[i].Bitwidth)
		if err != nil {
			return nil, rejected(fmt.Errorf("action %s parameter %s: %w", a.Name, arg.Name, err))
		}
		args[i] = b
	}
	for i, rd := range a.RuntimeData {
		if args[i] == nil {
			return nil, fmt.Errorf("action %s needs parameter %s (%d bits)", a.Name, rd.Name, rd.Bitwidth)
		}
	}
	return args, nil
}

func bytesFor(width int) int { return (width + 7) / 8 }

// toBytes encodes v as width bits, big-endian. Negative values are taken in
// two's complement; values that do not fit are an error.
func toBytes(v *big.Int, width int) ([]byte, error) {
	n := new(big.Int).Set(v)
	if n.Sign() < 0 {
		if n.BitLen() > width {
			return nil, fmt.Errorf("%v does not fit in %d bits", v, width)
		}
		n.Add(n, new(big.Int).Lsh(big.NewInt(1), uint(width)))
	}
	if n.BitLen() > width {
		return nil, fmt.Errorf("value %#x does not fit in %d bits", v, width)
	}
	return n.FillBytes(make([]byte, bytesFor(width))), nil
}

func ones(width int) *big.Int {
	return new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(width)), big.NewInt(1))
}

func wildcard(k keyInfo) resolvedKey {
	m := resolvedKey{Field: k.name, MatchType: k.matchType, Width: k.width, Value: make([]byte, bytesFor(k.width))}
	switch k.matchType {
	case "ternary", "optional":
		m.Mask = make([]byte, bytesFor(k.width))
	case "range":
		m.High = ones(k.width).FillBytes(make([]byte, bytesFor(k.width)))
	}
	return m
}

// matchValue turns the STF value of one key into the engine's form, reading
// '*' digits and missing prefix lengths as bmv2stf.py does.
func matchValue(k keyInfo, km KeyMatch) (resolvedKey, error) {
	m := resolvedKey{Field: k.name, MatchType: k.matchType, Width: k.width}
	v := km.Value
	full := ones(k.width)
	refinement := func(what string) error {
		return fmt.Errorf("%s is a %s key: %q cannot use %s", k.name, k.matchType, km.String(), what)
	}
	var err error
	switch k.matchType {
	case "exact", "valid":
		if km.Mask != nil || km.PrefixLen >= 0 || km.RangeHigh != nil {
			return m, refinement("a mask, prefix or range")
		}
		if v.HasWildcards() {
			return m, refinement("'*' digits")
		}
		m.Value, err = toBytes(v.Value, k.width)
	case "lpm":
		if km.Mask != nil || km.RangeHigh != nil {
			return m, refinement("a mask or range")
		}
		m.PrefixLen = km.PrefixLen
		if m.PrefixLen < 0 {
			m.PrefixLen = k.width
			if v.Care != nil {
				// The prefix covers the digits written before any '*'.
				m.PrefixLen = min(k.width, v.Bits-countWildcardBits(v))
			}
		}
		if m.PrefixLen > k.width {
			return m, fmt.Errorf("prefix length %d is longer than the %d-bit field", m.PrefixLen, k.width)
		}
		m.Value, err = toBytes(v.Value, k.width)
	case "ternary", "optional":
		if km.PrefixLen >= 0 || km.RangeHigh != nil {
			return m, refinement("a prefix or range")
		}
		mask := full
		switch {
		case km.Mask != nil:
			mask = km.Mask.Value
		case v.Care != nil:
			mask = new(big.Int).And(v.Care, full)
		}
		if k.matchType == "optional" && mask.Sign() != 0 && mask.Cmp(full) != 0 {
			return m, fmt.Errorf("optional key takes a full value or '*' digits throughout, not mask %#x", mask)
		}
		if m.Value, err = toBytes(v.Value, k.width); err != nil {
			return m, err
		}
		m.Mask, err = toBytes(new(big.Int).And(mask, full), k.width)
	case "range":
		if km.Mask != nil || km.PrefixLen >= 0 || v.HasWildcards() {
			return m, refinement("a mask, prefix or '*' digits")
		}
		high := v.Value
		if km.RangeHigh != nil {
			high = km.RangeHigh.Value
		}
		if m.Value, err = toBytes(v.Value, k.width); err != nil {
			return m, err
		}
		m.High, err = toBytes(high, k.width)
	default:
		return m, fmt.Errorf("match kind %q is not supported", k.matchType)
	}
	return m, err
}

func countWildcardBits(n Number) int {
	bits := n.Bits / max(1, len(n.Text)-2) // bits per digit
	return strings.Count(n.Text, "*") * bits
}
