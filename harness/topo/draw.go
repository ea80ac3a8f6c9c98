package topo

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strings"
)

// Drawing sizes in SVG user units (pixels).
const (
	drawMargin    = 30.0
	drawTitle     = 46.0 // height of the title band
	drawLegend    = 60.0 // height of the legend band
	drawLayerGap  = 120.0
	drawSwitchW   = 52.0
	drawSwitchH   = 24.0
	drawHostW     = 40.0
	drawHostH     = 18.0
	drawHostGapX  = 46.0
	drawHostGapY  = 30.0
	drawHostDrop  = 70.0 // from a switch to its first row of hosts
	drawMinSlot   = 72.0
	drawSmallEdge = 60 // up to this many links, ports and bandwidths are labelled
)

type point struct{ x, y float64 }

// drawing is a placement of every node.
type drawing struct {
	pos           map[string]point
	width, height float64
	// layers are the switch rows top to bottom (one row for a circular layout).
	layers [][]*Node
	// sameLayer marks switches drawn on one row, whose links bend to stay visible.
	sameLayer map[string]int
	circular  bool
}

// homeSwitch is the switch a host is drawn under: the one on its lowest interface.
func (t *Topology) homeSwitch(host string) string {
	for _, adj := range t.Neighbors(host) {
		return adj.Peer.Node
	}
	return ""
}

func (t *Topology) hostsUnder() map[string][]*Node {
	under := map[string][]*Node{}
	for _, h := range t.Hosts() {
		sw := t.homeSwitch(h.Name)
		under[sw] = append(under[sw], h)
	}
	return under
}

// switchLayers orders switches into rows, top first: by tier when every
// switch has one (core/spine, then agg, then edge/leaf), otherwise by hop
// distance from the switches that hold hosts, farthest on top.
func (t *Topology) switchLayers() [][]*Node {
	switches := t.Switches()
	rank := map[string]int{}
	allTiered := len(switches) > 0
	for _, s := range switches {
		switch s.Tier {
		case TierCore, TierSpine:
			rank[s.Name] = 0
		case TierAgg:
			rank[s.Name] = 1
		case TierEdge, TierLeaf:
			rank[s.Name] = 2
		default:
			allTiered = false
		}
	}
	if !allTiered {
		rank = t.distanceFromHosts()
	}
	maxRank := 0
	for _, r := range rank {
		maxRank = max(maxRank, r)
	}
	rows := make([][]*Node, maxRank+1)
	for _, s := range switches {
		r := rank[s.Name]
		if !allTiered {
			r = maxRank - r // farthest from hosts on top
		}
		rows[r] = append(rows[r], s)
	}
	var out [][]*Node
	for _, row := range rows {
		if len(row) > 0 {
			out = append(out, row)
		}
	}
	return out
}

// distanceFromHosts is each switch's hop count to the nearest switch holding a host.
func (t *Topology) distanceFromHosts() map[string]int {
	dist := map[string]int{}
	var queue []string
	for sw := range t.hostsUnder() {
		dist[sw] = 0
		queue = append(queue, sw)
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, adj := range t.Neighbors(cur) {
			if n := t.Node(adj.Peer.Node); n.Kind == KindSwitch {
				if _, seen := dist[n.Name]; !seen {
					dist[n.Name] = dist[cur] + 1
					queue = append(queue, n.Name)
				}
			}
		}
	}
	return dist
}

// hostColumns is how many hosts sit side by side under a switch.
func hostColumns(n int) int {
	if n <= 4 {
		return n
	}
	return int(math.Ceil(math.Sqrt(float64(n))))
}

