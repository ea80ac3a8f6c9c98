package engine

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/bmv2json"
)

const stdMeta = `["ingress_port",9,false],["egress_spec",9,false],["egress_port",9,false],["instance_type",32,false],
["packet_length",32,false],["enq_timestamp",32,false],["enq_qdepth",19,false],["deq_timedelta",32,false],
["deq_qdepth",19,false],["ingress_global_timestamp",48,false],["egress_global_timestamp",48,false],
["mcast_grp",16,false],["egress_rid",16,false],["checksum_error",1,false],["parser_error",32,false],
["priority",3,false],["_padding",3,false]`

// miniProgram builds a program whose parser extracts header h (fields given
// as bmv2 tuples) and whose ingress runs one action with the primitives
// given as a JSON array body; extra is spliced into the top level (e.g.
// register arrays) and egress into the egress pipeline's conditionals.
func miniProgram(t testing.TB, fields, prims string, extra map[string]string) *Program {
	t.Helper()
	doc := miniJSON(fields, prims, extra)
	p, err := loadShaped(doc)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, doc)
	}
	return p
}

func miniJSON(fields, prims string, extra map[string]string) string {
	top := map[string]string{"register_arrays": "[]", "counter_arrays": "[]", "meter_arrays": "[]",
		"header_stacks": "[]", "calculations": "[]", "field_lists": "[]", "extra_headers": "", "extra_types": "",
		"deparse": `"h"`, "parser_ops": `{"op":"extract","parameters":[{"type":"regular","value":"h"}]}`,
		"transitions": `{"type":"default","value":null,"mask":null,"next_state":null}`, "transition_key": "[]",
		"states": "", "egress": `"init_table":null,"tables":[],"conditionals":[]`, "runtime_data": "[]", "action_data": "[]", "extra_actions": ""}
	for k, v := range extra {
		top[k] = v
	}
	doc := fmt.Sprintf(`{
 "header_types":[{"name":"scalars_0","id":0,"fields":[]},{"name":"standard_metadata","id":1,"fields":[%s]},
   {"name":"h_t","id":2,"fields":[%s]}%s],
 "headers":[{"name":"scalars","id":0,"header_type":"scalars_0","metadata":true,"pi_omit":true},
   {"name":"standard_metadata","id":1,"header_type":"standard_metadata","metadata":true,"pi_omit":true},
   {"name":"h","id":2,"header_type":"h_t","metadata":false,"pi_omit":true}%s],
 "header_stacks":%s,"header_union_types":[],"header_unions":[],"header_union_stacks":[],"field_lists":%s,
 "errors":[["NoError",0],["PacketTooShort",1],["NoMatch",2],["StackOutOfBounds",3],["HeaderTooShort",4],["ParserTimeout",5],["ParserInvalidArgument",6]],
 "enums":[],
 "parsers":[{"name":"parser","id":0,"init_state":"start","parse_states":[
   {"name":"start","id":0,"parser_ops":[%s],"transitions":[%s],"transition_key":%s}%s]}],
 "parse_vsets":[],"deparsers":[{"name":"deparser","id":0,"order":[%s],"primitives":[]}],
 "meter_arrays":%s,"counter_arrays":%s,"register_arrays":%s,"calculations":%s,"learn_lists":[],
 "actions":[{"name":"ingress.act","id":0,"runtime_data":%s,"primitives":[%s]}%s],
 "pipelines":[{"name":"ingress","id":0,"init_table":"ingress.t","tables":[{"name":"ingress.t","id":0,"key":[],
   "match_type":"exact","type":"simple","max_size":1,"with_counters":false,"support_timeout":false,"direct_meters":null,
   "action_ids":[0],"actions":["ingress.act"],"base_default_next":null,"next_tables":{"ingress.act":null},
   "default_entry":{"action_id":0,"action_const":false,"action_data":%s,"action_entry_const":false}}],
   "action_profiles":[],"conditionals":[]},
  {"name":"egress","id":1,%s,"action_profiles":[]}],
 "checksums":[],"force_arith":[],"extern_instances":[],"field_aliases":[],"program":"mini","__meta__":{"version":[2,23]}}`,
		stdMeta, fields, top["extra_types"], top["extra_headers"], top["header_stacks"], top["field_lists"],
		top["parser_ops"], top["transitions"], top["transition_key"], top["states"], top["deparse"],
		top["meter_arrays"], top["counter_arrays"], top["register_arrays"], top["calculations"],
		top["runtime_data"], prims, top["extra_actions"], top["action_data"], top["egress"])
	return doc
}

// loadShaped loads a hand-written document after rewriting its expression
// wrappers the way bmv2 reads them (ShapeForBmv2): the tests write every
// expression parameter of a primitive bare, which bmv2 and so Load refuse.
func loadShaped(doc string) (*Program, error) {
	j, err := bmv2json.Parse([]byte(doc))
	if err != nil {
		return nil, err
	}
	j.ShapeForBmv2()
	return LoadProgram(j)
}

