package topo

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// smallTopology is a valid file; the bad-input tests change one line of it.
var smallTopology = []string{
	"name: small", // line 1
	"nodes:",
	"  - {name: s1, kind: switch, programmable: true, capacity: 9Gbps}", // line 3
	"  - {name: s2, kind: switch}",
	"  - {name: h1, kind: host, role: worker}", // line 5
	"  - {name: h2, kind: host, role: ps, ingress: 9Gbps}",
	"links:",
	`  - {endpoints: ["s1:p1", "h1:eth0"], bandwidth: 10Gbps}`, // line 8
	`  - {endpoints: ["s2:p1", "h2:eth0"], bandwidth: 10Gbps, delay: 2ms, loss: 0.5%, mtu: 9000}`,
	`  - {endpoints: ["s1:p2", "s2:p2"], bandwidth: 1.5Gbps}`, // line 10
}

// withLine returns smallTopology with line n (1-based) replaced.
func withLine(n int, text string) []byte { return withLines(map[int]string{n: text}) }

// withLines returns smallTopology with the given lines (1-based) replaced.
func withLines(repl map[int]string) []byte {
	lines := append([]string(nil), smallTopology...)
	for n, text := range repl {
		lines[n-1] = text
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

func TestParseReadsEveryField(t *testing.T) {
	tp, err := Parse([]byte(strings.Join(smallTopology, "\n")), "small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if tp.Name != "small" || len(tp.Nodes) != 4 || len(tp.Links) != 3 {
		t.Fatalf("parsed %q with %d nodes, %d links", tp.Name, len(tp.Nodes), len(tp.Links))
	}
	s1 := tp.Node("s1")
	if !s1.Programmable || s1.Capacity != 9*Gbps || s1.ID != 1 || s1.Line != 3 {
		t.Errorf("s1 = %+v", s1)
	}
	if h2 := tp.Node("h2"); h2.ID != 2 || h2.Role != RolePS || h2.Ingress != 9*Gbps {
		t.Errorf("h2 = %+v", h2)
	}
	l := tp.Links[1]
	if l.Delay != 2*time.Millisecond || l.Loss != 0.5 || l.MTU != 9000 || l.Bandwidth != 10*Gbps || l.Line != 9 {
		t.Errorf("link 1 = %+v", l)
	}
	if tp.Links[2].Bandwidth != 1.5*Gbps {
		t.Errorf("1.5Gbps read as %v", tp.Links[2].Bandwidth)
	}
}

// TestParseBadInputNamesFileLineAndField has one case per class of bad input;
// each must produce exactly the error a person would need.
func TestParseBadInputNamesFileLineAndField(t *testing.T) {
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"unknown node in a link", withLine(10, `  - {endpoints: ["s1:p2", "s9:p2"]}`),
			`x.yaml:10: links[2].endpoints: unknown node "s9"`},
		{"duplicate names", withLine(4, "  - {name: s1, kind: switch}"),
			`x.yaml:4: nodes[1].name: duplicate node name "s1" (first defined at line 3)`},
		{"port clash", withLine(10, `  - {endpoints: ["s1:p1", "s2:p2"]}`),
			`x.yaml:10: links[2].endpoints: port clash: s1:p1 is already used by the link s1:p1--h1:eth0 at line 8`},
		{"unknown field in a link", withLine(10, `  - {endpoints: ["s1:p2", "s2:p2"], bandwith: 10Gbps}`),
			`x.yaml:10: links[2].bandwith: unknown field "bandwith" (known fields: endpoints, bandwidth, delay, loss, mtu)`},
		{"unknown field in a node", withLine(4, "  - {name: s2, kind: switch, programable: true}"),
			`x.yaml:4: nodes[1].programable: unknown field "programable" (known fields: name, kind, id, role, ingress, tier, programmable, capacity)`},
		{"unknown top-level field", withLine(1, "nmae: small"),
			`x.yaml:1: nmae: unknown field "nmae" (known fields: name, description, nodes, links)`},
		{"bandwidth without a unit", withLine(8, `  - {endpoints: ["s1:p1", "h1:eth0"], bandwidth: 10}`),
			`x.yaml:8: links[0].bandwidth: bandwidth "10" without a unit: write e.g. 10Gbps (units: bps, Kbps, Mbps, Gbps, Tbps)`},
		{"bandwidth with an unknown unit", withLine(8, `  - {endpoints: ["s1:p1", "h1:eth0"], bandwidth: 9G}`),
			`x.yaml:8: links[0].bandwidth: bandwidth "9G": unknown unit "G" (units: bps, Kbps, Mbps, Gbps, Tbps, written right after the number)`},
		{"zero bandwidth", withLine(8, `  - {endpoints: ["s1:p1", "h1:eth0"], bandwidth: 0Gbps}`),
			`x.yaml:8: links[0].bandwidth: bandwidth "0Gbps" must be above 0 (leave the field out for no limit)`},
		{"delay without a unit", withLine(8, `  - {endpoints: ["s1:p1", "h1:eth0"], delay: 2}`),
			`x.yaml:8: links[0].delay: delay "2" without a unit: write e.g. 2ms (units: ns, us, ms, s)`},
		{"loss without percent", withLine(8, `  - {endpoints: ["s1:p1", "h1:eth0"], loss: 0.5}`),
			`x.yaml:8: links[0].loss: loss "0.5" without a unit: write it as a percentage, e.g. 0.5%`},
		{"host port written as a switch port", withLine(8, `  - {endpoints: ["s1:p1", "h1:p1"]}`),
			`x.yaml:8: links[0].endpoints[1]: h1 is a host: write its interfaces eth0, eth1, ... (got p1)`},
		{"endpoint without port", withLine(8, `  - {endpoints: ["s1", "h1:eth0"]}`),
			`x.yaml:8: links[0].endpoints[0]: "s1" is not node:port (switch ports are p1, p2, ...; host interfaces eth0, eth1, ...)`},
		{"host with no link", withLine(8, "  # h1's link removed"),
			`x.yaml:5: nodes[2]: host h1 has no link`},
		{"capacity on a plain switch", withLine(4, "  - {name: s2, kind: switch, capacity: 1Gbps}"),
			`x.yaml:4: nodes[1].capacity: switch s2 is not programmable: only programmable switches have an aggregation capacity (add programmable: true or drop capacity)`},
		{"programmable switch without capacity", withLine(4, "  - {name: s2, kind: switch, programmable: true}"),
			`x.yaml:4: nodes[1].capacity: programmable switch s2 needs a capacity, the rate it can aggregate (GRID's C_s), e.g. capacity: 100Gbps`},
		{"unknown role", withLine(5, "  - {name: h1, kind: host, role: boss}"),
			`x.yaml:5: nodes[2].role: unknown role "boss" of host h1 (worker or ps; omit for a plain host)`},
		{"ingress on a worker", withLine(5, "  - {name: h1, kind: host, role: worker, ingress: 1Gbps}"),
			`x.yaml:5: nodes[2].ingress: h1 is not a PS: ingress is the bandwidth of a parameter server`},
		{"MTU out of range", withLine(10, `  - {endpoints: ["s1:p2", "s2:p2"], mtu: 100000}`),
			`x.yaml:10: links[2].mtu: MTU 100000 out of range 576..9216`},
		{"duplicate switch id", withLines(map[int]string{3: "  - {name: s1, kind: switch, id: 7}", 4: "  - {name: s2, kind: switch, id: 7}"}),
			`x.yaml:4: nodes[1].id: switch id 7 already belongs to s1 at line 3`},
		{"parallel links", withLine(8, `  - {endpoints: ["s1:p1", "s2:p3"]}`),
			`x.yaml:10: links[2].endpoints: second link between s1 and s2 (the first is s1:p1--s2:p3 at line 8); parallel links are not modelled`},
		{"field given twice", withLine(4, "  - {name: s2, kind: switch, kind: host}"),
			`x.yaml:4: nodes[1].kind: field given twice (first at line 4)`},
		{"YAML syntax", withLine(4, "  - {name: s2, kind: switch"),
			`x.yaml:4: YAML syntax: did not find expected ',' or '}'`},
		{"missing kind", withLine(4, "  - {name: s2}"),
			`x.yaml:4: nodes[1].kind: missing: node "s2" needs kind host or switch`},
		{"two documents", append(withLine(1, "name: small"), "---\nname: other\n"...), `x.yaml:11: a second YAML document: a file holds one topology`},
		{"empty file", []byte("# nothing here\n"), `x.yaml:1: empty file: a topology needs nodes and links`},
		{"no nodes", []byte("nodes: []\nlinks: []\n"), `x.yaml:1: nodes: the topology has no nodes`},
		{"disconnected", []byte("nodes:\n  - {name: s1, kind: switch}\n  - {name: s2, kind: switch}\n  - {name: h1, kind: host}\nlinks:\n  - {endpoints: [\"s1:p1\", \"h1:eth0\"]}\n"),
			`x.yaml:3: nodes[1]: s2 is not connected to s1: the topology falls apart`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.file, "x.yaml")
			if err == nil {
				t.Fatalf("accepted:\n%s", c.file)
			}
			if err.Error() != c.want {
				t.Errorf("error\n got: %s\nwant: %s", err, c.want)
			}
			var located *Error
			if !errors.As(err, &located) || located.Source != "x.yaml" || located.Line == 0 {
				t.Errorf("error %#v does not carry file and line", err)
			}
		})
	}
}

