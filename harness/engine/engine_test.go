package engine

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/internal/repo"
)

func loadFile(t testing.TB, path string) *Program {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

// ipv4Frame builds Ethernet+IPv4 with a correct header checksum and a
// payload of n bytes.
func ipv4Frame(dst [4]byte, ttl byte, n int) []byte {
	f := make([]byte, 14+20+n)
	copy(f[0:6], []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55})
	copy(f[6:12], []byte{0x00, 0xaa, 0xbb, 0xcc, 0xdd, 0xee})
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:34]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(20+n))
	ip[8] = ttl
	ip[9] = 17
	copy(ip[12:16], []byte{10, 0, 0, 1})
	copy(ip[16:20], dst[:])
	binary.BigEndian.PutUint16(ip[10:], csum16(ip))
	for i := range n {
		f[34+i] = byte(i)
	}
	return f
}

type captured struct {
	port uint32
	data []byte
	inst InstanceType
}

func run(t testing.TB, sw *Switch, port uint32, frame []byte) []captured {
	t.Helper()
	var out []captured
	if err := sw.Process(port, frame, func(o Output) {
		out = append(out, captured{o.Port, bytes.Clone(o.Data), o.Instance})
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func ipv4Switch(t testing.TB) *Switch {
	t.Helper()
	sw := NewSwitch(loadFile(t, "testdata/ipv4_lpm.json"), Config{})
	mac1 := []byte{0x02, 0, 0, 0, 0, 0x01}
	mac2 := []byte{0x02, 0, 0, 0, 0, 0x02}
	if _, err := sw.AddEntry("ipv4_lpm", Entry{Match: []Match{LPM([]byte{10, 0, 0, 0}, 8)}, Action: "forward", Args: [][]byte{{1}, mac1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.AddEntry("ingress.ipv4_lpm", Entry{Match: []Match{LPM([]byte{10, 1, 2, 0}, 24)}, Action: "ingress.forward", Args: [][]byte{{2}, mac2}}); err != nil {
		t.Fatal(err)
	}
	return sw
}

func TestIPv4LPMForwardsByLongestPrefixAndRewritesHeaders(t *testing.T) {
	sw := ipv4Switch(t)
	out := run(t, sw, 3, ipv4Frame([4]byte{10, 1, 2, 3}, 64, 10))
	if len(out) != 1 || out[0].port != 2 || out[0].inst != InstanceNormal {
		t.Fatalf("got %+v, want one normal packet on port 2", out)
	}
	o := out[0].data
	if !bytes.Equal(o[0:6], []byte{0x02, 0, 0, 0, 0, 0x02}) || !bytes.Equal(o[6:12], []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55}) {
		t.Errorf("MACs not rewritten: % x", o[:12])
	}
	if o[14+8] != 63 {
		t.Errorf("TTL %d, want 63", o[14+8])
	}
	if csum16(o[14:34]) != 0 {
		t.Errorf("IPv4 checksum not updated: header % x", o[14:34])
	}
	if len(o) != 14+20+10 || o[len(o)-1] != 9 {
		t.Errorf("payload not kept: % x", o[34:])
	}
	out = run(t, sw, 3, ipv4Frame([4]byte{10, 9, 9, 9}, 1, 0))
	if len(out) != 1 || out[0].port != 1 || out[0].data[14+8] != 0 {
		t.Errorf("10.9.9.9 with TTL 1: got %+v, want port 1 with TTL wrapped to 0", out)
	}
}

func TestIPv4LPMMissRunsDefaultDrop(t *testing.T) {
	sw := ipv4Switch(t)
	if out := run(t, sw, 3, ipv4Frame([4]byte{192, 168, 0, 1}, 64, 0)); len(out) != 0 {
		t.Errorf("miss should drop, got %+v", out)
	}
	// Not IPv4: no table applies, egress_spec stays 0.
	frame := ipv4Frame([4]byte{10, 1, 2, 3}, 64, 0)
	frame[12], frame[13] = 0x86, 0xdd
	out := run(t, sw, 3, frame)
	if len(out) != 1 || out[0].port != 0 || !bytes.Equal(out[0].data, frame) {
		t.Errorf("non-IPv4 frame: got %+v, want it unchanged on port 0", out)
	}
}

func TestTableUpdatesChangeForwarding(t *testing.T) {
	sw := ipv4Switch(t)
	h, err := sw.FindEntry("ipv4_lpm", []Match{LPM([]byte{10, 1, 2, 0}, 24)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.ModifyEntry("ipv4_lpm", h, "forward", [][]byte{{7}, {2, 0, 0, 0, 0, 7}}); err != nil {
		t.Fatal(err)
	}
	if out := run(t, sw, 3, ipv4Frame([4]byte{10, 1, 2, 3}, 64, 0)); len(out) != 1 || out[0].port != 7 {
		t.Fatalf("after modify: %+v, want port 7", out)
	}
	if err := sw.DeleteEntry("ipv4_lpm", h); err != nil {
		t.Fatal(err)
	}
	if out := run(t, sw, 3, ipv4Frame([4]byte{10, 1, 2, 3}, 64, 0)); len(out) != 1 || out[0].port != 1 {
		t.Fatalf("after delete: %+v, want the /8 route to port 1", out)
	}
	entries, err := sw.Entries("ipv4_lpm")
	if err != nil || len(entries) != 1 || entries[0].Action != "ingress.forward" || entries[0].Match[0].PrefixLen != 8 {
		t.Fatalf("entries %+v, %v", entries, err)
	}
	if err := sw.SetDefaultAction("ipv4_lpm", "forward", [][]byte{{5}, {1, 2, 3, 4, 5, 6}}); err != nil {
		t.Fatal(err)
	}
	if out := run(t, sw, 3, ipv4Frame([4]byte{172, 16, 0, 1}, 64, 0)); len(out) != 1 || out[0].port != 5 {
		t.Fatalf("after setdefault: %+v, want port 5", out)
	}
}

func TestControlPlaneErrorsNameTheirSubject(t *testing.T) {
	sw := ipv4Switch(t)
	cases := []struct {
		err  error
		want string
	}{
		{func() error { _, err := sw.AddEntry("nosuch", Entry{}); return err }(), `no table named "nosuch"`},
		{func() error {
			_, err := sw.AddEntry("ipv4_lpm", Entry{Match: []Match{LPM([]byte{10}, 8)}, Action: "bogus"})
			return err
		}(), `action "bogus" is not one of its actions`},
		{func() error {
			_, err := sw.AddEntry("ipv4_lpm", Entry{Match: []Match{LPM([]byte{1, 2, 3, 4, 5}, 8)}, Action: "drop"})
			return err
		}(), `key "hdr.ipv4.dstAddr" value 0x0102030405 does not fit in 32 bits`},
		{func() error {
			_, err := sw.AddEntry("ipv4_lpm", Entry{Match: []Match{LPM([]byte{10}, 33)}, Action: "drop"})
			return err
		}(), "prefix length 33 outside 0..32"},
		{func() error {
			_, err := sw.AddEntry("ipv4_lpm", Entry{Match: []Match{LPM([]byte{10}, 8)}, Action: "forward", Args: [][]byte{{2, 0}, {1}}})
			return err
		}(), `parameter "port": value 0x0200 does not fit in 9 bits`},
		{func() error {
			_, err := sw.AddEntry("ipv4_lpm", Entry{Match: []Match{LPM([]byte{10, 0, 0, 0}, 8)}, Action: "drop"})
			return err
		}(), "an entry with this prefix exists"},
	}
	keyless := NewSwitch(miniProgram(t, `["a",8,false]`, "", nil), Config{})
	_, err := keyless.AddEntry("t", Entry{Action: "act"})
	cases = append(cases, struct {
		err  error
		want string
	}{err, `table "ingress.t" has no key: set its default action instead`})
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("got error %v, want one containing %q", c.err, c.want)
		}
	}
}

func TestRealP4cProgramsLoadOrNameWhatIsUnsupported(t *testing.T) {
	ref := repo.SharedOrSkip(t, "p4c-conformance", "reference")
	files, _ := filepath.Glob(filepath.Join(ref, "*.json"))
	if len(files) == 0 {
		t.Skipf("no JSON in %s", ref)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Load(data)
		name := filepath.Base(f)
		if name == "extern-funcs-bmv2.json" {
			// real p4c itself rejects this program (verdicts.txt: compile-error)
			if err == nil || !strings.Contains(err.Error(), `unsupported primitive "extern_func"`) {
				t.Errorf("%s: want an unsupported-primitive error, got %v", name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDirectCountersAndMetersFollowTheirEntry(t *testing.T) {
	data, err := os.ReadFile("testdata/ipv4_lpm.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(data), `"with_counters": false`, `"with_counters": true`, 1)
	doc = strings.Replace(doc, `"direct_meters": null`, `"direct_meters": "ingress.dm"`, 1)
	doc = strings.Replace(doc, `"counter_arrays": []`, `"counter_arrays": [{"name":"ingress.dc","id":0,"size":1024,"is_direct":true,"binding":"ingress.ipv4_lpm"}]`, 1)
	doc = strings.Replace(doc, `"meter_arrays": []`, `"meter_arrays": [{"name":"ingress.dm","id":0,"is_direct":true,"size":1024,"rate_count":2,"type":"packets","binding":"ingress.ipv4_lpm","result_target":["ipv4","diffserv"]}]`, 1)
	p, err := Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if ti, _ := p.Table("ipv4_lpm"); !ti.HasCounters || !ti.HasMeters {
		t.Fatalf("table info %+v", ti)
	}
	now := time.Unix(0, 0)
	sw := NewSwitch(p, Config{Now: func() time.Time { return now }})
	h, err := sw.AddEntry("ipv4_lpm", Entry{Match: []Match{LPM([]byte{10, 0, 0, 0}, 8)}, Action: "forward", Args: [][]byte{{1}, {2, 0, 0, 0, 0, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.SetDirectMeter("ipv4_lpm", h, MeterConfig{CIR: 1, CBurst: 1, PIR: 1, PBurst: 1}); err != nil {
		t.Fatal(err)
	}
	var marks []byte
	for range 2 {
		out := run(t, sw, 0, ipv4Frame([4]byte{10, 1, 1, 1}, 64, 6))
		marks = append(marks, out[0].data[15])
	}
	run(t, sw, 0, ipv4Frame([4]byte{11, 1, 1, 1}, 64, 6)) // a miss counts nothing
	c, err := sw.ReadDirectCounter("ipv4_lpm", h)
	if err != nil || c.Packets != 2 || c.Bytes != 2*40 {
		t.Errorf("direct counter %+v (%v), want 2 packets of 40 bytes", c, err)
	}
	if !bytes.Equal(marks, []byte{ColorGreen, ColorRed}) {
		t.Errorf("colours written into diffserv: %v, want green then red", marks)
	}
	if cfg, ok, err := sw.ReadDirectMeter("ipv4_lpm", h); err != nil || !ok || cfg.PIR != 1 {
		t.Errorf("ReadDirectMeter = %+v, %t, %v", cfg, ok, err)
	}
	if err := sw.ResetDirectMeter("ipv4_lpm", h); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := sw.ReadDirectMeter("ipv4_lpm", h); err != nil || ok {
		t.Errorf("ReadDirectMeter after ResetDirectMeter: configured %t, %v", ok, err)
	}
	if out := run(t, sw, 0, ipv4Frame([4]byte{10, 1, 1, 1}, 64, 6)); out[0].data[15] != ColorGreen {
		t.Errorf("after ResetDirectMeter the packet was marked %d, want green", out[0].data[15])
	}
}