// runMini sends in on port 0 and returns what leaves on port 0 (nil if none).
func runMini(t testing.TB, p *Program, in []byte) []byte {
	t.Helper()
	out := run(t, NewSwitch(p, Config{}), 0, in)
	for _, o := range out {
		if o.port == 0 {
			return o.data
		}
	}
	return nil
}

func fld(h, f string) string { return fmt.Sprintf(`{"type":"field","value":[%q,%q]}`, h, f) }
func hexv(s string) string   { return fmt.Sprintf(`{"type":"hexstr","value":%q}`, s) }
func op(o, l, r string) string {
	if l == "" {
		l = "null"
	}
	return fmt.Sprintf(`{"type":"expression","value":{"op":%q,"left":%s,"right":%s}}`, o, l, r)
}
func assign(dst, src string) string {
	return fmt.Sprintf(`{"op":"assign","parameters":[%s,%s]}`, dst, src)
}

func TestArithmeticWrapsLikeBmv2(t *testing.T) {
	a, b, c := fld("h", "a"), fld("h", "b"), fld("h", "c")
	s, u := fld("h", "s"), fld("h", "u")
	cases := []struct {
		name  string
		expr  string
		in    []byte // a, b, s (int8), u (16 bits)
		wantC byte
	}{
		{"sum wraps at 8 bits when masked", op("&", op("+", a, b), hexv("0xff")), []byte{200, 100, 0, 0, 0}, 44},
		{"sum wraps when stored without a mask", op("+", a, b), []byte{200, 100, 0, 0, 0}, 44},
		{"difference below zero wraps", op("&", op("-", a, b), hexv("0xff")), []byte{1, 2, 0, 0, 0}, 255},
		{"product keeps the low byte", op("*", a, b), []byte{16, 17, 0, 0, 0}, 16},
		{"shift left past the width gives zero", op("&", op("<<", a, hexv("0x08")), hexv("0xff")), []byte{0xff, 0, 0, 0, 0}, 0},
		{"shift right past the width gives zero", op(">>", a, hexv("0x09")), []byte{0xff, 0, 0, 0, 0}, 0},
		{"shift by a field amount", op("&", op("<<", a, b), hexv("0xff")), []byte{0x03, 3, 0, 0, 0}, 0x18},
		{"slice by shift and mask", op("&", op(">>", a, hexv("0x4")), hexv("0xf")), []byte{0xab, 0, 0, 0, 0}, 0xa},
		{"bitwise not masked", op("&", op("~", "", a), hexv("0xff")), []byte{0x0f, 0, 0, 0, 0}, 0xf0},
		{"xor", op("^", a, b), []byte{0xff, 0x0f, 0, 0, 0}, 0xf0},
		{"or", op("|", a, b), []byte{0xf0, 0x0f, 0, 0, 0}, 0xff},
		{"signed arithmetic wraps by two_comp_mod", op("two_comp_mod", op("-", s, hexv("0x64")), hexv("0x8")), []byte{0, 0, 0x9c, 0, 0}, 56},
		{"sat_cast clamps at the signed minimum", op("sat_cast", op("+", s, hexv("-0x64")), hexv("0x8")), []byte{0, 0, 0x9c, 0, 0}, 0x80},
		{"usat_cast clamps at the unsigned maximum", op("usat_cast", op("+", a, b), hexv("0x8")), []byte{200, 100, 0, 0, 0}, 255},
		{"usat_cast clamps at zero", op("usat_cast", op("-", a, b), hexv("0x8")), []byte{1, 2, 0, 0, 0}, 0},
		{"signed shift right keeps the sign", op("&", op(">>", s, hexv("0x1")), hexv("0xff")), []byte{0, 0, 0x80, 0, 0}, 0xc0},
		{"signed compare", op("b2d", "", op("<", s, hexv("0x01"))), []byte{0, 0, 0xff, 0, 0}, 1},
		{"unsigned compare", op("b2d", "", op(">", a, hexv("0x01"))), []byte{0xff, 0, 0, 0, 0}, 1},
		{"ternary", `{"type":"expression","value":{"op":"?","left":` + a + `,"right":` + b + `,"cond":` + op("==", a, hexv("0x05")) + `}}`, []byte{5, 9, 0, 0, 0}, 5},
		{"ternary false branch", `{"type":"expression","value":{"op":"?","left":` + a + `,"right":` + b + `,"cond":` + op("==", a, hexv("0x05")) + `}}`, []byte{6, 9, 0, 0, 0}, 9},
		{"concatenation takes the low byte", op("&", op("|", op("<<", a, hexv("0x8")), b), hexv("0xff")), []byte{0x12, 0x34, 0, 0, 0}, 0x34},
		{"high byte of a 16-bit field", op("&", op(">>", u, hexv("0x8")), hexv("0xff")), []byte{0, 0, 0, 0xbe, 0xef}, 0xbe},
		{"and/or/not", op("b2d", "", op("and", op("not", "", op("d2b", "", a)), op("or", op("d2b", "", b), `{"type":"bool","value":false}`))), []byte{0, 1, 0, 0, 0}, 1},
		{"division and modulo", op("+", op("/", a, b), op("%", a, b)), []byte{17, 5, 0, 0, 0}, 5},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			p := miniProgram(t, `["a",8,false],["b",8,false],["c",8,false],["s",8,true],["u",16,false]`,
				assign(c, tc.expr), nil)
			in := []byte{tc.in[0], tc.in[1], 0, tc.in[2], tc.in[3], tc.in[4]}
			out := runMini(t, p, in)
			if len(out) != 6 {
				t.Fatalf("output % x", out)
			}
			if out[2] != tc.wantC {
				t.Errorf("c = %d (0x%02x), want %d (0x%02x)", out[2], out[2], tc.wantC, tc.wantC)
			}
		})
	}
}