func (t *Topology) layout() drawing {
	layers := t.switchLayers()
	under := t.hostsUnder()
	d := drawing{pos: map[string]point{}, layers: layers, sameLayer: map[string]int{}}
	// Tierless switches that all hold hosts (the paper's triangle) read best on a circle.
	if len(layers) == 1 && len(layers[0]) >= 3 && !hasTier(layers[0]) {
		t.circleLayout(&d, under)
		return d
	}
	for i, row := range layers {
		for _, s := range row {
			d.sameLayer[s.Name] = i
		}
	}
	slot := func(s *Node) float64 { return max(drawMinSlot, float64(hostColumns(len(under[s.Name])))*drawHostGapX) }
	width := 0.0
	for _, row := range layers {
		w := 0.0
		for _, s := range row {
			w += slot(s)
		}
		width = max(width, w)
	}
	// Wide drawings get taller rows too, or links between rows would run almost flat.
	layerGap := max(drawLayerGap, width/10)
	y := drawMargin + drawTitle + drawSwitchH/2
	bottom := y
	for _, row := range layers {
		rowWidth := 0.0
		for _, s := range row {
			rowWidth += slot(s)
		}
		scale := width / rowWidth
		x := drawMargin
		rowDepth := 0.0
		for _, s := range row {
			w := slot(s) * scale
			cx := x + w/2
			d.pos[s.Name] = point{cx, y}
			hosts := under[s.Name]
			cols := hostColumns(len(hosts))
			for j, h := range hosts {
				c, r := j%cols, j/cols
				inRow := min(cols, len(hosts)-r*cols)
				hx := cx + (float64(c)-float64(inRow-1)/2)*drawHostGapX
				hy := y + drawHostDrop + float64(r)*drawHostGapY
				d.pos[h.Name] = point{hx, hy}
				rowDepth = max(rowDepth, hy-y)
			}
			x += w
		}
		bottom = max(bottom, y+rowDepth)
		y += layerGap + rowDepth
	}
	d.width = width + 2*drawMargin
	d.height = bottom + drawHostH/2 + drawMargin + drawLegend
	// Links within the top row bend upwards; keep them (and their labels) clear of the title.
	lift := 0.0
	for _, l := range t.Links {
		ra, oka := d.sameLayer[l.A.Node]
		rb, okb := d.sameLayer[l.B.Node]
		if oka && okb && ra == 0 && rb == 0 {
			lift = max(lift, arcLift(d.pos[l.A.Node].x-d.pos[l.B.Node].x))
		}
	}
	if room := drawSwitchH/2 + 8; lift+14 > room {
		for name, p := range d.pos {
			d.pos[name] = point{p.x, p.y + lift + 14 - room}
		}
		d.height += lift + 14 - room
	}
	return d
}

func hasTier(nodes []*Node) bool {
	for _, n := range nodes {
		if n.Tier != "" {
			return true
		}
	}
	return false
}

// circleLayout puts the switches on a circle and fans each switch's hosts outwards.
func (t *Topology) circleLayout(d *drawing, under map[string][]*Node) {
	d.circular = true
	row := d.layers[0]
	n := float64(len(row))
	radius := max(110, 40*n)
	const hostReach = 100.0
	for i, s := range row {
		theta := -math.Pi/2 + 2*math.Pi*float64(i)/n
		sp := point{radius * math.Cos(theta), radius * math.Sin(theta)}
		d.pos[s.Name] = sp
		hosts := under[s.Name]
		step := math.Min(math.Pi/6, (2*math.Pi/3)/float64(max(1, len(hosts)-1)))
		for j, h := range hosts {
			phi := theta + (float64(j)-float64(len(hosts)-1)/2)*step
			d.pos[h.Name] = point{sp.x + hostReach*math.Cos(phi), sp.y + hostReach*math.Sin(phi)}
		}
	}
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range d.pos {
		minX, minY = math.Min(minX, p.x), math.Min(minY, p.y)
		maxX, maxY = math.Max(maxX, p.x), math.Max(maxY, p.y)
	}
	dx := drawMargin + drawSwitchW - minX
	dy := drawMargin + drawTitle + drawSwitchH - minY
	for name, p := range d.pos {
		d.pos[name] = point{p.x + dx, p.y + dy}
	}
	d.width = maxX - minX + 2*(drawMargin+drawSwitchW)
	d.height = maxY - minY + 2*drawSwitchH + drawTitle + 2*drawMargin + drawLegend
}

