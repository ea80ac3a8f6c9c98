package engine

import (
	"os"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary documents to the loader: it must return a
// program or an error, never crash. The seeds are whole programs of ~10 KB,
// whose minimization by byte removal takes Go's default minute per new
// input: run it with a short -fuzzminimizetime, e.g.
//
//	go test -run '^$' -fuzz '^FuzzLoad$' -fuzztime 60s -fuzzminimizetime 3s ./harness/engine
func FuzzLoad(f *testing.F) {
	for _, path := range []string{"testdata/ipv4_lpm.json", "../bmv2json/testdata/forms.json"} {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(miniJSON(`["a",8,false]`, assign(fld("h", "a"), op("+", fld("h", "a"), hexv("0x1"))), nil)))
	f.Add([]byte(`{"header_types":[{"name":"t","id":0,"fields":[["f","*"]]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Load(data)
		if err != nil {
			if strings.Contains(err.Error(), internalLoadError) {
				t.Fatalf("loader crashed: %v", err)
			}
			return
		}
		// whatever loads must process packets without crashing
		sw := NewSwitch(p, Config{})
		_ = sw.Process(0, data[:min(len(data), 64)], func(Output) {})
	})
}

// FuzzProcess sends arbitrary frames through programs with parsers that
// select, loop over header stacks and extract varbit headers.
func FuzzProcess(f *testing.F) {
	progs := []*Program{loadFile(f, "testdata/ipv4_lpm.json")}
	stackExtra := map[string]string{
		"extra_types": `,{"name":"e_t","id":3,"fields":[["v",8,false]]}`,
		"extra_headers": `,{"name":"s[0]","id":3,"header_type":"e_t","metadata":false,"pi_omit":true},` +
			`{"name":"s[1]","id":4,"header_type":"e_t","metadata":false,"pi_omit":true}`,
		"header_stacks":  `[{"name":"s","id":0,"header_type":"e_t","size":2,"header_ids":[3,4]}]`,
		"parser_ops":     `{"op":"extract","parameters":[{"type":"stack","value":"s"}]}`,
		"transition_key": `[{"type":"stack_field","value":["s","v"]}]`,
		"transitions": `{"type":"hexstr","value":"0x01","mask":"0x01","next_state":"start"},` +
			`{"type":"default","value":null,"mask":null,"next_state":null}`,
		"deparse": `"s[0]","s[1]"`,
	}
	progs = append(progs, miniProgram(f, `["a",8,false]`,
		`{"op":"pop","parameters":[{"type":"header_stack","value":"s"},{"type":"hexstr","value":"0x1"}]}`, stackExtra))
	vlExtra := map[string]string{
		"extra_types":   `,{"name":"o_t","id":3,"fields":[["len",8,false],["opt","*"]],"max_length":9}`,
		"extra_headers": `,{"name":"o","id":3,"header_type":"o_t","metadata":false,"pi_omit":true}`,
		"parser_ops": `{"op":"extract","parameters":[{"type":"regular","value":"h"}]},` +
			`{"op":"extract_VL","parameters":[{"type":"regular","value":"o"},` + op("<<", fld("h", "a"), hexv("0x3")) + `]}`,
		"deparse": `"h","o"`,
	}
	progs = append(progs, miniProgram(f, `["a",8,false]`, assign(fld("h", "a"), op("&", op("+", fld("h", "a"), hexv("0x1")), hexv("0xff"))), vlExtra))
	switches := make([]*Switch, len(progs))
	for i, p := range progs {
		switches[i] = NewSwitch(p, Config{})
	}
	_, _ = switches[0].AddEntry("ipv4_lpm", Entry{Match: []Match{LPM([]byte{10}, 8)}, Action: "forward", Args: [][]byte{{1}, {2, 0, 0, 0, 0, 1}}})
	f.Add(ipv4Frame([4]byte{10, 1, 2, 3}, 64, 4))
	f.Add([]byte{1, 1, 1, 0, 9})
	f.Add([]byte{3, 0xaa, 0xbb, 0xcc, 0xdd})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, frame []byte) {
		for _, sw := range switches {
			if err := sw.Process(0, frame, func(Output) {}); err != nil {
				t.Fatal(err)
			}
		}
	})
}