func TestWideFieldsUseExactArithmetic(t *testing.T) {
	// 128-bit fields: a + b carries across 64-bit words; 64-bit product.
	x, y, z := fld("h", "x"), fld("h", "y"), fld("h", "z")
	p := miniProgram(t, `["x",128,false],["y",128,false],["z",128,false],["p",64,false],["q",64,false]`,
		assign(z, op("&", op("+", x, y), hexv("0xffffffffffffffffffffffffffffffff")))+","+
			assign(fld("h", "q"), op("&", op("*", fld("h", "p"), fld("h", "p")), hexv("0xffffffffffffffff"))), nil)
	in := make([]byte, 16*3+16)
	for i := 0; i < 16; i++ {
		in[i] = 0xff // x = 2^128-1
	}
	in[31] = 2 // y = 2
	copy(in[48:56], []byte{0x80, 0, 0, 0, 0, 0, 0, 3})
	out := runMini(t, p, in)
	wantZ := make([]byte, 16)
	wantZ[15] = 1
	if !bytes.Equal(out[32:48], wantZ) {
		t.Errorf("z = % x, want % x", out[32:48], wantZ)
	}
	pv := new(big.Int).SetBytes(in[48:56])
	q := new(big.Int).Mul(pv, pv)
	q.And(q, new(big.Int).SetUint64(^uint64(0)))
	if got := new(big.Int).SetBytes(out[56:64]); got.Cmp(q) != 0 {
		t.Errorf("q = %x, want %x", got, q)
	}
}

func TestHeaderValidityPrimitives(t *testing.T) {
	// h2 (not in the packet) is added and filled; h is removed.
	p := miniProgram(t, `["a",8,false]`,
		`{"op":"add_header","parameters":[{"type":"header","value":"h2"}]},`+
			assign(fld("h2", "b"), op("+", fld("h", "a"), hexv("0x1")))+`,`+
			`{"op":"remove_header","parameters":[{"type":"header","value":"h"}]}`,
		map[string]string{"extra_types": `,{"name":"h2_t","id":3,"fields":[["b",16,false]]}`,
			"extra_headers": `,{"name":"h2","id":3,"header_type":"h2_t","metadata":false,"pi_omit":true}`,
			"deparse":       `"h","h2"`})
	out := runMini(t, p, []byte{0x41, 0xee})
	if !bytes.Equal(out, []byte{0x00, 0x42, 0xee}) {
		t.Errorf("got % x, want h removed, h2 = 0x0042 added before the payload", out)
	}
}

func TestHeaderStackPushAndPop(t *testing.T) {
	stack := `[{"name":"s","id":0,"header_type":"e_t","size":3,"header_ids":[3,4,5]}]`
	extra := map[string]string{
		"extra_types": `,{"name":"e_t","id":3,"fields":[["v",8,false]]}`,
		"extra_headers": `,{"name":"s[0]","id":3,"header_type":"e_t","metadata":false,"pi_omit":true},` +
			`{"name":"s[1]","id":4,"header_type":"e_t","metadata":false,"pi_omit":true},` +
			`{"name":"s[2]","id":5,"header_type":"e_t","metadata":false,"pi_omit":true}`,
		"header_stacks": stack,
		"parser_ops": `{"op":"extract","parameters":[{"type":"regular","value":"h"}]},` +
			`{"op":"extract","parameters":[{"type":"stack","value":"s"}]},{"op":"extract","parameters":[{"type":"stack","value":"s"}]}`,
		"deparse": `"h","s[0]","s[1]","s[2]"`,
	}
	push := miniProgram(t, `["a",8,false]`,
		`{"op":"push","parameters":[{"type":"header_stack","value":"s"},{"type":"hexstr","value":"0x1"}]},`+
			`{"op":"add_header","parameters":[{"type":"header","value":"s[0]"}]},`+
			assign(fld("s[0]", "v"), hexv("0x07")), extra)
	if out := runMini(t, push, []byte{0xaa, 1, 2}); !bytes.Equal(out, []byte{0xaa, 7, 1, 2}) {
		t.Errorf("push_front: got % x, want aa 07 01 02", out)
	}
	pop := miniProgram(t, `["a",8,false]`,
		`{"op":"pop","parameters":[{"type":"header_stack","value":"s"},{"type":"hexstr","value":"0x1"}]}`, extra)
	if out := runMini(t, pop, []byte{0xaa, 1, 2}); !bytes.Equal(out, []byte{0xaa, 2}) {
		t.Errorf("pop_front: got % x, want aa 02", out)
	}
	// a third element does not fit: StackOutOfBounds, packet still forwarded
	extra["parser_ops"] += `,{"op":"extract","parameters":[{"type":"stack","value":"s"}]},{"op":"extract","parameters":[{"type":"stack","value":"s"}]}`
	over := miniProgram(t, `["a",8,false]`, assign(fld("h", "a"), fld("standard_metadata", "parser_error")), extra)
	if out := runMini(t, over, []byte{0xaa, 1, 2, 3, 4}); !bytes.Equal(out, []byte{3, 1, 2, 3, 4}) {
		t.Errorf("stack overflow: got % x, want parser_error 3 (StackOutOfBounds) in a, payload 04 kept", out)
	}
}