func TestParseAssignsMissingIDsAroundExplicitOnes(t *testing.T) {
	src := "nodes:\n" +
		"  - {name: s1, kind: switch}\n" +
		"  - {name: s2, kind: switch, id: 1}\n" +
		"  - {name: h1, kind: host, id: 2}\n" +
		"  - {name: h2, kind: host}\n" +
		"links:\n" +
		"  - {endpoints: [\"s1:p1\", \"h1:eth0\"]}\n" +
		"  - {endpoints: [\"s2:p1\", \"h2:eth0\"]}\n" +
		"  - {endpoints: [\"s1:p2\", \"s2:p2\"]}\n"
	tp, err := Parse([]byte(src), "dir/ids.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := []int{tp.Node("s1").ID, tp.Node("s2").ID, tp.Node("h1").ID, tp.Node("h2").ID}
	if got[0] != 2 || got[1] != 1 || got[2] != 2 || got[3] != 1 {
		t.Errorf("ids s1 s2 h1 h2 = %v, want 2 1 2 1", got)
	}
	if tp.Name != "ids" {
		t.Errorf("name from file = %q, want ids", tp.Name)
	}
}

func TestValidateOfBuiltTopologyNamesFieldWithoutFile(t *testing.T) {
	tb := Testbed()
	tb.Links[0].B.Node = "nobody"
	err := tb.Validate()
	if err == nil || err.Error() != `links[0].endpoints: unknown node "nobody"` {
		t.Errorf("error = %v", err)
	}
}

func TestMarshalParseRoundTripKeepsEverything(t *testing.T) {
	orig, err := Parse([]byte(strings.Join(smallTopology, "\n")), "small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	orig.Description = `quotes " and: colons, # hashes`
	for _, tp := range []*Topology{orig, Testbed(), PaperFig1()} {
		data, err := Marshal(tp)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(data, "")
		if err != nil {
			t.Fatalf("%s: %v\n%s", tp.Name, err, data)
		}
		if back.Name != tp.Name || back.Description != tp.Description || len(back.Nodes) != len(tp.Nodes) || len(back.Links) != len(tp.Links) {
			t.Fatalf("%s: header or sizes changed:\n%s", tp.Name, data)
		}
		for i, n := range tp.Nodes {
			m := *back.Nodes[i]
			m.Line = n.Line
			if m != *n {
				t.Errorf("%s: node %d = %+v, want %+v", tp.Name, i, m, *n)
			}
		}
		for i, l := range tp.Links {
			m := *back.Links[i]
			m.Line = l.Line
			if m != *l {
				t.Errorf("%s: link %d = %+v, want %+v", tp.Name, i, m, *l)
			}
		}
		again, err := Marshal(back)
		if err != nil || string(again) != string(data) {
			t.Errorf("%s: second Marshal differs (%v)", tp.Name, err)
		}
	}
}

func TestBandwidthStringParsesBackExactly(t *testing.T) {
	for _, b := range []Bandwidth{1, 999, 1500, 3 * Gbps, 1.5 * Gbps, 100 * Gbps, 3.2 * Tbps, 123456789, 0.1 * Gbps, 2.5 * Kbps} {
		s := b.String()
		back, err := ParseBandwidth(s)
		if err != nil || back != b {
			t.Errorf("%v -> %q -> %v, %v", float64(b), s, float64(back), err)
		}
	}
	if got := (9 * Gbps).String(); got != "9Gbps" {
		t.Errorf("9Gbps written %q", got)
	}
}

func TestParseBandwidthRejectsSpaceBeforeUnit(t *testing.T) {
	_, err := ParseBandwidth("10 Gbps")
	if err == nil || !strings.Contains(err.Error(), "right after the number: 10Gbps") {
		t.Errorf("error = %v", err)
	}
}

// TestAHugeFileIsRefusedAfterReadingLittleNamingLineAndField writes a
// topology that goes on with links far past MaxFileSize: Load refuses it
// naming the line and the link where the limit falls, having allocated
// little more than the limit (decoding it would take gigabytes).
func TestAHugeFileIsRefusedAfterReadingLittleNamingLineAndField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, "name: huge\nnodes:\n  - {name: s1, kind: switch}\n  - {name: h1, kind: host}\nlinks:\n")
	const link = "  - {endpoints: [\"s1:p1\", \"h1:eth0\"], bandwidth: 1Gbps}\n"
	n := 3 * MaxFileSize / len(link)
	for range n {
		w.WriteString(link)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Load(path)
	runtime.ReadMemStats(&after)
	// The limit falls inside link number (MaxFileSize-header)/len(link).
	header := len("name: huge\nnodes:\n  - {name: s1, kind: switch}\n  - {name: h1, kind: host}\nlinks:\n")
	index := (MaxFileSize - header) / len(link)
	want := fmt.Sprintf("%s:%d: links[%d]: the file goes on past 8 MiB", path, 6+index, index)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want it to start with %q", err, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*MaxFileSize {
		t.Errorf("refusing a %d MiB file allocated %d MiB", 3*MaxFileSize>>20, alloc>>20)
	}
}
