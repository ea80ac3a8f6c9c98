package topo

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func drawnTopologies(t *testing.T) map[string]*Topology {
	t.Helper()
	out := map[string]*Topology{"testbed": Testbed(), "paper-fig1": PaperFig1()}
	small, err := Parse([]byte(strings.Join(smallTopology, "\n")), "small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out["small"] = small
	for name, gen := range map[string]func() (*Topology, error){
		"fattree-k4":   func() (*Topology, error) { return FatTree(4, 0) },
		"fattree-k8":   func() (*Topology, error) { return FatTree(8, 6) },
		"leafspine-60": func() (*Topology, error) { return LeafSpine(30, 30, 500) },
	} {
		tp, err := gen()
		if err != nil {
			t.Fatal(err)
		}
		out[name] = tp
	}
	return out
}

func boxOf(n *Node) (w, h float64) {
	if n.Kind == KindSwitch {
		return drawSwitchW, drawSwitchH
	}
	return drawHostW, drawHostH
}

func TestLayoutKeepsNodesApartAndInsideTheImage(t *testing.T) {
	for name, tp := range drawnTopologies(t) {
		d := tp.layout()
		for i, a := range tp.Nodes {
			pa := d.pos[a.Name]
			wa, ha := boxOf(a)
			if pa.x-wa/2 < 0 || pa.y-ha/2 < 0 || pa.x+wa/2 > d.width || pa.y+ha/2 > d.height {
				t.Errorf("%s: %s at %v outside %vx%v", name, a.Name, pa, d.width, d.height)
			}
			for _, b := range tp.Nodes[i+1:] {
				pb := d.pos[b.Name]
				wb, hb := boxOf(b)
				if math.Abs(pa.x-pb.x) < (wa+wb)/2 && math.Abs(pa.y-pb.y) < (ha+hb)/2 {
					t.Errorf("%s: %s at %v overlaps %s at %v", name, a.Name, pa, b.Name, pb)
				}
			}
		}
	}
}

func TestLayoutDrawsTiersTopDownWithHostsAtTheBottom(t *testing.T) {
	ft, err := FatTree(4, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := ft.layout()
	y := func(name string) float64 { return d.pos[name].y }
	if !(y("c1") < y("a1") && y("a1") < y("e1") && y("e1") < y("h1")) {
		t.Errorf("rows c1 %v, a1 %v, e1 %v, h1 %v are not top-down", y("c1"), y("a1"), y("e1"), y("h1"))
	}
	for _, h := range ft.Hosts() {
		for _, s := range ft.Switches() {
			if y(h.Name) <= y(s.Name) {
				t.Fatalf("host %s drawn above switch %s", h.Name, s.Name)
			}
		}
	}
	if d.circular {
		t.Error("a fat-tree drawn as a circle")
	}
	if !Testbed().layout().circular {
		t.Error("the tierless testbed triangle is not drawn as a circle")
	}
}

func TestLayoutKeepsArcsOfTheTopRowBelowTheTitle(t *testing.T) {
	small, err := Parse([]byte(strings.Join(smallTopology, "\n")), "small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := small.layout()
	a, b := d.pos["s1"], d.pos["s2"]
	if a.y != b.y {
		t.Fatalf("s1 and s2 both hold hosts and should share a row: %v %v", a, b)
	}
	if peak := a.y - arcLift(a.x-b.x); peak < drawMargin+drawTitle {
		t.Errorf("the s1-s2 arc peaks at y=%v, inside the title band ending at %v", peak, drawMargin+drawTitle)
	}
}

func TestSVGIsWellFormedAndNamesEveryNode(t *testing.T) {
	for name, tp := range drawnTopologies(t) {
		svg := tp.SVG()
		dec := xml.NewDecoder(strings.NewReader(string(svg)))
		texts := map[string]bool{}
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: SVG is not well-formed XML: %v", name, err)
			}
			if cd, ok := tok.(xml.CharData); ok {
				texts[strings.TrimSpace(string(cd))] = true
			}
		}
		for _, n := range tp.Nodes {
			if !texts[n.Name] {
				t.Errorf("%s: node %s has no label", name, n.Name)
			}
		}
	}
}

func TestDOTHasOneEdgePerLinkAndOneRankPerRow(t *testing.T) {
	ft, err := FatTree(4, 0)
	if err != nil {
		t.Fatal(err)
	}
	dot := string(ft.DOT())
	if got := strings.Count(dot, " -- "); got != 48 {
		t.Errorf("DOT has %d edges, want 48", got)
	}
	if got := strings.Count(dot, "rank=same"); got != 3 {
		t.Errorf("DOT has %d ranks, want 3 (core, agg, edge)", got)
	}
	if !strings.Contains(dot, `"e1" -- "h1" [taillabel="p1", headlabel="eth0"]`) {
		t.Errorf("DOT lacks the e1-h1 edge with its ports:\n%s", dot)
	}
}

func TestSummaryCountsFatTreeK4(t *testing.T) {
	ft, err := FatTree(4, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := ft.Summary()
	for _, want := range []string{
		"nodes:        36: 20 switches, 16 hosts",
		"switches:     4 core, 8 agg, 8 edge",
		"programmable: 20 of 20 (c1, c2, c3, c4, a1, a2, a3, a4, and 12 more); capacity: 100Gbps",
		"hosts:        15 workers, 1 PS",
		"PS:           h16 on e8:p2, ingress 100Gbps (sum of its links)",
		"links:        48: 32 between switches, 16 to hosts",
		"bandwidth:    100Gbps",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if !strings.Contains(PaperFig1().Summary(), "bandwidth:    11 x 3Gbps, 1 x 9Gbps") {
		t.Errorf("Fig. 1 summary:\n%s", PaperFig1().Summary())
	}
}

// TestDrawingsMatchGoldenFiles pins the testbed's and Fig. 1's drawings, the
// ones people look at most; -update rewrites testdata after a deliberate change
// (look at the SVG before committing it).
func TestDrawingsMatchGoldenFiles(t *testing.T) {
	for name, tp := range map[string]*Topology{"testbed": Testbed(), "paper-fig1": PaperFig1()} {
		for ext, data := range map[string][]byte{"svg": tp.SVG(), "dot": tp.DOT()} {
			path := filepath.Join("testdata", name+"."+ext)
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./harness/topo -update)", err)
			}
			if string(want) != string(data) {
				t.Errorf("%s differs; run go test ./harness/topo -update and check the drawing", path)
			}
		}
	}
}