func TestParserErrorsReachIngress(t *testing.T) {
	// h (1 byte) is extracted, h3 (4 bytes) does not fit: the packet goes on
	// to ingress with parser_error = PacketTooShort (1) and h3 invalid.
	p := miniProgram(t, `["a",8,false]`, assign(fld("h", "a"), fld("standard_metadata", "parser_error")),
		map[string]string{"extra_types": `,{"name":"h3_t","id":3,"fields":[["b",32,false]]}`,
			"extra_headers": `,{"name":"h3","id":3,"header_type":"h3_t","metadata":false,"pi_omit":true}`,
			"parser_ops":    `{"op":"extract","parameters":[{"type":"regular","value":"h"}]},{"op":"extract","parameters":[{"type":"regular","value":"h3"}]}`,
			"deparse":       `"h","h3"`})
	if out := runMini(t, p, []byte{0x77, 0xaa, 0xbb}); !bytes.Equal(out, []byte{1, 0xaa, 0xbb}) {
		t.Errorf("got % x, want parser_error 1 in h.a and the unparsed bytes kept", out)
	}
	if out := runMini(t, p, []byte{0x77, 1, 2, 3, 4, 5}); !bytes.Equal(out, []byte{0, 1, 2, 3, 4, 5}) {
		t.Errorf("got % x, want parser_error 0 when both headers fit", out)
	}
}

func TestSelectWithMaskAndLookahead(t *testing.T) {
	extra := map[string]string{
		"parser_ops":     "",
		"transition_key": `[{"type":"lookahead","value":[0,8]}]`,
		"transitions": `{"type":"hexstr","value":"0x80","mask":"0xf0","next_state":"take"},` +
			`{"type":"default","value":null,"mask":null,"next_state":null}`,
		"states": `,{"name":"take","id":1,"parser_ops":[{"op":"extract","parameters":[{"type":"regular","value":"h"}]}],
		  "transitions":[{"type":"default","value":null,"mask":null,"next_state":null}],"transition_key":[]}`,
	}
	p := miniProgram(t, `["a",8,false]`, assign(fld("h", "a"), hexv("0x01")), extra)
	if out := runMini(t, p, []byte{0x8f, 0xaa}); !bytes.Equal(out, []byte{0x01, 0xaa}) {
		t.Errorf("0x8f matches 0x80&&&0xf0: got % x, want h extracted and rewritten", out)
	}
	if out := runMini(t, p, []byte{0x7f, 0xaa}); !bytes.Equal(out, []byte{0x7f, 0xaa}) {
		t.Errorf("0x7f takes the default: got % x, want the packet unchanged", out)
	}
}

