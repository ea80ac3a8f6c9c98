package results

import (
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/grid-ina/grid/harness/internal/figure"
)

// drawnFigures lays out every figure of e on a recording canvas and
// returns, per file name, the figure, the strings drawn and the areas
// figure.Draw gave the plot and the legend.
type drawnFigure struct {
	chart
	strings              []*recorder.FillString
	plotArea, legendArea draw.Canvas
}

func drawnFigures(t *testing.T, e *Experiment) map[string]drawnFigure {
	t.Helper()
	traffic := e.traffic()
	figs, err := charts(e, traffic, summarize(e, traffic, nil))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]drawnFigure{}
	for _, f := range figs {
		rec := &recorder.Canvas{}
		c := draw.Canvas{Canvas: rec, Rectangle: vg.Rectangle{Max: vg.Point{X: f.w, Y: f.h}}}
		d := drawnFigure{chart: f}
		d.plotArea, d.legendArea = figure.Draw(f.p, c)
		for _, a := range rec.Actions {
			if s, ok := a.(*recorder.FillString); ok {
				d.strings = append(d.strings, s)
			}
		}
		out[f.name] = d
	}
	return out
}

func (d drawnFigure) drew(text string) *recorder.FillString {
	for _, s := range d.strings {
		if s.String == text {
			return s
		}
	}
	return nil
}

func inside(pt vg.Point, r vg.Rectangle) bool {
	return pt.X >= r.Min.X && pt.X <= r.Max.X && pt.Y >= r.Min.Y && pt.Y <= r.Max.Y
}

// TestFiguresKeepTitlesInsideAndLegendsOffTheData: every title is drawn
// whole, below the image's top edge with room to spare, and every legend
// lies in its own strip, clear of the data area.
func TestFiguresKeepTitlesInsideAndLegendsOffTheData(t *testing.T) {
	legends := map[string][]string{
		"traffic-grid-paths.png": {"first end to second", "second end to first"},
		"traffic-switchml.png":   {"first end to second", "second end to first"},
	}
	figs := drawnFigures(t, experiment())
	if len(figs) < 4 {
		t.Fatalf("only %d figures", len(figs))
	}
	for name, d := range figs {
		title := d.drew(d.p.Title.Text)
		if title == nil {
			t.Errorf("%s: title %q not drawn", name, d.p.Title.Text)
			continue
		}
		ext := d.p.Title.TextStyle.FontExtents()
		width := d.p.Title.TextStyle.Rectangle(d.p.Title.Text).Size().X
		if top := title.Point.Y + ext.Ascent; top > d.h-vg.Points(2) {
			t.Errorf("%s: the title's top is at %.1f pt of a %.1f pt image: clipped or touching the edge", name, top, d.h)
		}
		if title.Point.X < 0 || title.Point.X+width > d.w {
			t.Errorf("%s: the title runs from %.1f to %.1f pt, outside the %.1f pt width", name, title.Point.X, title.Point.X+width, d.w)
		}
		data := d.p.DataCanvas(d.plotArea).Rectangle
		for _, label := range legends[name] {
			s := d.drew(label)
			if s == nil {
				t.Errorf("%s: legend entry %q not drawn", name, label)
				continue
			}
			if !inside(s.Point, d.legendArea.Rectangle) || inside(s.Point, data) {
				t.Errorf("%s: legend entry %q at %v is not in the legend's strip %v, clear of the data %v", name, label, s.Point, d.legendArea.Rectangle, data)
			}
		}
	}
}

// TestCompletionShowsEveryAlgorithmAndNoBarAtTheDeadline: the refused
// plan is named with a word, and the plan whose worker never finished gets
// "failed" instead of a bar as tall as its deadline.
func TestCompletionShowsEveryAlgorithmAndNoBarAtTheDeadline(t *testing.T) {
	e := experiment() // atp refused; switchml's worker h2 never finished
	d, ok := drawnFigures(t, e)["completion.png"]
	if !ok {
		t.Fatal("no completion.png")
	}
	for _, text := range []string{"grid-paths", "atp", "switchml", "refused", "failed"} {
		if d.drew(text) == nil {
			t.Errorf("completion.png does not show %q", text)
		}
	}
	unfinished := e.Algorithms[2].Jobs[0].Completion()
	if unfinished.Finished || d.p.Y.Max >= unfinished.Seconds {
		t.Errorf("the y axis reaches %.2f s, the unfinished switchml job's %.2f s (finished %v): its bar is drawn", d.p.Y.Max, unfinished.Seconds, unfinished.Finished)
	}
}

// TestPSIngressIsACurveOnlyWithEnoughSamples: three samples make bars of
// the mean rate, a dozen a curve.
func TestPSIngressIsACurveOnlyWithEnoughSamples(t *testing.T) {
	e := experiment()
	few := drawnFigures(t, e)["ps-ingress-grid-paths.png"]
	if !strings.Contains(few.p.Title.Text, "mean rate into the PS (3 samples, too few for a curve)") || few.drew("h9") == nil {
		t.Errorf("3 samples: %q", few.p.Title.Text)
	}
	var many []LinkSample
	for k := range minIngressIntervals + 2 {
		n := uint64(k)
		many = append(many, LinkSample{Time: at(1000 + 100*k), Link: 2, AB: Count{Bytes: n * 4000, Packets: n}})
	}
	e.Algorithms[0].Traffic = many
	curve := drawnFigures(t, e)["ps-ingress-grid-paths.png"]
	if curve.p.Title.Text != "grid-paths: traffic into the PS" || !slices.ContainsFunc(curve.strings, func(s *recorder.FillString) bool { return s.String == "seconds" }) {
		t.Errorf("%d samples: %q", len(many), curve.p.Title.Text)
	}
}
