package engine_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/p4c"
)

// keysFrame is header k of testdata/keys.p4 (a, b:c, d, e), then opt when
// b is 1, then a payload.
func keysFrame(a, b byte, c uint16, d uint64, e uint32, opt bool) []byte {
	f := []byte{a, b<<4 | byte(c>>8), byte(c)}
	for i := 5; i >= 0; i-- {
		f = append(f, byte(d>>(8*i)))
	}
	f = append(f, byte(e>>24), byte(e>>16), byte(e>>8), byte(e))
	if opt {
		f = append(f, 0x77)
	}
	return append(f, "payload"...)
}

// An exact table whose key fits in 8 bytes (a masked field, a validity
// bit, a 12-bit field) and one whose key does not both match their
// entries' keys exactly, and the deparser writes back the unaligned fields
// it parsed, changed or not; with the mask given in the JSON (as p4c
// writes "h.k.a & 0xf0") as with the masked value in a temporary (as
// grid's compiler does).
func TestExactKeysShortAndLongMatchTheirEntries(t *testing.T) {
	res, err := p4c.Compile(filepath.Join("testdata", "keys.p4"), p4c.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range []string{"masked temporary", "mask in the key"} {
		t.Run(variant, func(t *testing.T) {
			js := res.JSON
			if variant == "mask in the key" {
				js = maskFirstKey(t, js, "I.short_key", []string{"k", "a"}, "0xf0")
			}
			prog, err := engine.Load(js)
			if err != nil {
				t.Fatal(err)
			}
			sw := engine.NewSwitch(prog, engine.Config{})
			add := func(table string, port byte, keys ...[]byte) {
				t.Helper()
				en := engine.Entry{Action: "I.to", Args: [][]byte{{port}}}
				for _, k := range keys {
					en.Match = append(en.Match, engine.Exact(k))
				}
				if _, err := sw.AddEntry(table, en); err != nil {
					t.Fatal(err)
				}
			}
			add("I.short_key", 3, []byte{0xa0}, []byte{1}, []byte{0x01, 0x23})
			add("I.short_key", 4, []byte{0xa0}, []byte{0}, []byte{0x01, 0x23})
			add("I.long_key", 5, []byte{1, 2, 3, 4, 5}, []byte{0xde, 0xad, 0xbe, 0xef})
			for _, c := range []struct {
				name string
				in   []byte
				port uint32
			}{
				{"short key, opt valid", keysFrame(0xab, 1, 0x123, 0x0102030405, 7, true), 3},
				{"short key, opt invalid", keysFrame(0xa5, 2, 0x123, 0x0102030405, 7, false), 4},
				{"short key, other c", keysFrame(0xa5, 2, 0x124, 0x0102030405, 0xdeadbeef, false), 5},
				{"long key", keysFrame(0x00, 0, 0, 0x0102030405, 0xdeadbeef, false), 5},
				{"long key, other e", keysFrame(0x00, 0, 0, 0x0102030405, 0xdeadbeee, false), 9},
				{"mask keeps the high nibble", keysFrame(0xb0, 2, 0x123, 0, 0, false), 9},
			} {
				var out []engine.Output
				if err := sw.Process(0, c.in, func(o engine.Output) {
					out = append(out, engine.Output{Port: o.Port, Data: bytes.Clone(o.Data)})
				}); err != nil {
					t.Fatal(err)
				}
				want := bytes.Clone(c.in)
				if c.port != 9 {
					want[1] = byte(c.port)<<4 | want[1]&0x0f
				}
				if len(out) != 1 || out[0].Port != c.port || !bytes.Equal(out[0].Data, want) {
					t.Errorf("%s: out %+v, want port %d with % x", c.name, out, c.port, want)
				}
			}
		})
	}
}

// maskFirstKey rewrites the first key of table to match target with mask
// in a bmv2 JSON program.
func maskFirstKey(t *testing.T, js []byte, table string, target []string, mask string) []byte {
	t.Helper()
	var prog map[string]any
	if err := json.Unmarshal(js, &prog); err != nil {
		t.Fatal(err)
	}
	for _, pl := range prog["pipelines"].([]any) {
		for _, tb := range pl.(map[string]any)["tables"].([]any) {
			if tb := tb.(map[string]any); tb["name"] == table {
				k := tb["key"].([]any)[0].(map[string]any)
				k["target"], k["mask"] = target, mask
			}
		}
	}
	out, err := json.Marshal(prog)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Switches running one Program share its packet contexts but each looks
// packets up in its own tables, also when packets alternate between them
// from several goroutines.
func TestSwitchesOfOneProgramKeepTheirOwnTables(t *testing.T) {
	prog := compileTestdata(t, "keys.p4")
	frame := keysFrame(0, 0, 0, 0x0102030405, 0xdeadbeef, false)
	var sws []*engine.Switch
	for port := range 4 {
		sw := engine.NewSwitch(prog, engine.Config{Serial: port%2 == 0})
		if _, err := sw.AddEntry("I.long_key", engine.Entry{Action: "I.to", Args: [][]byte{{byte(port)}},
			Match: []engine.Match{engine.Exact([]byte{1, 2, 3, 4, 5}), engine.Exact([]byte{0xde, 0xad, 0xbe, 0xef})}}); err != nil {
			t.Fatal(err)
		}
		sws = append(sws, sw)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				want := uint32((g + i) % len(sws))
				err := sws[want].Process(0, frame, func(o engine.Output) {
					if o.Port != want {
						t.Errorf("switch %d sent the frame to port %d", want, o.Port)
					}
				})
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

// A packet hitting an entry of a short exact table runs the action and
// data ModifyEntry last gave it, whether the index holds a copy of the
// data (up to three words) or not, also while packets flow as it changes.
func TestModifiedEntriesOfShortTablesRunTheirNewAction(t *testing.T) {
	prog := compileTestdata(t, "keys.p4")
	for _, serial := range []bool{true, false} {
		modifyShortEntries(t, engine.NewSwitch(prog, engine.Config{Serial: serial}))
	}
}

func modifyShortEntries(t *testing.T, sw *engine.Switch) {
	key := []engine.Match{engine.Exact([]byte{0x10}), engine.Exact([]byte{0}), engine.Exact([]byte{0x00, 0x05})}
	h, err := sw.AddEntry("I.short_key", engine.Entry{Match: key, Action: "I.to", Args: [][]byte{{3}}})
	if err != nil {
		t.Fatal(err)
	}
	frame := keysFrame(0x1f, 0, 5, 0x0102030405, 0xdeadbeef, false)
	send := func() (uint32, []byte) {
		var port uint32
		var out []byte
		if err := sw.Process(0, frame, func(o engine.Output) { port, out = o.Port, bytes.Clone(o.Data) }); err != nil {
			t.Fatal(err)
		}
		return port, out
	}
	marked := keysFrame(0x1f, 5, 5, 0xa0a1a2a3a4a5, 0xb0b1b2b3, false)
	for _, c := range []struct {
		action string
		args   [][]byte
		port   uint32
		want   []byte
	}{
		{"I.to", [][]byte{{3}}, 3, keysFrame(0x1f, 3, 5, 0x0102030405, 0xdeadbeef, false)},
		{"I.to", [][]byte{{4}}, 4, keysFrame(0x1f, 4, 5, 0x0102030405, 0xdeadbeef, false)},
		{"I.to_marked", [][]byte{{5}, {0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5}, {0xb0, 0xb1, 0xb2, 0xb3}, {0}}, 5, marked},
		{"I.to", [][]byte{{6}}, 6, keysFrame(0x1f, 6, 5, 0x0102030405, 0xdeadbeef, false)},
	} {
		if err := sw.ModifyEntry("I.short_key", h, c.action, c.args); err != nil {
			t.Fatal(err)
		}
		if port, out := send(); port != c.port || !bytes.Equal(out, c.want) {
			t.Errorf("after ModifyEntry to %s %x: port %d, % x; want port %d, % x", c.action, c.args, port, out, c.port, c.want)
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 300 {
			if err := sw.ModifyEntry("I.short_key", h, "I.to_marked", [][]byte{{byte(7 + i%2)}, {1}, {2}, {3}}); err != nil {
				t.Error(err)
				return
			}
			if err := sw.ModifyEntry("I.short_key", h, "I.to", [][]byte{{byte(7 + i%2)}}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 600 {
		if port, _ := send(); port != 6 && port != 7 && port != 8 {
			t.Fatalf("port %d while the entry changes between 7 and 8", port)
		}
	}
	wg.Wait()
}
