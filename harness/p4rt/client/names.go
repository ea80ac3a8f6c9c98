package client

import (
	"fmt"
	"sort"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
)

// symbols indexes a P4Info by name (the preamble's fully qualified name or
// its alias) and by ID.
type symbols struct {
	info           *p4configv1.P4Info
	tables         named[*p4configv1.Table]
	actions        named[*p4configv1.Action]
	counters       named[*p4configv1.Counter]
	directCounters named[*p4configv1.DirectCounter]
	meters         named[*p4configv1.Meter]
	directMeters   named[*p4configv1.DirectMeter]
	registers      named[*p4configv1.Register]
	packetMeta     named[*p4configv1.ControllerPacketMetadata]
}

// named finds one kind of P4Info object by name, alias or ID.
type named[T interface{ GetPreamble() *p4configv1.Preamble }] struct {
	kind   string
	byName map[string]T
	byID   map[uint32]T
	names  []string
}

func newNamed[T interface{ GetPreamble() *p4configv1.Preamble }](kind string, objs []T) named[T] {
	n := named[T]{kind: kind, byName: map[string]T{}, byID: map[uint32]T{}}
	for _, o := range objs {
		p := o.GetPreamble()
		n.byName[p.GetName()] = o
		n.byID[p.GetId()] = o
		n.names = append(n.names, p.GetName())
	}
	// Aliases only where they name nothing else: a full name always wins.
	for _, o := range objs {
		if a := o.GetPreamble().GetAlias(); a != "" {
			if _, taken := n.byName[a]; !taken {
				n.byName[a] = o
			}
		}
	}
	sort.Strings(n.names)
	return n
}

func (n named[T]) find(name string) (T, error) {
	if o, ok := n.byName[name]; ok {
		return o, nil
	}
	var zero T
	return zero, fmt.Errorf("the P4Info has no %s %q (its %ss: %s)", n.kind, name, n.kind, listOrNone(n.names))
}

// nameOf names an ID for error messages; unknown IDs are shown as numbers.
func (n named[T]) nameOf(id uint32) string {
	if o, ok := n.byID[id]; ok {
		return o.GetPreamble().GetName()
	}
	return fmt.Sprintf("%s id %d", n.kind, id)
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func newSymbols(info *p4configv1.P4Info) *symbols {
	return &symbols{
		info:           info,
		tables:         newNamed("table", info.GetTables()),
		actions:        newNamed("action", info.GetActions()),
		counters:       newNamed("counter", info.GetCounters()),
		directCounters: newNamed("direct counter", info.GetDirectCounters()),
		meters:         newNamed("meter", info.GetMeters()),
		directMeters:   newNamed("direct meter", info.GetDirectMeters()),
		registers:      newNamed("register", info.GetRegisters()),
		packetMeta:     newNamed("controller packet metadata", info.GetControllerPacketMetadata()),
	}
}

// needsPriority reports whether a table's entries carry a priority: those
// with a ternary, range or optional match field (P4Runtime 9.1).
func needsPriority(t *p4configv1.Table) bool {
	for _, mf := range t.GetMatchFields() {
		switch mf.GetMatchType() {
		case p4configv1.MatchField_TERNARY, p4configv1.MatchField_RANGE, p4configv1.MatchField_OPTIONAL:
			return true
		}
	}
	return false
}

// tableAction finds an action the table may use.
func (s *symbols) tableAction(t *p4configv1.Table, name string) (*p4configv1.Action, error) {
	a, err := s.actions.find(name)
	if err != nil {
		return nil, err
	}
	var allowed []string
	for _, ref := range t.GetActionRefs() {
		if ref.GetId() == a.GetPreamble().GetId() {
			return a, nil
		}
		allowed = append(allowed, s.actions.nameOf(ref.GetId()))
	}
	return nil, fmt.Errorf("action %s is not an action of table %s (it allows %s)", a.GetPreamble().GetName(), t.GetPreamble().GetName(), listOrNone(allowed))
}

// directCounterOf returns the direct counter attached to a table.
func (s *symbols) directCounterOf(t *p4configv1.Table) (*p4configv1.DirectCounter, error) {
	for _, id := range t.GetDirectResourceIds() {
		if dc, ok := s.directCounters.byID[id]; ok {
			return dc, nil
		}
	}
	return nil, fmt.Errorf("table %s has no direct counter", t.GetPreamble().GetName())
}

// directMeterOf returns the direct meter attached to a table.
func (s *symbols) directMeterOf(t *p4configv1.Table) (*p4configv1.DirectMeter, error) {
	for _, id := range t.GetDirectResourceIds() {
		if dm, ok := s.directMeters.byID[id]; ok {
			return dm, nil
		}
	}
	return nil, fmt.Errorf("table %s has no direct meter", t.GetPreamble().GetName())
}

// registerWidth is a register's cell width in bits (bit<W> or int<W>).
func registerWidth(r *p4configv1.Register) int32 {
	bs := r.GetTypeSpec().GetBitstring()
	if w := bs.GetBit().GetBitwidth(); w > 0 {
		return w
	}
	return bs.GetInt().GetBitwidth()
}
