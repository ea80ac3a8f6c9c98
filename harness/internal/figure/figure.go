// Package figure lays out and writes gonum plots the way every figure of
// grid is drawn: a margin above the title, whose glyphs gonum puts right at
// the canvas's top edge (and past it by their descent, so they are cut),
// and the legend in a strip of its own below the axes, so that it never
// covers data or grid, however high the data reach.
package figure

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Margins: above the title, and around the legend's strip.
const (
	TitleMargin  = vg.Length(6)
	LegendMargin = vg.Length(6)
)

// Draw draws p onto c in grid's layout and returns where the plot and the
// legend went (the legend's area is empty when p has no legend entries).
func Draw(p *plot.Plot, c draw.Canvas) (plotArea, legendArea draw.Canvas) {
	legend := p.Legend
	p.Legend = plot.NewLegend()
	defer func() { p.Legend = legend }()
	var strip vg.Length
	if r := legend.Rectangle(c); r.Size().Y > 0 {
		strip = r.Size().Y + 2*LegendMargin
	}
	top := TitleMargin + p.Title.TextStyle.FontExtents().Descent
	plotArea = draw.Crop(c, 0, 0, strip, -top)
	legendArea = draw.Crop(c, LegendMargin, 0, LegendMargin, strip-LegendMargin-c.Size().Y)
	p.Draw(plotArea)
	legend.Top, legend.Left = true, true
	legend.Draw(legendArea)
	return plotArea, legendArea
}

// Encode draws p at w by h in a format gonum writes ("png", "svg", ...).
func Encode(p *plot.Plot, w, h vg.Length, format string) ([]byte, error) {
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return nil, err
	}
	Draw(p, draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("encode %s: %w", format, err)
	}
	return b.Bytes(), nil
}

// Save writes p at w by h to path, in the format its extension names.
func Save(p *plot.Plot, w, h vg.Length, path string) error {
	data, err := Encode(p, w, h, strings.TrimPrefix(filepath.Ext(path), "."))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, data, 0o644)
}