func TestRegistersCountersAndMeters(t *testing.T) {
	p := miniProgram(t, `["a",8,false],["r",32,false],["color",8,false]`,
		`{"op":"register_read","parameters":[`+fld("h", "r")+`,{"type":"register_array","value":"ingress.reg"},`+fld("h", "a")+`]},`+
			assign(fld("h", "r"), op("&", op("+", fld("h", "r"), hexv("0x1")), hexv("0xffffffff")))+`,`+
			`{"op":"register_write","parameters":[{"type":"register_array","value":"ingress.reg"},`+fld("h", "a")+`,`+fld("h", "r")+`]},`+
			`{"op":"count","parameters":[{"type":"counter_array","value":"ingress.cnt"},`+fld("h", "a")+`]},`+
			`{"op":"execute_meter","parameters":[{"type":"meter_array","value":"ingress.m"},`+fld("h", "a")+`,`+fld("h", "color")+`]}`,
		map[string]string{
			"register_arrays": `[{"name":"ingress.reg","id":0,"size":4,"bitwidth":32}]`,
			"counter_arrays":  `[{"name":"ingress.cnt","id":0,"size":4,"is_direct":false}]`,
			"meter_arrays":    `[{"name":"ingress.m","id":0,"is_direct":false,"size":4,"rate_count":2,"type":"packets"}]`,
		})
	now := time.Unix(1000, 0)
	sw := NewSwitch(p, Config{Now: func() time.Time { return now }})
	if err := sw.WriteRegister("reg", 2, []byte{0, 0, 0, 41}); err != nil {
		t.Fatal(err)
	}
	// one packet per second may pass green, a burst of one packet
	if err := sw.SetMeter("m", 2, MeterConfig{CIR: 1, CBurst: 1, PIR: 2, PBurst: 2}); err != nil {
		t.Fatal(err)
	}
	var colors []byte
	for range 3 {
		out := run(t, sw, 0, []byte{2, 0, 0, 0, 0, 0, 0xee})
		if len(out) != 1 {
			t.Fatalf("got %+v", out)
		}
		colors = append(colors, out[0].data[5])
	}
	if !bytes.Equal(colors, []byte{ColorGreen, ColorYellow, ColorRed}) {
		t.Errorf("meter colours %v, want green, yellow, red for a burst of 3 at CIR 1/s, PIR 2/s", colors)
	}
	// A reset meter marks green again, however fast packets come.
	if err := sw.ResetMeter("m", 2); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := sw.ReadMeter("m", 2); ok || err != nil {
		t.Errorf("ReadMeter after ResetMeter: configured %t, %v", ok, err)
	}
	if out := run(t, sw, 0, []byte{2, 0, 0, 0, 0, 0, 0xee}); len(out) != 1 || out[0].data[5] != ColorGreen {
		t.Errorf("after ResetMeter the packet came out %+v, want one marked green", out)
	}
	if err := sw.ResetMeter("m", 4); err == nil || !strings.Contains(err.Error(), "index 4 outside 0..3") {
		t.Errorf("ResetMeter out of range: %v", err)
	}
	v, err := sw.ReadRegister("ingress.reg", 2)
	if err != nil || !bytes.Equal(v, []byte{0, 0, 0, 45}) {
		t.Errorf("register = % x (%v), want 45 after four increments of 41", v, err)
	}
	c, err := sw.ReadCounter("cnt", 2)
	if err != nil || c.Packets != 4 || c.Bytes != 28 {
		t.Errorf("counter %+v (%v), want 4 packets, 28 bytes", c, err)
	}
	if _, err := sw.ReadRegister("reg", 4); err == nil || !strings.Contains(err.Error(), "index 4 outside 0..3") {
		t.Errorf("out of range read: %v", err)
	}
}

// TestRegisterIndexOutOfBoundsChangesNothing follows bmv2, which logs an
// out of range index and leaves both the destination and the register as
// they were, for narrow and wide (two-word) registers.
func TestRegisterIndexOutOfBoundsChangesNothing(t *testing.T) {
	for _, width := range []int{32, 96} {
		t.Run(fmt.Sprintf("bit<%d>", width), func(t *testing.T) {
			p := miniProgram(t, fmt.Sprintf(`["a",8,false],["r",%d,false]`, width),
				`{"op":"register_read","parameters":[`+fld("h", "r")+`,{"type":"register_array","value":"ingress.reg"},`+fld("h", "a")+`]},`+
					`{"op":"register_write","parameters":[{"type":"register_array","value":"ingress.reg"},`+fld("h", "a")+`,`+fld("h", "a")+`]},`+
					`{"op":"register_write","parameters":[{"type":"register_array","value":"ingress.reg"},`+op("+", fld("h", "a"), hexv("0x1"))+`,`+fld("h", "r")+`]}`,
				map[string]string{"register_arrays": fmt.Sprintf(`[{"name":"ingress.reg","id":0,"size":4,"bitwidth":%d}]`, width)})
			sw := NewSwitch(p, Config{})
			in := append([]byte{7}, bytes.Repeat([]byte{0xab}, width/8)...)
			out := run(t, sw, 0, in)
			if len(out) != 1 || !bytes.Equal(out[0].data, in) {
				t.Fatalf("got %+v, want the packet unchanged (r not overwritten by a read at index 7)", out)
			}
			for i := range 4 {
				v, err := sw.ReadRegister("reg", i)
				if err != nil || !bytes.Equal(v, make([]byte, width/8)) {
					t.Errorf("reg[%d] = % x (%v), want 0 after writes at indices 7 and 8", i, v, err)
				}
			}
		})
	}
}

