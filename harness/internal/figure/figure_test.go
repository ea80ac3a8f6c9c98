package figure

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// crowded is a plot whose data fill the whole height and whose legend has
// six entries: drawn inside the data area, the legend would cover lines.
func crowded(t *testing.T) *plot.Plot {
	t.Helper()
	p := plot.New()
	p.Title.Text = "a title with tall letters: Jg|"
	for i := range 6 {
		line, err := plotter.NewLine(plotter.XYs{{X: 0, Y: float64(i)}, {X: 1, Y: 10}})
		if err != nil {
			t.Fatal(err)
		}
		p.Add(line)
		p.Legend.Add(strings.Repeat("algorithm ", 2)+string(rune('a'+i)), line)
	}
	return p
}

func TestDrawKeepsTheTitleInsideAndTheLegendOffTheData(t *testing.T) {
	p := crowded(t)
	w, h := 6*vg.Inch, 4*vg.Inch
	rec := &recorder.Canvas{}
	plotArea, legendArea := Draw(p, draw.Canvas{Canvas: rec, Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: h}}})
	data := p.DataCanvas(plotArea).Rectangle
	legends := 0
	for _, a := range rec.Actions {
		s, ok := a.(*recorder.FillString)
		if !ok {
			continue
		}
		switch {
		case s.String == p.Title.Text:
			if top := s.Point.Y + p.Title.TextStyle.FontExtents().Ascent; top > h-vg.Points(2) {
				t.Errorf("the title's top is at %.1f pt of %.1f: cut or touching the edge", top, h)
			}
		case strings.HasPrefix(s.String, "algorithm"):
			legends++
			r := legendArea.Rectangle
			if s.Point.Y < r.Min.Y || s.Point.Y > r.Max.Y || s.Point.Y >= data.Min.Y {
				t.Errorf("legend entry %q at %v: not in the strip %v below the data %v", s.String, s.Point, r, data)
			}
		}
	}
	if legends != 6 {
		t.Errorf("%d legend entries drawn, want 6", legends)
	}
}

func TestSaveWritesTheFormatItsExtensionNames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"f.png", "f.svg"} {
		path := filepath.Join(dir, name)
		if err := Save(crowded(t), 5*vg.Inch, 3*vg.Inch, path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(name) {
		case ".png":
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil || img.Bounds().Dx() < 400 {
				t.Errorf("%s: %v, %v", name, err, img)
			}
		case ".svg":
			if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("algorithm")) {
				t.Errorf("%s is not an SVG with the legend", name)
			}
		}
	}
	if err := Save(crowded(t), vg.Inch, vg.Inch, filepath.Join(dir, "f.bogus")); err == nil {
		t.Error("an unknown format was written")
	}
}
