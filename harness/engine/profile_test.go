package engine

import (
	"strings"
	"testing"
)

// selectorProgram has an indirect_ws table keyed on h.a whose action writes
// its parameter into h.b; the selector hashes h.c.
func selectorProgram(t *testing.T) *Program {
	t.Helper()
	doc := miniJSON(`["a",8,false],["b",8,false],["c",8,false]`,
		assign(fld("h", "b"), `{"type":"runtime_data","value":0}`),
		map[string]string{"runtime_data": `[{"name":"p","bitwidth":8}]`, "action_data": `["0x00"]`})
	doc = strings.Replace(doc, `"key":[],
   "match_type":"exact","type":"simple"`, `"key":[{"match_type":"exact","name":"h.a","target":["h","a"],"mask":null}],
   "match_type":"exact","type":"indirect_ws","action_profile":"ingress.sel"`, 1)
	doc = strings.Replace(doc, `"max_size":1,`, `"max_size":16,`, 1)
	doc = strings.Replace(doc, `"action_profiles":[],"conditionals":[]},`,
		`"action_profiles":[{"name":"ingress.sel","id":0,"max_size":8,"selector":{"algo":"identity","input":[`+fld("h", "c")+`]}}],"conditionals":[]},`, 1)
	p, err := Load([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return p
}

func TestActionSelectorPicksAGroupMemberByHash(t *testing.T) {
	p := selectorProgram(t)
	if ti, err := p.Table("t"); err != nil || ti.ActionProfile != "ingress.sel" || !ti.HasSelector {
		t.Fatalf("table info %+v, %v", ti, err)
	}
	sw := NewSwitch(p, Config{})
	m1, err := sw.AddMember("sel", "act", [][]byte{{0x11}})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := sw.AddMember("sel", "ingress.act", [][]byte{{0x22}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := sw.AddGroup("sel")
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.SetGroupMembers("sel", g, []MemberHandle{m2, m1}); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.AddEntry("t", Entry{Match: []Match{Exact([]byte{1})}, Group: g}); err != nil {
		t.Fatal(err)
	}
	h, err := sw.AddEntry("t", Entry{Match: []Match{Exact([]byte{2})}, Member: m2})
	if err != nil {
		t.Fatal(err)
	}
	// identity hash of c: even c picks the first member (m1), odd the second
	for c, want := range map[byte]byte{4: 0x11, 7: 0x22} {
		got := run(t, sw, 0, []byte{1, 0, c})
		if len(got) != 1 || got[0].data[1] != want {
			t.Errorf("c=%d: got %+v, want b=0x%02x", c, got, want)
		}
	}
	if got := run(t, sw, 0, []byte{2, 0, 0}); len(got) != 1 || got[0].data[1] != 0x22 {
		t.Errorf("member entry: got %+v, want b=0x22", got)
	}
	if err := sw.RepointEntry("t", h, m1, 0); err != nil {
		t.Fatal(err)
	}
	if got := run(t, sw, 0, []byte{2, 0, 0}); len(got) != 1 || got[0].data[1] != 0x11 {
		t.Errorf("after repoint: got %+v, want b=0x11", got)
	}
	if err := sw.DeleteMember("sel", m1); err == nil || !strings.Contains(err.Error(), "used by a table entry") {
		t.Errorf("deleting a member in use: %v", err)
	}
	if _, err := sw.AddEntry("t", Entry{Match: []Match{Exact([]byte{3})}, Action: "act", Args: [][]byte{{1}}}); err == nil ||
		!strings.Contains(err.Error(), "an entry needs exactly one of Member and Group") {
		t.Errorf("direct action on an indirect table: %v", err)
	}
}

// ternaryProgram has a ternary table keyed on h.a whose action writes its
// parameter into h.b.
func ternaryProgram(t *testing.T) *Program {
	t.Helper()
	doc := miniJSON(`["a",8,false],["b",8,false]`,
		assign(fld("h", "b"), `{"type":"runtime_data","value":0}`),
		map[string]string{"runtime_data": `[{"name":"p","bitwidth":8}]`, "action_data": `["0x00"]`})
	doc = strings.Replace(doc, `"key":[],
   "match_type":"exact"`, `"key":[{"match_type":"ternary","name":"h.a","target":["h","a"],"mask":null}],
   "match_type":"ternary"`, 1)
	doc = strings.Replace(doc, `"max_size":1,`, `"max_size":16,`, 1)
	p, err := Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTernaryPriorityLowestNumberThenFirstAddedWins(t *testing.T) {
	sw := NewSwitch(ternaryProgram(t), Config{})
	add := func(v, m byte, prio int32, out byte) {
		t.Helper()
		if _, err := sw.AddEntry("t", Entry{Match: []Match{Ternary([]byte{v}, []byte{m})}, Priority: prio, Action: "act", Args: [][]byte{{out}}}); err != nil {
			t.Fatal(err)
		}
	}
	add(0x00, 0x00, 10, 1) // matches everything
	add(0x10, 0xf0, 5, 2)  // 0x1?
	add(0x12, 0xff, 5, 3)  // 0x12 exactly, same priority, added later
	add(0x12, 0xff, 1, 4)  // higher priority, added last
	for in, want := range map[byte]byte{0x12: 4, 0x15: 2, 0x77: 1} {
		if out := run(t, sw, 0, []byte{in, 0}); len(out) != 1 || out[0].data[1] != want {
			t.Errorf("a=%#x: got %+v, want b=%d", in, out, want)
		}
	}
	h, err := sw.FindEntry("t", []Match{Ternary([]byte{0x12}, []byte{0xff})}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.DeleteEntry("t", h); err != nil {
		t.Fatal(err)
	}
	if out := run(t, sw, 0, []byte{0x12, 0}); len(out) != 1 || out[0].data[1] != 2 {
		t.Errorf("after deleting the priority-1 entry: got %+v, want the first added priority-5 entry (b=2)", out)
	}
}

func TestRangeAndOptionalKeys(t *testing.T) {
	doc := miniJSON(`["a",8,false],["b",8,false],["c",16,false]`,
		assign(fld("h", "b"), `{"type":"runtime_data","value":0}`),
		map[string]string{"runtime_data": `[{"name":"p","bitwidth":8}]`, "action_data": `["0x00"]`})
	doc = strings.Replace(doc, `"key":[],
   "match_type":"exact"`, `"key":[{"match_type":"ternary","name":"h.a","target":["h","a"],"mask":null},`+
		`{"match_type":"range","name":"h.c","target":["h","c"],"mask":null}],
   "match_type":"range"`, 1)
	doc = strings.Replace(doc, `"max_size":1,`, `"max_size":16,`, 1)
	p, err := Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	sw := NewSwitch(p, Config{})
	for _, e := range []Entry{
		{Match: []Match{Ternary([]byte{7}, []byte{0xff}), Range([]byte{0x01, 0x00}, []byte{0x01, 0xff})}, Priority: 1, Action: "act", Args: [][]byte{{1}}},
		{Match: []Match{{Wildcard: true}, Range([]byte{0x00}, []byte{0x02, 0x00})}, Priority: 2, Action: "act", Args: [][]byte{{2}}},
	} {
		if _, err := sw.AddEntry("t", e); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		a    byte
		c    [2]byte
		want byte
	}{
		{7, [2]byte{0x01, 0x80}, 1}, // both entries match, priority 1 wins
		{8, [2]byte{0x01, 0x80}, 2}, // a differs: only the wildcard entry
		{7, [2]byte{0x02, 0x00}, 2}, // c outside the first range, inside the second (inclusive)
		{7, [2]byte{0x02, 0x01}, 0}, // no entry: default action with 0
	}
	for _, tc := range cases {
		out := run(t, sw, 0, []byte{tc.a, 0xff, tc.c[0], tc.c[1]})
		if len(out) != 1 || out[0].data[1] != tc.want {
			t.Errorf("a=%d c=%x: got %+v, want b=%d", tc.a, tc.c, out, tc.want)
		}
	}
	if _, err := sw.AddEntry("t", Entry{Match: []Match{{Wildcard: true}, Range([]byte{3}, []byte{2})}, Action: "act", Args: [][]byte{{1}}}); err == nil ||
		!strings.Contains(err.Error(), "is empty") {
		t.Errorf("an empty range: %v", err)
	}
}