func TestMulticastAndCloneSessionsReplicate(t *testing.T) {
	p := miniProgram(t, `["a",8,false]`,
		assign(fld("standard_metadata", "mcast_grp"), hexv("0x0005"))+`,`+
			`{"op":"clone_ingress_pkt_to_egress","parameters":[{"type":"hexstr","value":"0x9"},{"type":"hexstr","value":"0x0"}]}`,
		map[string]string{"egress": `"init_table":null,"tables":[],"conditionals":[]`})
	sw := NewSwitch(p, Config{})
	if err := sw.SetMulticastGroup(5, []Replica{{Port: 1, Rid: 10}, {Port: 2, Rid: 20}}); err != nil {
		t.Fatal(err)
	}
	if err := sw.SetCloneSession(9, CloneSession{Port: 7, Truncate: 1}); err != nil {
		t.Fatal(err)
	}
	out := run(t, sw, 0, []byte{0x33, 0x44})
	got := map[uint32]InstanceType{}
	for _, o := range out {
		got[o.port] = o.inst
	}
	want := map[uint32]InstanceType{7: InstanceIngressClone, 1: InstanceReplication, 2: InstanceReplication}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(out) != 3 {
		t.Errorf("outputs %+v, want clone on 7 and replicas on 1 and 2", out)
	}
	for _, o := range out {
		if want := map[bool]int{true: 1, false: 2}[o.port == 7]; len(o.data) != want {
			t.Errorf("port %d: %d bytes, want %d (the clone session truncates to 1)", o.port, len(o.data), want)
		}
	}
}

func TestHashAlgorithmsMatchKnownCheckValues(t *testing.T) {
	in := []byte("123456789")
	cases := map[string]uint64{"crc16": 0xbb3d, "crc32": uint64(crc32.ChecksumIEEE(in)), "crcCCITT": 0x29b1,
		"identity": 0x3132333435363738, "xor16": 0x3132 ^ 0x3334 ^ 0x3536 ^ 0x3738 ^ 0x3900}
	for algo, want := range cases {
		if got := hashAlgorithms[algo](in); got != want {
			t.Errorf("%s(123456789) = %#x, want %#x", algo, got, want)
		}
	}
	if got := csum16([]byte{0x45, 0x00, 0x00, 0x1c}); got != ^uint16(0x451c) {
		t.Errorf("csum16 = %#x", got)
	}
}

func TestLoadErrorsNameTheConstruct(t *testing.T) {
	cases := map[string]string{
		`{"op":"frobnicate","parameters":[]}`:                         `primitive 0 (frobnicate): unsupported primitive "frobnicate"`,
		assign(fld("h", "nope"), hexv("0x1")):                         `header "h" has no field "nope"`,
		assign(fld("h", "a"), op("**", fld("h", "a"), hexv("0x1"))):   `unsupported expression operator "**"`,
		assign(fld("h", "a"), `{"type":"runtime_data","value":3}`):    "runtime_data",
		`{"op":"register_read","parameters":[` + fld("h", "a") + `]}`: "takes 3 parameters, got 1",
	}
	for prim, want := range cases {
		_, err := loadShaped(miniJSON(`["a",8,false]`, prim, nil))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `action "ingress.act"`) {
			t.Errorf("%s: got %v, want an error naming the action and %q", prim, err, want)
		}
	}
}

