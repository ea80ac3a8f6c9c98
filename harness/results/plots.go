package results

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/grid-ina/grid/harness/internal/figure"
)

// MaxPlottedLinks bounds the traffic bar chart: the busiest links only, so
// a k=8 fat-tree's 384 links do not make bars too thin to see.
const MaxPlottedLinks = 40

type plotFile struct {
	name string
	png  []byte
}

// chart is a plot and the size it is drawn at.
type chart struct {
	name string
	p    *plot.Plot
	w, h vg.Length
}

// drawPlots renders the charts as PNG images in grid's figure layout.
func drawPlots(e *Experiment, traffic []linkTraffic, s *Summary) ([]plotFile, error) {
	figs, err := charts(e, traffic, s)
	if err != nil {
		return nil, err
	}
	out := make([]plotFile, 0, len(figs))
	for _, f := range figs {
		png, err := figure.Encode(f.p, f.w, f.h, "png")
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", f.name, err)
		}
		out = append(out, plotFile{f.name, png})
	}
	return out, nil
}

// charts makes, per algorithm that ran, the traffic per link and the PS
// ingress rate, and across algorithms the sending rates and the job
// completion time. A plot with nothing to show (no traffic, one sample, no
// algorithms) is left out.
func charts(e *Experiment, traffic []linkTraffic, s *Summary) ([]chart, error) {
	var out []chart
	for i, a := range e.Algorithms {
		if p, bars, err := trafficPlot(e, a.Algorithm, traffic[i]); err != nil {
			return nil, err
		} else if p != nil {
			out = append(out, chart{"traffic-" + a.Algorithm + ".png", p, max(6*vg.Inch, vg.Length(bars)*0.3*vg.Inch+1.5*vg.Inch), 5 * vg.Inch})
		}
		if p, err := ingressPlot(e, a, traffic[i]); err != nil {
			return nil, err
		} else if p != nil {
			out = append(out, chart{"ps-ingress-" + a.Algorithm + ".png", p, 7 * vg.Inch, 4 * vg.Inch})
		}
	}
	if p, bars, err := sendingRatePlot(s); err != nil {
		return nil, err
	} else if p != nil {
		out = append(out, chart{"sending-rate.png", p, max(5*vg.Inch, vg.Length(bars)*0.8*vg.Inch+1.5*vg.Inch), 4 * vg.Inch})
	}
	if p, bars, err := completionPlot(e); err != nil {
		return nil, err
	} else if p != nil {
		out = append(out, chart{"completion.png", p, max(5*vg.Inch, vg.Length(bars)*0.8*vg.Inch+1.5*vg.Inch), 4 * vg.Inch})
	}
	return out, nil
}

// byteScale picks a unit for byte counts up to maxBytes.
func byteScale(maxBytes float64) (float64, string) {
	for _, u := range []struct {
		scale float64
		name  string
	}{{1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}} {
		if maxBytes >= u.scale {
			return u.scale, u.name
		}
	}
	return 1, "bytes"
}

// nominalRange keeps the first and last of n bars clear of the axes'
// ends, which cut them in half otherwise.
func nominalRange(p *plot.Plot, n int) {
	p.X.Min, p.X.Max = -0.6, float64(n)-0.4
}

func rotateXLabels(p *plot.Plot) {
	p.X.Tick.Label.Rotation = math.Pi / 2
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = text.YCenter
}

