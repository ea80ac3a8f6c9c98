package bmv2json

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/internal/repo"
)

func assertRoundTrip(t *testing.T, name string, data []byte) {
	t.Helper()
	p, err := Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatalf("%s: marshal: %v", name, err)
	}
	var want, got any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s: content changed by unmarshal+marshal: %s", name, firstDifference("", want, got))
	}
}

// firstDifference describes where two decoded JSON documents first differ.
func firstDifference(path string, a, b any) string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return path + ": object became " + reflect.TypeOf(b).String()
		}
		for k := range av {
			if _, ok := bv[k]; !ok {
				return path + "." + k + ": member lost"
			}
			if !reflect.DeepEqual(av[k], bv[k]) {
				return firstDifference(path+"."+k, av[k], bv[k])
			}
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				return path + "." + k + ": member added"
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return path + ": list changed length or type"
		}
		for i := range av {
			if !reflect.DeepEqual(av[i], bv[i]) {
				return firstDifference(path+"["+string(rune('0'+i%10))+"]", av[i], bv[i])
			}
		}
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return path + ": " + string(ja) + " became " + string(jb)
}

func TestRealP4cOutputSurvivesUnmarshalMarshal(t *testing.T) {
	ref := repo.SharedOrSkip(t, "p4c-conformance", "reference")
	files, err := filepath.Glob(filepath.Join(ref, "*.json"))
	if err != nil || len(files) == 0 {
		t.Skipf("no JSON in %s", ref)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		assertRoundTrip(t, filepath.Base(f), data)
	}
}

func TestCheckedInProgramSurvivesUnmarshalMarshal(t *testing.T) {
	data, err := os.ReadFile("testdata/forms.json")
	if err != nil {
		t.Fatal(err)
	}
	assertRoundTrip(t, "forms.json", data)
}

func TestValueShapesDecodeToTheirKinds(t *testing.T) {
	cases := map[string]Kind{
		`{"type":"field","value":["h","f"]}`:  KindNames,
		`{"type":"hexstr","value":"0x01"}`:    KindString,
		`{"type":"runtime_data","value":2}`:   KindInt,
		`{"type":"bool","value":false}`:       KindBool,
		`{"type":"lookahead","value":[0,16]}`: KindInts,
		`{"type":"expression","value":{"op":"not","left":null,"right":{"type":"bool","value":true}}}`:                                  KindOp,
		`{"type":"expression","value":{"type":"expression","value":{"op":"d2b","left":null,"right":{"type":"hexstr","value":"0x1"}}}}`: KindInner,
		`{"op":"add_header","parameters":[{"type":"header","value":"h"}]}`:                                                             KindPrim,
		`7`: KindInt,
	}
	for in, kind := range cases {
		var v Value
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if v.Kind != kind {
			t.Errorf("%s: kind %d, want %d", in, v.Kind, kind)
		}
		out, err := json.Marshal(&v)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ReplaceAll(in, " ", "") != strings.ReplaceAll(string(out), " ", "") {
			t.Errorf("%s re-marshalled as %s", in, out)
		}
	}
}

func TestHeaderFieldTupleKeepsVarbitAndSign(t *testing.T) {
	var ht HeaderType
	in := `{"name":"t","id":1,"fields":[["a",9,true],["opts","*"],["s",8,false,true]],"max_length":60}`
	if err := json.Unmarshal([]byte(in), &ht); err != nil {
		t.Fatal(err)
	}
	if !ht.Fields[0].Signed || ht.Fields[0].Bitwidth != 9 || !ht.Fields[1].Varbit || !ht.Fields[2].Saturating {
		t.Fatalf("decoded %+v", ht.Fields)
	}
	out, _ := json.Marshal(ht)
	if string(out) != in {
		t.Errorf("got %s, want %s", out, in)
	}
}

func TestParseNamesTheBrokenMember(t *testing.T) {
	_, err := Parse([]byte(`{"header_types":[{"name":"t","id":0,"fields":[["a"]]}]}`))
	if err == nil || !strings.Contains(err.Error(), "header field") {
		t.Fatalf("want an error about the header field, got %v", err)
	}
}

func TestParseErrorsGiveLineAndColumn(t *testing.T) {
	_, err := Parse([]byte("{\n  \"header_types\": [\n    {\"name\": 5}\n  ]\n}"))
	if err == nil || !strings.Contains(err.Error(), "line 3, column") || !strings.Contains(err.Error(), "header_types.name") {
		t.Errorf("wrong type: got %v, want line 3 and the member path", err)
	}
	_, err = Parse([]byte("{\n  \"program\": \"x\",\n  oops\n}"))
	if err == nil || !strings.Contains(err.Error(), "line 3, column 3") {
		t.Errorf("syntax: got %v, want line 3, column 3", err)
	}
}