// TestLoadRefusesExpressionWrappingBmv2CannotRun loads the wrappings bmv2
// refuses or crashes on (bmv2json.CheckBmv2Shapes) and checks the error
// names the JSON field; the same programs shaped as p4c writes them load.
func TestLoadRefusesExpressionWrappingBmv2CannotRun(t *testing.T) {
	sum := op("+", fld("h", "a"), hexv("0x1"))
	wrapped := `{"type":"expression","value":` + sum + `}`
	verify := func(cond string) map[string]string {
		return map[string]string{"parser_ops": `{"op":"extract","parameters":[{"type":"regular","value":"h"}]},` +
			`{"op":"verify","parameters":[` + cond + `,{"type":"hexstr","value":"0x1"}]}`}
	}
	cases := []struct {
		name, prims string
		extra       map[string]string
		want        string
	}{
		{"an operation bare under a primitive parameter", assign(fld("h", "a"), sum), nil,
			`actions[0] (ingress.act) primitives[0] (assign) parameters[1]: the operation "+" sits directly under the parameter`},
		{"a verify condition wrapped twice", assign(fld("h", "a"), hexv("0x1")), verify(`{"type":"expression","value":` + op("==", fld("h", "a"), hexv("0x1")) + `}`),
			`parsers[0].parse_states[0] (start) parser_ops[1] (verify) parameters[0]: an expression wrapped twice`},
		{"a parser set from a stack_field", assign(fld("h", "a"), hexv("0x1")), map[string]string{"parser_ops": `{"op":"extract","parameters":[{"type":"regular","value":"h"}]},` +
			`{"op":"set","parameters":[` + fld("h", "a") + `,{"type":"stack_field","value":["s","a"]}]}`},
			`parser_ops[1] (set) parameters[1]: a parser set from a "stack_field" node`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load([]byte(miniJSON(`["a",8,false]`, c.prims, c.extra)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
	if _, err := Load([]byte(miniJSON(`["a",8,false]`, assign(fld("h", "a"), wrapped), verify(op("==", fld("h", "a"), hexv("0x1")))))); err != nil {
		t.Errorf("the same shaped as p4c writes it: %v", err)
	}
}

func TestParserValueSetSelectsWhatTheControlPlaneAdds(t *testing.T) {
	doc := miniJSON(`["a",8,false]`, assign(fld("h", "a"), hexv("0x01")), map[string]string{
		"parser_ops":     "",
		"transition_key": `[{"type":"lookahead","value":[0,8]}]`,
		"transitions": `{"type":"parse_vset","value":"pvs","mask":null,"next_state":"take"},` +
			`{"type":"default","value":null,"mask":null,"next_state":null}`,
		"states": `,{"name":"take","id":1,"parser_ops":[{"op":"extract","parameters":[{"type":"regular","value":"h"}]}],
		  "transitions":[{"type":"default","value":null,"mask":null,"next_state":null}],"transition_key":[]}`,
	})
	doc = strings.Replace(doc, `"parse_vsets":[]`, `"parse_vsets":[{"name":"pvs","id":0,"compressed_bitwidth":8,"max_size":4}]`, 1)
	p, err := Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	sw := NewSwitch(p, Config{})
	if out := run(t, sw, 0, []byte{0x42}); len(out) != 1 || out[0].data[0] != 0x42 {
		t.Fatalf("empty value set: got %+v, want the packet unparsed", out)
	}
	if err := sw.AddParseVsetValue("pvs", []byte{0x42}); err != nil {
		t.Fatal(err)
	}
	if out := run(t, sw, 0, []byte{0x42}); len(out) != 1 || out[0].data[0] != 0x01 {
		t.Fatalf("0x42 in the set: got %+v, want h extracted and rewritten", out)
	}
	if err := sw.DeleteParseVsetValue("pvs", []byte{0x42}); err != nil {
		t.Fatal(err)
	}
	if err := sw.DeleteParseVsetValue("pvs", []byte{0x42}); err == nil || !strings.Contains(err.Error(), `"pvs" has no value 0x42`) {
		t.Errorf("deleting twice: %v", err)
	}
}

func TestDigestDeliversTheLearnListAtTheEndOfIngress(t *testing.T) {
	doc := miniJSON(`["a",8,false],["b",16,false]`,
		`{"op":"generate_digest","parameters":[{"type":"hexstr","value":"0x1"},{"type":"hexstr","value":"0x1"}]},`+
			assign(fld("h", "b"), hexv("0xbeef")), nil)
	doc = strings.Replace(doc, `"learn_lists":[]`,
		`"learn_lists":[{"id":1,"name":"mac_learn","elements":[`+fld("h", "a")+`,`+fld("h", "b")+`]}]`, 1)
	p, err := Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var got []Digest
	sw := NewSwitch(p, Config{Digest: func(d Digest) { got = append(got, d) }})
	run(t, sw, 0, []byte{7, 0, 0})
	if len(got) != 1 || got[0].List != "mac_learn" || !bytes.Equal(got[0].Values[0], []byte{7}) || !bytes.Equal(got[0].Values[1], []byte{0xbe, 0xef}) {
		t.Errorf("digests %+v, want one mac_learn with a=07 and b=beef (its value at the end of ingress)", got)
	}
	if d := p.Digests(); len(d) != 1 || d[0].Fields[1].Bitwidth != 16 {
		t.Errorf("Digests() = %+v", d)
	}
}

// passProgram runs, in ingress, an action that records the instance type
// in h.a and, on the first pass, sets meta.m and calls op (resubmit or
// recirculate) with field list 1 = [meta.m]; on the next pass it copies
// the preserved meta.m into h.b.
func passProgram(t *testing.T, op string) *Program {
	t.Helper()
	return miniProgram(t, `["a",8,false],["b",8,false]`,
		assign(fld("h", "a"), fld("standard_metadata", "instance_type"))+`,`+
			`{"op":"_jump_if_zero","parameters":[`+fld("standard_metadata", "instance_type")+`,{"type":"hexstr","value":"0x4"}]},`+
			assign(fld("h", "b"), fld("meta", "m"))+`,`+
			`{"op":"_jump","parameters":[{"type":"hexstr","value":"0x6"}]},`+
			assign(fld("meta", "m"), hexv("0x2a"))+`,`+
			`{"op":"`+op+`","parameters":[{"type":"hexstr","value":"0x1"}]}`,
		map[string]string{
			"extra_types":   `,{"name":"meta_t","id":3,"fields":[["m",8,false]]}`,
			"extra_headers": `,{"name":"meta","id":3,"header_type":"meta_t","metadata":true,"pi_omit":true}`,
			"field_lists":   `[{"id":1,"name":"keep","elements":[` + fld("meta", "m") + `]}]`,
		})
}

func TestResubmitAndRecirculatePreserveTheirFieldList(t *testing.T) {
	for op, inst := range map[string]InstanceType{"resubmit": InstanceResubmit, "recirculate": InstanceRecirculated} {
		out := run(t, NewSwitch(passProgram(t, op), Config{}), 3, []byte{0, 0, 0xee})
		// ingress sees the new instance type; like simple_switch, the packet
		// leaves ingress as a normal one (instance_type 0 in egress)
		if len(out) != 1 || out[0].inst != InstanceNormal || !bytes.Equal(out[0].data, []byte{byte(inst), 0x2a, 0xee}) {
			t.Errorf("%s: got %+v, want one packet with ingress instance type %d and the preserved 0x2a", op, out, inst)
		}
	}
}

func TestEndlessRecirculationStopsAtThePassLimit(t *testing.T) {
	// recirculate on every pass: the packet is dropped after MaxPasses
	p := miniProgram(t, `["a",8,false]`, `{"op":"recirculate","parameters":[{"type":"hexstr","value":"0x1"}]}`,
		map[string]string{"field_lists": `[{"id":1,"name":"none","elements":[]}]`})
	var b strings.Builder
	out := run(t, NewSwitch(p, Config{MaxPasses: 3, Trace: &b}), 0, []byte{1})
	if len(out) != 0 || !strings.Contains(b.String(), "recirculated more than 3 times") {
		t.Errorf("got %+v; trace:\n%s", out, b.String())
	}
}

func TestEgressCloneCopiesThePacketAfterEgress(t *testing.T) {
	egressTable := `"init_table":"egress.e","tables":[{"name":"egress.e","id":1,"key":[],
   "match_type":"exact","type":"simple","max_size":1,"with_counters":false,"support_timeout":false,"direct_meters":null,
   "action_ids":[1],"actions":["egress.clone"],"base_default_next":null,"next_tables":{"egress.clone":null},
   "default_entry":{"action_id":1,"action_const":false,"action_data":[],"action_entry_const":false}}],"conditionals":[]`
	cloneAct := `,{"name":"egress.clone","id":1,"runtime_data":[],"primitives":[` +
		assign(fld("h", "a"), op("&", op("+", fld("h", "a"), fld("standard_metadata", "instance_type")), hexv("0xff"))) + `,` +
		`{"op":"_jump_if_zero","parameters":[` + op("==", fld("standard_metadata", "instance_type"), hexv("0x0")) + `,{"type":"hexstr","value":"0x3"}]},` +
		`{"op":"clone_egress_pkt_to_egress","parameters":[{"type":"hexstr","value":"0x4"},{"type":"hexstr","value":"0x0"}]}]}`
	p := miniProgram(t, `["a",8,false]`, assign(fld("standard_metadata", "egress_spec"), hexv("0x0001")),
		map[string]string{"egress": egressTable, "extra_actions": cloneAct})
	sw := NewSwitch(p, Config{})
	if err := sw.SetCloneSession(4, CloneSession{Port: 9}); err != nil {
		t.Fatal(err)
	}
	out := run(t, sw, 0, []byte{10})
	got := map[uint32]captured{}
	for _, o := range out {
		got[o.port] = o
	}
	// the original leaves port 1 with a = 10 + 0; the clone re-enters
	// egress as instance 2 and adds 2 to the egress-modified a (10)
	if len(out) != 2 || got[1].data[0] != 10 || got[9].inst != InstanceEgressClone || got[9].data[0] != 12 {
		t.Errorf("got %+v, want the original on port 1 (a=10) and an egress clone on port 9 (a=12)", out)
	}
}

func TestBackwardJumpsLoopAndAnEndlessLoopDropsThePacket(t *testing.T) {
	// h.b counts down from h.a to 0, adding 3 to h.c each round: a for loop
	// as p4c lowers it, with a backward _jump.
	loop := `{"op":"_jump_if_zero","parameters":[` + fld("h", "a") + `,{"type":"hexstr","value":"0x4"}]},` +
		assign(fld("h", "c"), op("&", op("+", fld("h", "c"), hexv("0x03")), hexv("0xff"))) + `,` +
		assign(fld("h", "a"), op("&", op("-", fld("h", "a"), hexv("0x01")), hexv("0xff"))) + `,` +
		`{"op":"_jump","parameters":[{"type":"hexstr","value":"0x0"}]}`
	p := miniProgram(t, `["a",8,false],["c",8,false]`, loop, nil)
	if out := run(t, NewSwitch(p, Config{}), 0, []byte{5, 1}); len(out) != 1 || !bytes.Equal(out[0].data, []byte{0, 16}) {
		t.Errorf("five rounds of the loop gave %+v, want a=0 and c=1+5*3=16", out)
	}
	endless := `{"op":"_jump","parameters":[{"type":"hexstr","value":"0x0"}]}`
	var trace strings.Builder
	p = miniProgram(t, `["a",8,false]`, endless, nil)
	if out := run(t, NewSwitch(p, Config{Trace: &trace}), 0, []byte{1}); len(out) != 0 || !strings.Contains(trace.String(), "a loop that does not end") {
		t.Errorf("an endless loop gave %+v; trace:\n%s", out, trace.String())
	}
}