// trafficPlot is a grouped bar chart of the bytes each way on the busiest
// links, busiest first; nil when no link carried anything.
func trafficPlot(e *Experiment, algorithm string, t linkTraffic) (*plot.Plot, int, error) {
	var busy []LinkSample
	for _, s := range t.last {
		if s.Link >= 0 && s.AB.Bytes+s.BA.Bytes > 0 {
			busy = append(busy, s)
		}
	}
	if len(busy) == 0 {
		return nil, 0, nil
	}
	sort.SliceStable(busy, func(i, j int) bool { return busy[i].AB.Bytes+busy[i].BA.Bytes > busy[j].AB.Bytes+busy[j].BA.Bytes })
	title := fmt.Sprintf("%s: bytes per link (%d links carried traffic)", algorithm, len(busy))
	if len(busy) > MaxPlottedLinks {
		title = fmt.Sprintf("%s: bytes per link (busiest %d of %d with traffic)", algorithm, MaxPlottedLinks, len(busy))
		busy = busy[:MaxPlottedLinks]
	}
	peak := 0.0
	for _, s := range busy {
		peak = max(peak, float64(s.AB.Bytes), float64(s.BA.Bytes))
	}
	scale, unit := byteScale(peak)
	ab, ba := make(plotter.Values, len(busy)), make(plotter.Values, len(busy))
	names := make([]string, len(busy))
	for i, s := range busy {
		ab[i], ba[i] = float64(s.AB.Bytes)/scale, float64(s.BA.Bytes)/scale
		names[i] = e.Links[s.Link].A + " - " + e.Links[s.Link].B
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = unit
	width := vg.Points(8)
	abBars, err := plotter.NewBarChart(ab, width)
	if err != nil {
		return nil, 0, fmt.Errorf("plot traffic-%s: %w", algorithm, err)
	}
	baBars, err := plotter.NewBarChart(ba, width)
	if err != nil {
		return nil, 0, fmt.Errorf("plot traffic-%s: %w", algorithm, err)
	}
	abBars.Color, abBars.Offset = plotutil.Color(0), -width/2
	baBars.Color, baBars.Offset = plotutil.Color(1), width/2
	abBars.LineStyle.Width, baBars.LineStyle.Width = 0, 0
	p.Add(abBars, baBars, plotter.NewGrid())
	p.Legend.Add("first end to second", abBars)
	p.Legend.Add("second end to first", baBars)
	p.NominalX(names...)
	nominalRange(p, len(busy))
	p.Y.Min, p.Y.Max = 0, peak/scale*1.05
	rotateXLabels(p)
	return p, len(busy), nil
}

// minIngressIntervals is how many monitor intervals a PS ingress curve
// needs: a job of a few intervals gives a curve whose shape is the
// sampling's (a 43 ms job sampled every 100 ms is one step), so with fewer
// the plot shows each PS's mean rate as a bar instead.
const minIngressIntervals = 10

// ingressPlot draws, for each job's PS host, the rate of bytes arriving
// over its links between consecutive samples, or with fewer than
// minIngressIntervals intervals its mean rate over the samples as a bar;
// nil with fewer than two samples.
func ingressPlot(e *Experiment, a AlgorithmRun, t linkTraffic) (*plot.Plot, error) {
	if len(t.times) < 2 || len(a.Jobs) == 0 {
		return nil, nil
	}
	var hosts []string
	for _, j := range a.Jobs {
		if !slices.Contains(hosts, j.PS.Host) {
			hosts = append(hosts, j.PS.Host)
		}
	}
	// rate is the host's ingress between its samples i and k, Mbit/s.
	rate := func(h *hostSeries, i, k int) float64 {
		if dt := h.times[k].Sub(h.times[i]).Seconds(); dt > 0 && h.in[k].Bytes >= h.in[i].Bytes {
			return float64(h.in[k].Bytes-h.in[i].Bytes) * 8 / dt / 1e6
		}
		return 0
	}
	series := func(host string) *hostSeries {
		if h := t.hosts[host]; h != nil && len(h.times) > 0 {
			return h
		}
		return &hostSeries{times: t.times[:1], in: make([]Count, 1)}
	}
	p := plot.New()
	p.Y.Label.Text = "Mbit/s"
	p.Add(plotter.NewGrid())
	if intervals := len(t.times) - 1; intervals < minIngressIntervals {
		p.Title.Text = fmt.Sprintf("%s: mean rate into the PS (%d samples, too few for a curve)", a.Algorithm, len(t.times))
		means := make(plotter.Values, len(hosts))
		peak := 0.0
		for i, host := range hosts {
			h := series(host)
			means[i] = rate(h, 0, len(h.times)-1)
			peak = max(peak, means[i])
		}
		bars, err := plotter.NewBarChart(means, vg.Points(30))
		if err != nil {
			return nil, fmt.Errorf("plot ps-ingress-%s: %w", a.Algorithm, err)
		}
		bars.Color = plotutil.Color(2)
		bars.LineStyle.Width = 0
		p.Add(bars)
		p.NominalX(hosts...)
		nominalRange(p, len(hosts))
		p.Y.Min, p.Y.Max = 0, max(peak*1.05, 1e-3)
		return p, nil
	}
	p.Title.Text = a.Algorithm + ": traffic into the PS"
	p.X.Label.Text = "seconds"
	for i, host := range hosts {
		h := series(host)
		xys := make(plotter.XYs, 0, len(h.times))
		for k := 1; k < len(h.times); k++ {
			xys = append(xys, plotter.XY{X: h.times[k].Sub(t.start).Seconds(), Y: rate(h, k-1, k)})
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plot ps-ingress-%s: %w", a.Algorithm, err)
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(host, line)
	}
	p.X.Min, p.Y.Min = 0, 0
	return p, nil
}

// completionPlot is one place per algorithm: a bar of its mean job
// completion time, in the failure colour when a sum was wrong (a fast
// wrong answer is no result); no bar but a word where nothing comparable
// ran: "refused" for a plan that could not be deployed, "failed" for one
// whose run stopped short or whose workers did not all finish (their time
// would be the deadline's, not a completion). nil with no algorithms.
func completionPlot(e *Experiment) (*plot.Plot, int, error) {
	var names []string
	var exact, wrong plotter.Values
	var marks plotter.XYLabels
	peak, anyWrong := 0.0, false
	for _, a := range e.Algorithms {
		mark := ""
		mean, verified, finished := 0.0, true, len(a.Jobs) > 0
		for _, j := range a.Jobs {
			c := j.Completion()
			mean += c.Seconds / float64(len(a.Jobs))
			verified = verified && c.Verified
			finished = finished && c.Finished
		}
		switch {
		case a.Refused != "":
			mark = "refused"
		case a.Failed != "" || !finished:
			mark = "failed"
		}
		if mark != "" {
			marks.XYs = append(marks.XYs, plotter.XY{X: float64(len(names)), Y: 0})
			marks.Labels = append(marks.Labels, mark)
			mean = 0
		}
		names = append(names, a.Algorithm)
		peak = max(peak, mean)
		if verified || mark != "" {
			exact, wrong = append(exact, mean), append(wrong, 0)
		} else {
			exact, wrong = append(exact, 0), append(wrong, mean)
			anyWrong = true
		}
	}
	if len(names) == 0 {
		return nil, 0, nil
	}
	p := plot.New()
	p.Title.Text = "mean job completion time per algorithm"
	p.Y.Label.Text = "seconds"
	p.Add(plotter.NewGrid())
	series := []struct {
		values plotter.Values
		color  int
		label  string
	}{{exact, 2, "every sum exact"}, {wrong, 0, "wrong sums"}}
	for _, sr := range series {
		if sr.label != series[0].label && !anyWrong {
			continue
		}
		bars, err := plotter.NewBarChart(sr.values, vg.Points(30))
		if err != nil {
			return nil, 0, fmt.Errorf("plot completion: %w", err)
		}
		bars.Color = plotutil.Color(sr.color)
		bars.LineStyle.Width = 0
		p.Add(bars)
		if anyWrong {
			p.Legend.Add(sr.label, bars)
		}
	}
	if len(marks.Labels) > 0 {
		labels, err := plotter.NewLabels(marks)
		if err != nil {
			return nil, 0, fmt.Errorf("plot completion: %w", err)
		}
		for i := range labels.TextStyle {
			labels.TextStyle[i].XAlign, labels.TextStyle[i].YAlign = draw.XCenter, draw.YBottom
			labels.TextStyle[i].Color = plotutil.Color(0)
		}
		p.Add(labels)
	}
	p.NominalX(names...)
	nominalRange(p, len(names))
	p.Y.Min, p.Y.Max = 0, max(peak*1.05, 1)
	return p, len(names), nil
}

// sendingRatePlot is the paper's Fig. 5: one bar per algorithm, its
// slowest worker's measured sending rate scaled back to the topology's
// units, with the plan's predicted lambda marked on it; nil when no
// algorithm's rate was measured.
func sendingRatePlot(s *Summary) (*plot.Plot, int, error) {
	var names []string
	var measured plotter.Values
	var predicted plotter.XYs
	peak := 0.0
	for _, a := range s.Algorithms {
		f := a.Fidelity
		if f == nil || f.Ratio == nil {
			continue
		}
		predicted = append(predicted, plotter.XY{X: float64(len(names)), Y: f.PredictedGbps})
		names = append(names, a.Algorithm)
		measured = append(measured, f.MeasuredGbps)
		peak = max(peak, f.MeasuredGbps, f.PredictedGbps)
	}
	if len(names) == 0 {
		return nil, 0, nil
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("slowest worker's sending rate (emulated at scale %g)", s.Scale)
	p.Y.Label.Text = "Gbps (topology units)"
	p.Add(plotter.NewGrid())
	bars, err := plotter.NewBarChart(measured, vg.Points(30))
	if err != nil {
		return nil, 0, fmt.Errorf("plot sending-rate: %w", err)
	}
	bars.Color = plotutil.Color(2)
	bars.LineStyle.Width = 0
	marks, err := plotter.NewScatter(predicted)
	if err != nil {
		return nil, 0, fmt.Errorf("plot sending-rate: %w", err)
	}
	marks.GlyphStyle.Shape = draw.BoxGlyph{}
	marks.GlyphStyle.Radius = vg.Points(5)
	marks.GlyphStyle.Color = plotutil.Color(0)
	p.Add(bars, marks)
	p.Legend.Add("measured (slowest worker)", bars)
	p.Legend.Add("predicted lambda", marks)
	p.NominalX(names...)
	nominalRange(p, len(names))
	p.Y.Min, p.Y.Max = 0, peak*1.1
	return p, len(names), nil
}