// Palette shared by the SVG and DOT drawings.
const (
	colorProgFill   = "#f9d38b"
	colorProgLine   = "#a86b12"
	colorSwitchFill = "#dddddd"
	colorSwitchLine = "#555555"
	colorWorkerFill = "#cfe3f7"
	colorWorkerLine = "#2f5f96"
	colorPSFill     = "#bfe6bf"
	colorPSLine     = "#23702a"
	colorHostFill   = "#ffffff"
	colorHostLine   = "#777777"
	colorLink       = "#8a8a8a"
)

func nodeColors(n *Node) (fill, line string) {
	switch {
	case n.Kind == KindSwitch && n.Programmable:
		return colorProgFill, colorProgLine
	case n.Kind == KindSwitch:
		return colorSwitchFill, colorSwitchLine
	case n.Role == RoleWorker:
		return colorWorkerFill, colorWorkerLine
	case n.Role == RolePS:
		return colorPSFill, colorPSLine
	}
	return colorHostFill, colorHostLine
}

// nodeDetails is the hover text of a node.
func (t *Topology) nodeDetails(n *Node) string {
	parts := []string{fmt.Sprintf("%s: %s id %d", n.Name, n.Kind, n.ID)}
	if n.Tier != "" {
		parts = append(parts, "tier "+string(n.Tier))
	}
	if n.Programmable {
		parts = append(parts, "programmable, capacity "+capacityString(n.Capacity))
	}
	if n.Role != RoleHost {
		parts = append(parts, "role "+string(n.Role))
	}
	if n.Role == RolePS {
		parts = append(parts, "ingress "+capacityString(t.Ingress(n.Name)))
	}
	return strings.Join(parts, ", ")
}

// commonBandwidth is the bandwidth most links have (the smaller one on a tie);
// drawings label only the links that differ from it.
func (t *Topology) commonBandwidth() Bandwidth {
	count := map[Bandwidth]int{}
	var best Bandwidth
	for _, l := range t.Links {
		count[l.Bandwidth]++
		if c := count[l.Bandwidth]; c > count[best] || c == count[best] && l.Bandwidth < best {
			best = l.Bandwidth
		}
	}
	return best
}

