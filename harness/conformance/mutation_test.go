package conformance

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/grid-ina/grid/harness/stf"
)

// TestMutatedExpectationsFail guards against vacuous passes: for every
// program whose test passes with real p4c's JSON, flipping one concrete
// nibble of one expected packet, or expecting one packet more, must make
// the test fail.
func TestMutatedExpectationsFail(t *testing.T) {
	dir := corpusDir(t)
	names, err := Programs(dir)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range names {
		programJSON, err := os.ReadFile(filepath.Join(dir, "reference", name+".json"))
		if err != nil {
			continue
		}
		cmds, err := stf.ParseFile(filepath.Join(dir, "programs", name+".stf"))
		if err != nil {
			t.Fatal(err)
		}
		if res, err := stf.Run(programJSON, cmds, stf.Options{}); err != nil || !res.Passed() {
			continue // not a passing test: nothing to guard
		}
		checked++
		if mutated, ok := flipOneNibble(cmds); ok {
			if res, err := stf.Run(programJSON, mutated, stf.Options{}); err != nil || res.Passed() {
				t.Errorf("%s: still passes with one expected nibble changed (err %v)", name, err)
			}
		}
		extra := append(append([]stf.Command(nil), cmds...), &stf.Expect{Port: 99, Nibbles: "00"})
		if res, err := stf.Run(programJSON, extra, stf.Options{}); err != nil || res.Passed() {
			t.Errorf("%s: still passes with an extra expected packet (err %v)", name, err)
		}
	}
	if checked < 100 {
		t.Errorf("only %d passing programs checked", checked)
	}
}

// flipOneNibble copies the commands with the first concrete nibble of the
// first expected packet changed.
func flipOneNibble(cmds []stf.Command) ([]stf.Command, bool) {
	out := append([]stf.Command(nil), cmds...)
	for i, c := range out {
		e, ok := c.(*stf.Expect)
		if !ok || e.Any {
			continue
		}
		for j := 0; j < len(e.Nibbles); j++ {
			if e.Nibbles[j] == '*' {
				continue
			}
			m := *e
			b := []byte(m.Nibbles)
			if b[j] == '0' {
				b[j] = '1'
			} else {
				b[j] = '0'
			}
			m.Nibbles = string(b)
			out[i] = &m
			return out, true
		}
	}
	return nil, false
}
