package engine

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A header nothing in the controls names, extracted lazily, still gives
// its values to a digest's learn list and to the field list a clone
// keeps: both read it after the controls.
func TestLazyHeadersReachLearnListsAndClonedFieldLists(t *testing.T) {
	in := []byte{7, 0xbe, 0xef, 'p'}
	doc := miniJSON(`["a",8,false],["b",16,false]`,
		`{"op":"generate_digest","parameters":[{"type":"hexstr","value":"0x1"},{"type":"hexstr","value":"0x1"}]}`, nil)
	doc = strings.Replace(doc, `"learn_lists":[]`,
		`"learn_lists":[{"id":1,"name":"learn","elements":[`+fld("h", "a")+`,`+fld("h", "b")+`]}]`, 1)
	p, err := loadShaped(doc)
	if err != nil {
		t.Fatal(err)
	}
	if p.headers[p.headerByName["h"]].lazyBit == 0 {
		t.Fatal("h is not extracted lazily: the test tests nothing")
	}
	var got []Digest
	sw := NewSwitch(p, Config{Digest: func(d Digest) { got = append(got, d) }})
	run(t, sw, 0, in)
	if len(got) != 1 || !bytes.Equal(got[0].Values[0], []byte{7}) || !bytes.Equal(got[0].Values[1], []byte{0xbe, 0xef}) {
		t.Errorf("digests %+v, want one with a=07 and b=beef", got)
	}

	p = miniProgram(t, `["a",8,false],["b",16,false]`,
		`{"op":"clone_ingress_pkt_to_egress","parameters":[{"type":"hexstr","value":"0x9"},{"type":"hexstr","value":"0x1"}]}`,
		map[string]string{"field_lists": `[{"id":1,"name":"keep","elements":[` + fld("h", "b") + `]}]`})
	sw = NewSwitch(p, Config{})
	if err := sw.SetCloneSession(9, CloneSession{Port: 7}); err != nil {
		t.Fatal(err)
	}
	out := run(t, sw, 0, in)
	if len(out) != 2 {
		t.Fatalf("outputs %+v, want the packet and its clone", out)
	}
	for _, o := range out {
		if !bytes.Equal(o.data, in) {
			t.Errorf("port %d: % x, want % x (b kept from the original's bytes)", o.port, o.data, in)
		}
	}
}

// A resubmitted or recirculated packet's metadata starts from zero apart
// from its field list, the ingress timestamp too, read or not: its next
// pass reads 0 there.
func TestResubmittedPacketsStartWithoutTheirIngressTimestamp(t *testing.T) {
	for _, pass := range []string{"resubmit", "recirculate"} {
		p := miniProgram(t, `["a",8,false],["b",8,false]`,
			assign(fld("h", "a"), fld("standard_metadata", "instance_type"))+`,`+
				`{"op":"_jump_if_zero","parameters":[`+fld("standard_metadata", "instance_type")+`,{"type":"hexstr","value":"0x4"}]},`+
				assign(fld("h", "b"), op("&", fld("standard_metadata", "ingress_global_timestamp"), hexv("0xff")))+`,`+
				`{"op":"_jump","parameters":[{"type":"hexstr","value":"0x5"}]},`+
				`{"op":"`+pass+`","parameters":[{"type":"hexstr","value":"0x1"}]}`,
			map[string]string{"field_lists": `[{"id":1,"name":"none","elements":[]}]`})
		calls := 0
		clock := func() time.Time { calls++; return time.Unix(0, 0).Add(time.Duration(calls) * 5 * time.Microsecond) }
		out := run(t, NewSwitch(p, Config{Now: clock}), 0, []byte{0, 0xee})
		if len(out) != 1 || out[0].data[1] != 0 {
			t.Errorf("%s: got %+v, want one packet whose second pass read ingress_global_timestamp 0", pass, out)
		}
	}
}