func xmlText(s string) string {
	var b bytes.Buffer
	// EscapeText fails only when writing to b fails, which a bytes.Buffer never does.
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// SVG draws the topology as a standalone SVG image: switches in rows by tier
// (or on a circle for a tierless ring such as the testbed), hosts below their
// switch, line width growing with bandwidth, and for small topologies the
// port numbers and differing bandwidths written on the links. Hovering a node
// shows its details.
func (t *Topology) SVG() []byte {
	d := t.layout()
	legend, legendWidth := t.svgLegend(d)
	subtitle := fmt.Sprintf("%d switches, %d hosts, %d links", len(t.Switches()), len(t.Hosts()), len(t.Links))
	d.widen(max(legendWidth, 2*drawMargin+11*float64(len(t.Name)), 2*drawMargin+6.5*float64(len(subtitle))))
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`+"\n",
		d.width, d.height, d.width, d.height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="18" font-weight="bold">%s</text>`+"\n", drawMargin, drawMargin+8, xmlText(t.Name))
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="12" fill="#444">%s</text>`+"\n", drawMargin, drawMargin+26, subtitle)

	maxBW := Bandwidth(0)
	for _, l := range t.Links {
		maxBW = max(maxBW, l.Bandwidth)
	}
	common := t.commonBandwidth()
	small := len(t.Links) <= drawSmallEdge
	// Dense meshes (a 30x30 leaf-spine has 900 trunks) stay legible only with thin, translucent links.
	thin, opacity := 1.0, 1.0
	if len(t.Links) > 3*drawSmallEdge {
		thin, opacity = 0.5, 0.45
	}
	fmt.Fprintf(&b, `<g stroke-linecap="round" fill="none" stroke-opacity="%.2f">`+"\n", opacity)
	var labels bytes.Buffer
	for _, l := range t.Links {
		pa, pb := d.pos[l.A.Node], d.pos[l.B.Node]
		width, dash := 1.0, ""
		if l.Bandwidth == 0 {
			dash = ` stroke-dasharray="5 4"`
		} else if maxBW > 0 {
			width = 1 + 2.5*float64(l.Bandwidth/maxBW)
		}
		width *= thin
		mid := point{(pa.x + pb.x) / 2, (pa.y + pb.y) / 2}
		// Where the link heads when it leaves A and B; port labels sit along that way.
		headA, headB := pb, pa
		ra, oka := d.sameLayer[l.A.Node]
		rb, okb := d.sameLayer[l.B.Node]
		if oka && okb && ra == rb && !d.circular {
			// Same-row switches: bend upwards so the link does not run through the nodes between them.
			lift := arcLift(pb.x - pa.x)
			ctrl := point{mid.x, mid.y - 2*lift}
			fmt.Fprintf(&b, `<path d="M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f" stroke="%s" stroke-width="%.1f"%s/>`+"\n",
				pa.x, pa.y, ctrl.x, ctrl.y, pb.x, pb.y, colorLink, width, dash)
			mid = point{mid.x, mid.y - lift}
			headA, headB = ctrl, ctrl
		} else {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"%s/>`+"\n",
				pa.x, pa.y, pb.x, pb.y, colorLink, width, dash)
		}
		if !small {
			continue
		}
		if l.Bandwidth != common {
			fmt.Fprintf(&labels, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle" fill="#333" stroke="white" stroke-width="3" paint-order="stroke">%s</text>`+"\n",
				mid.x, mid.y-3, capacityString(l.Bandwidth))
		}
		for _, e := range [2]Endpoint{l.A, l.B} {
			if t.Node(e.Node).Kind != KindSwitch {
				continue
			}
			from, to := d.pos[e.Node], headA
			if e == l.B {
				to = headB
			}
			dist := math.Hypot(to.x-from.x, to.y-from.y)
			if dist == 0 {
				continue
			}
			ux, uy := (to.x-from.x)/dist, (to.y-from.y)/dist
			// Just outside the switch box, where the link leaves it.
			exit := math.Min(drawSwitchW/2/math.Max(math.Abs(ux), 1e-9), drawSwitchH/2/math.Max(math.Abs(uy), 1e-9))
			at := point{from.x + ux*(exit+10), from.y + uy*(exit+10)}
			fmt.Fprintf(&labels, `<text x="%.1f" y="%.1f" font-size="9" text-anchor="middle" fill="#8a4b00" stroke="white" stroke-width="2.5" paint-order="stroke">p%d</text>`+"\n",
				at.x, at.y+3, e.Port)
		}
	}
	b.WriteString("</g>\n")
	b.Write(labels.Bytes())

	for _, n := range t.Nodes {
		p := d.pos[n.Name]
		fill, line := nodeColors(n)
		w, h, rx, size, weight := drawHostW, drawHostH, 3.0, 10, "normal"
		if n.Kind == KindSwitch {
			w, h, rx, size, weight = drawSwitchW, drawSwitchH, 7, 11, "bold"
		}
		strokeWidth := 1.2
		if n.Role == RolePS {
			strokeWidth = 2.2
		}
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%.1f" y="%.1f" width="%.0f" height="%.0f" rx="%.0f" fill="%s" stroke="%s" stroke-width="%.1f"/>`,
			xmlText(t.nodeDetails(n)), p.x-w/2, p.y-h/2, w, h, rx, fill, line, strokeWidth)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%d" font-weight="%s" text-anchor="middle">%s</text></g>`+"\n",
			p.x, p.y+float64(size)/2-1, size, weight, xmlText(n.Name))
	}
	b.Write(legend)
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// svgLegend draws the legend at the bottom of d and returns it with the
// width it needs, so that small drawings are widened to show all of it.
func (t *Topology) svgLegend(d drawing) ([]byte, float64) {
	var b bytes.Buffer
	y := d.height - drawMargin - drawLegend/2
	x := drawMargin
	item := func(fill, line, label string, w, h float64) {
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" rx="3" fill="%s" stroke="%s"/>`, x, y-h/2, w, h, fill, line)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="11">%s</text>`+"\n", x+w+6, y+4, xmlText(label))
		x += w + 14 + 6.5*float64(len(label))
	}
	capacities := map[string]int{}
	plain := 0
	for _, s := range t.Switches() {
		if s.Programmable {
			capacities[capacityString(s.Capacity)]++
		} else {
			plain++
		}
	}
	if len(capacities) > 0 {
		item(colorProgFill, colorProgLine, "programmable switch, capacity "+valueList(capacities), 26, 16)
	}
	if plain > 0 {
		item(colorSwitchFill, colorSwitchLine, "switch", 26, 16)
	}
	if len(t.Workers()) > 0 {
		item(colorWorkerFill, colorWorkerLine, "worker", 26, 14)
	}
	if len(t.PSs()) > 0 {
		item(colorPSFill, colorPSLine, "parameter server", 26, 14)
	}
	bandwidths := map[string]int{}
	for _, l := range t.Links {
		bandwidths[capacityString(l.Bandwidth)]++
	}
	note := "line width grows with bandwidth"
	if len(bandwidths) > 1 && len(t.Links) <= drawSmallEdge {
		note += "; unlabelled links: " + capacityString(t.commonBandwidth())
	}
	linksLine := fmt.Sprintf("links: %s (%s)", valueList(bandwidths), note)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="11" fill="#444">%s</text>`+"\n", drawMargin, y+24, xmlText(linksLine))
	// Text widths are estimated at 6.5 units a character of the 11-unit font.
	return b.Bytes(), max(x, drawMargin+6.5*float64(len(linksLine))) + drawMargin
}

// widen centres the drawing in at least w units of width.
func (d *drawing) widen(w float64) {
	if d.width >= w {
		return
	}
	dx := (w - d.width) / 2
	for name, p := range d.pos {
		d.pos[name] = point{p.x + dx, p.y}
	}
	d.width = w
}

// arcLift is how far a link between two switches of one row bends upwards.
func arcLift(dx float64) float64 { return 24 + 0.18*math.Abs(dx) }

// DOT writes the topology for Graphviz (dot -Tsvg), with switch rows as ranks
// and, for small topologies, port numbers at the link ends.
func (t *Topology) DOT() []byte {
	d := t.layout()
	var b bytes.Buffer
	fmt.Fprintf(&b, "graph %q {\n", t.Name)
	fmt.Fprintf(&b, "  graph [rankdir=TB, label=%q, labelloc=t, fontname=\"Helvetica\"];\n",
		fmt.Sprintf("%s: %d switches, %d hosts, %d links", t.Name, len(t.Switches()), len(t.Hosts()), len(t.Links)))
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  edge [color=\"" + colorLink + "\", fontname=\"Helvetica\", fontsize=8];\n")
	for _, row := range d.layers {
		b.WriteString("  { rank=same;")
		for _, s := range row {
			fmt.Fprintf(&b, " %q;", s.Name)
		}
		b.WriteString(" }\n")
	}
	for _, n := range t.Nodes {
		fill, line := nodeColors(n)
		fmt.Fprintf(&b, "  %q [fillcolor=%q, color=%q, tooltip=%q];\n", n.Name, fill, line, t.nodeDetails(n))
	}
	common := t.commonBandwidth()
	small := len(t.Links) <= drawSmallEdge
	for _, l := range t.Links {
		var attrs []string
		if small {
			attrs = append(attrs, fmt.Sprintf("taillabel=%q, headlabel=%q", portLabel(t, l.A), portLabel(t, l.B)))
			if l.Bandwidth != common {
				attrs = append(attrs, fmt.Sprintf("label=%q", capacityString(l.Bandwidth)))
			}
		}
		fmt.Fprintf(&b, "  %q -- %q", l.A.Node, l.B.Node)
		if len(attrs) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(attrs, ", "))
		}
		b.WriteString(";\n")
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func portLabel(t *Topology, e Endpoint) string {
	s := t.EndpointString(e)
	return s[strings.LastIndexByte(s, ':')+1:]
}
