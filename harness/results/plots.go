package results

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// MaxPlottedLinks bounds the traffic bar chart: the busiest links only, so
// a k=8 fat-tree's 384 links do not make bars too thin to see.
const MaxPlottedLinks = 40

type plotFile struct {
	name string
	png  []byte
}

// drawPlots draws, per algorithm that ran, the traffic per link and the PS
// ingress rate, and across algorithms the job completion time. A plot with
// nothing to show (no traffic, one sample, no jobs) is left out.
func drawPlots(e *Experiment, traffic []linkTraffic) ([]plotFile, error) {
	var out []plotFile
	add := func(name string, p *plot.Plot, w, h vg.Length) error {
		wt, err := p.WriterTo(w, h, "png")
		if err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		var b bytes.Buffer
		if _, err := wt.WriteTo(&b); err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		out = append(out, plotFile{name, b.Bytes()})
		return nil
	}
	for i, a := range e.Algorithms {
		if p, bars, err := trafficPlot(e, a.Algorithm, traffic[i]); err != nil {
			return nil, err
		} else if p != nil {
			w := max(6*vg.Inch, vg.Length(bars)*0.3*vg.Inch+1.5*vg.Inch)
			if err := add("traffic-"+a.Algorithm+".png", p, w, 5*vg.Inch); err != nil {
				return nil, err
			}
		}
		if p, err := ingressPlot(e, a, traffic[i]); err != nil {
			return nil, err
		} else if p != nil {
			if err := add("ps-ingress-"+a.Algorithm+".png", p, 7*vg.Inch, 4*vg.Inch); err != nil {
				return nil, err
			}
		}
	}
	if p, bars, err := sendingRatePlot(e, traffic); err != nil {
		return nil, err
	} else if p != nil {
		if err := add("sending-rate.png", p, max(5*vg.Inch, vg.Length(bars)*0.8*vg.Inch+1.5*vg.Inch), 4*vg.Inch); err != nil {
			return nil, err
		}
	}
	if p, bars, err := completionPlot(e); err != nil {
		return nil, err
	} else if p != nil {
		if err := add("completion.png", p, max(5*vg.Inch, vg.Length(bars)*0.8*vg.Inch+1.5*vg.Inch), 4*vg.Inch); err != nil {
			return nil, err
		}
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
	p.Legend.Top = true
	p.NominalX(names...)
	nominalRange(p, len(busy))
	// Head room for the legend above the highest bar.
	p.Y.Min, p.Y.Max = 0, peak/scale*1.3
	rotateXLabels(p)
	return p, len(busy), nil
}

// ingressPlot draws, for each job's PS host, the rate of bytes arriving
// over its links between consecutive samples; nil with fewer than two samples.
func ingressPlot(e *Experiment, a AlgorithmRun, t linkTraffic) (*plot.Plot, error) {
	byTime := map[time.Time][]LinkSample{}
	var times []time.Time
	for _, s := range t.samples {
		if _, ok := byTime[s.Time]; !ok {
			times = append(times, s.Time)
		}
		byTime[s.Time] = append(byTime[s.Time], s)
	}
	if len(times) < 2 || len(a.Jobs) == 0 {
		return nil, nil
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	p := plot.New()
	p.Title.Text = a.Algorithm + ": traffic into the PS"
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "Mbit/s"
	p.Add(plotter.NewGrid())
	seen := map[string]bool{}
	peak := 0.0
	for _, j := range a.Jobs {
		host := j.PS.Host
		if seen[host] {
			continue
		}
		seen[host] = true
		xys := make(plotter.XYs, 0, len(times)-1)
		prev, prevTime := ingress(e.Links, byTime[times[0]], host), times[0]
		for _, tm := range times[1:] {
			cur := ingress(e.Links, byTime[tm], host)
			rate := 0.0
			if dt := tm.Sub(prevTime).Seconds(); dt > 0 && cur >= prev {
				rate = float64(cur-prev) * 8 / dt / 1e6
			}
			xys = append(xys, plotter.XY{X: tm.Sub(t.start).Seconds(), Y: rate})
			peak = max(peak, rate)
			prev, prevTime = cur, tm
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plot ps-ingress-%s: %w", a.Algorithm, err)
		}
		line.Color = plotutil.Color(len(seen) - 1)
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(host, line)
	}
	p.Legend.Top = true
	p.X.Min, p.Y.Min = 0, 0
	if peak > 0 {
		p.Y.Max = peak * 1.25 // head room for the legend
	}
	return p, nil
}

// completionPlot is one bar per algorithm that ran jobs: its mean job
// completion time, in another colour when a job did not verify (a fast
// wrong answer is no result); nil when no algorithm ran jobs.
func completionPlot(e *Experiment) (*plot.Plot, int, error) {
	var names []string
	var exact, wrong plotter.Values
	peak, anyWrong := 0.0, false
	for _, a := range e.Algorithms {
		if a.Refused != "" || len(a.Jobs) == 0 {
			continue
		}
		mean, verified := 0.0, true
		for _, j := range a.Jobs {
			c := j.Completion()
			mean += c.Seconds / float64(len(a.Jobs))
			verified = verified && c.Verified
		}
		names = append(names, a.Algorithm)
		peak = max(peak, mean)
		if verified {
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
	}{{exact, 2, "every sum exact"}, {wrong, 0, "wrong or missing sums"}}
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
	p.Legend.Top = true
	p.NominalX(names...)
	nominalRange(p, len(names))
	p.Y.Min, p.Y.Max = 0, peak*1.25 // head room for the legend
	return p, len(names), nil
}

// sendingRatePlot is the paper's Fig. 5: one bar per algorithm, its
// slowest worker's measured sending rate scaled back to the topology's
// units, with the plan's predicted lambda marked on it; nil when no
// algorithm's rate was measured.
func sendingRatePlot(e *Experiment, traffic []linkTraffic) (*plot.Plot, int, error) {
	s := summarize(e, traffic, nil)
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
	p.Legend.Top = true
	p.NominalX(names...)
	nominalRange(p, len(names))
	p.Y.Min, p.Y.Max = 0, peak*1.35 // head room for the legend
	return p, len(names), nil
}
