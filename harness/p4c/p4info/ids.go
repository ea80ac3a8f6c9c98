package p4info

import (
	"fmt"
	"sort"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
)

// Symbol is one control-plane entity before IDs are assigned: its P4Runtime
// resource type, its fully qualified control-plane name and the value of an
// @id annotation when the program gave one.
type Symbol struct {
	Kind p4configv1.P4Ids_Prefix
	Name string
	ID   uint32 // 0 unless @id fixed it
}

// SymbolTable assigns P4Runtime IDs and aliases exactly as p4c's
// P4RuntimeSymbolTable does, so that controllers written against p4c's P4Info
// see the same numbers: @id values first (with the type prefix added when the
// user left the top byte zero), then the remaining names of each type in
// lexicographic order, hashed with Jenkins' one-at-a-time hash into the low
// 24 bits and linearly probed on collision.
type SymbolTable struct {
	ids      map[p4configv1.P4Ids_Prefix]map[string]uint32
	assigned map[uint32]bool
	suffixes *suffixNode
	seen     map[string]bool
}

type suffixNode struct {
	edges     map[string]*suffixNode
	instances int
}

// NewSymbolTable returns an empty table.
func NewSymbolTable() *SymbolTable {
	return &SymbolTable{
		ids:      map[p4configv1.P4Ids_Prefix]map[string]uint32{},
		assigned: map[uint32]bool{},
		suffixes: &suffixNode{edges: map[string]*suffixNode{}},
		seen:     map[string]bool{},
	}
}

// Add records a symbol; adding the same name twice for one type is a no-op,
// as in p4c (a table applied from two places is still one table).
func (t *SymbolTable) Add(s Symbol) error {
	byName := t.ids[s.Kind]
	if byName == nil {
		byName = map[string]uint32{}
		t.ids[s.Kind] = byName
	}
	if _, dup := byName[s.Name]; dup {
		return nil
	}
	id := uint32(0)
	if s.ID != 0 {
		prefix := uint32(s.Kind) << 24
		if s.ID&0xff000000 != 0 && s.ID&0xff000000 != prefix {
			return fmt.Errorf("%s: @id 0x%08x has the wrong 8-bit prefix for this kind of object (want 0x%02x)", s.Name, s.ID, uint32(s.Kind))
		}
		id = s.ID | prefix
		if t.assigned[id] {
			return fmt.Errorf("%s: @id 0x%08x is assigned to multiple declarations", s.Name, id)
		}
		t.assigned[id] = true
	}
	byName[s.Name] = id
	t.addSuffix(s.Name)
	return nil
}

// AssignIDs gives every symbol without an @id its hashed ID. Call it once,
// after all symbols are added.
func (t *SymbolTable) AssignIDs() error {
	kinds := make([]int, 0, len(t.ids))
	for k := range t.ids {
		kinds = append(kinds, int(k))
	}
	sort.Ints(kinds)
	for _, k := range kinds {
		byName := t.ids[p4configv1.P4Ids_Prefix(k)]
		var names []string
		for n, id := range byName {
			if id == 0 {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			h := JenkinsOneAtATime(n)
			found := false
			// Linear probing over the 24-bit space, as p4c's probeForId.
			for i := 0; i < 1<<24; i++ {
				id := uint32(k)<<24 | (h & 0xffffff)
				if !t.assigned[id] {
					t.assigned[id] = true
					byName[n] = id
					found = true
					break
				}
				h++
			}
			if !found {
				return fmt.Errorf("no available P4Runtime id for %s", n)
			}
		}
	}
	return nil
}

// ID returns the assigned ID of a symbol (0 when unknown).
func (t *SymbolTable) ID(kind p4configv1.P4Ids_Prefix, name string) uint32 {
	return t.ids[kind][name]
}

// JenkinsOneAtATime is the hash p4c applies to control-plane names.
func JenkinsOneAtATime(s string) uint32 {
	var h uint32
	for i := 0; i < len(s); i++ {
		h += uint32(s[i])
		h += h << 10
		h ^= h >> 6
	}
	h += h << 3
	h ^= h >> 11
	h += h << 15
	return h
}

func (t *SymbolTable) addSuffix(name string) {
	if t.seen[name] {
		return
	}
	t.seen[name] = true
	parts := strings.Split(name, ".")
	n := t.suffixes
	for i := len(parts) - 1; i >= 0; i-- {
		next := n.edges[parts[i]]
		if next == nil {
			next = &suffixNode{edges: map[string]*suffixNode{}}
			n.edges[parts[i]] = next
		}
		next.instances++
		n = next
	}
}

// Alias is the shortest dot-separated suffix of name that no other symbol
// (of any kind) shares, p4c's rule for P4Info preamble aliases.
func (t *SymbolTable) Alias(name string) string {
	parts := strings.Split(name, ".")
	n := t.suffixes
	need := 0
	for i := len(parts) - 1; i >= 0; i-- {
		next := n.edges[parts[i]]
		if next == nil {
			return name
		}
		n = next
		need++
		if n.instances < 2 {
			break
		}
	}
	return strings.Join(parts[len(parts)-need:], ".")
}
