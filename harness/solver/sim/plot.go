package sim

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/grid-ina/grid/harness/internal/figure"
)

// Metric is one plotted quantity.
type Metric struct {
	File, Title, YLabel string
	value               func(Row) float64
}

// Metrics are the paper's three simulation figures per scenario.
var Metrics = []Metric{
	{"worker-rate", "slowest worker's sending rate", "Gbps", func(r Row) float64 { return r.LambdaGbps }},
	{"switch-agg", "switch aggregation rate (sum over switches)", "Gbps", func(r Row) float64 { return r.SwitchAggGbps }},
	{"ps-load", "PS load", "Gbps", func(r Row) float64 { return r.PSLoadGbps }},
}

var palette = []color.Color{
	color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
}

// Plot writes <scenario>-<metric>.png and .svg into dir: one line per
// algorithm, the mean over runs against the number of workers; model names
// the network model in the titles.
func Plot(dir string, rows []Row, algorithms []string, model string) ([]string, error) {
	var scenarios []string
	for _, r := range rows {
		if !slices.Contains(scenarios, r.Scenario) {
			scenarios = append(scenarios, r.Scenario)
		}
	}
	var files []string
	for _, sc := range scenarios {
		for _, m := range Metrics {
			p := plot.New()
			p.Title.Text = fmt.Sprintf("%s: %s (%s)", sc, m.Title, model)
			p.X.Label.Text = "workers"
			p.Y.Label.Text = m.YLabel
			p.Y.Min = 0
			p.Add(plotter.NewGrid())
			p.X.Tick.Marker = workerTicks(rows, sc)
			top := 0.0
			for i, algo := range algorithms {
				pts := meanByWorkers(rows, sc, algo, m.value)
				if len(pts) == 0 {
					continue
				}
				for _, pt := range pts {
					top = max(top, pt.Y)
				}
				line, points, err := plotter.NewLinePoints(pts)
				if err != nil {
					return nil, fmt.Errorf("plot %s %s: %w", sc, m.File, err)
				}
				c := palette[i%len(palette)]
				line.Color, points.Color = c, c
				line.Width = vg.Points(1.5)
				points.Shape = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}[i%6]
				p.Add(line, points)
				p.Legend.Add(legendName(rows, sc, algo), line, points)
			}
			p.Y.Max = 1.05 * max(top, 1e-9)
			for _, ext := range []string{"png", "svg"} {
				// grid's layout: the legend below the axes, off the lines.
				name := filepath.Join(dir, fmt.Sprintf("%s-%s.%s", sc, m.File, ext))
				if err := figure.Save(p, 7*vg.Inch, 5*vg.Inch, name); err != nil {
					return nil, fmt.Errorf("plot %s: %w", name, err)
				}
				files = append(files, name)
			}
		}
	}
	return files, nil
}

func meanByWorkers(rows []Row, scenario, algo string, value func(Row) float64) plotter.XYs {
	sum := map[int]float64{}
	cnt := map[int]int{}
	var xs []int
	for _, r := range rows {
		if r.Scenario != scenario || r.Algorithm != algo {
			continue
		}
		if cnt[r.Workers] == 0 {
			xs = append(xs, r.Workers)
		}
		sum[r.Workers] += value(r)
		cnt[r.Workers]++
	}
	slices.Sort(xs)
	var pts plotter.XYs
	for _, x := range xs {
		pts = append(pts, plotter.XY{X: float64(x), Y: sum[x] / float64(cnt[x])})
	}
	return pts
}

// WriteResults writes the CSV and the plots into a temporary directory next
// to dir and renames it into place, replacing an older dir, so readers never
// see half-written results.
func WriteResults(dir string, rows []Row, algorithms []string, model string) ([]string, error) {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	defer os.RemoveAll(tmp)
	f, err := os.Create(filepath.Join(tmp, "simulation.csv"))
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	if err := WriteCSV(f, rows); err != nil {
		f.Close()
		return nil, fmt.Errorf("results: write csv: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("results: write csv: %w", err)
	}
	files, err := Plot(tmp, rows, algorithms, model)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	old := ""
	if _, err := os.Stat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return nil, fmt.Errorf("results: move old %s aside: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	out := []string{filepath.Join(dir, "simulation.csv")}
	for _, f := range files {
		out = append(out, filepath.Join(dir, filepath.Base(f)))
	}
	return out, nil
}

// workerTicks labels the x axis with the simulated worker counts.
func workerTicks(rows []Row, scenario string) plot.Ticker {
	var ticks []plot.Tick
	seen := map[int]bool{}
	for _, r := range rows {
		if r.Scenario == scenario && !seen[r.Workers] {
			seen[r.Workers] = true
			ticks = append(ticks, plot.Tick{Value: float64(r.Workers), Label: fmt.Sprint(r.Workers)})
		}
	}
	return plot.ConstantTicks(ticks)
}

// legendName is the algorithm with the model it optimised, e.g.
// "grid-exact (paper)", which tells readers why an exact method can trail.
func legendName(rows []Row, scenario, algo string) string {
	models := map[string]bool{}
	for _, r := range rows {
		if r.Scenario == scenario && r.Algorithm == algo {
			models[r.Model] = true
		}
	}
	var ms []string
	for m := range models {
		ms = append(ms, m)
	}
	slices.Sort(ms)
	return fmt.Sprintf("%s (%s)", algo, strings.Join(ms, "/"))
}
