package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// CalibrationFile is where Calibrate's figure is kept for this machine.
const CalibrationFile = "/var/cache/grid/calibration.json"

// calibrationMaxAge is how long a kept calibration is trusted.
const calibrationMaxAge = 7 * 24 * time.Hour

// Headroom is the share of the calibrated forwarding budget an experiment
// is scaled to use at most: the machine is shared, the rates must be bound
// by the emulated links and meters, never by the CPU, with a safety margin
// for other load and for bursts. Measured here with other work using 1.5 to
// 1.9 of 2 cores: at an eighth, Fig. 1 (scale 1e-4) and the testbed (5e-6)
// hold fidelity 0.95-1.02 for every algorithm; at a quarter (2e-4) ATP's
// capacity-bound plan fell to 0.79.
const Headroom = 0.125

// calibrationFragments is each calibration worker's gradient: long enough
// for a steady rate, short enough to take a few seconds.
const calibrationFragments = 2048

// Calibration is what this machine's emulated network forwards, measured by
// running the whole stack unshaped: fragment-hops per second, frames over
// one link (gradients and results together).
type Calibration struct {
	Host  string `json:"host"`
	Cores int    `json:"cores"`
	// FrameHopsPerSecond is the figure: frames carried over links per
	// second, every link counted.
	FrameHopsPerSecond float64 `json:"frame_hops_per_second"`
	// OtherCores is what other processes used while it was measured:
	// a calibration taken under load is conservative.
	OtherCores float64   `json:"other_cores"`
	Measured   time.Time `json:"measured"`
	Seconds    float64   `json:"seconds"`
}

// calibrationTopology is one programmable switch with four workers and a
// PS, unshaped: every fragment and result crosses the switch, none is
// aggregated (Geryon's plan), so the figure is the forwarding itself.
const calibrationTopology = `name: calibration
description: "grid's calibration: what this machine's emulated network forwards, unshaped"
nodes:
  - {name: s1, kind: switch, id: 1, programmable: true, capacity: 1Tbps}
  - {name: w1, kind: host, id: 1, role: worker}
  - {name: w2, kind: host, id: 2, role: worker}
  - {name: w3, kind: host, id: 3, role: worker}
  - {name: w4, kind: host, id: 4, role: worker}
  - {name: ps, kind: host, id: 5, role: ps, ingress: 1Tbps}
links:
  - {endpoints: ["s1:p1", "w1:eth0"]}
  - {endpoints: ["s1:p2", "w2:eth0"]}
  - {endpoints: ["s1:p3", "w3:eth0"]}
  - {endpoints: ["s1:p4", "w4:eth0"]}
  - {endpoints: ["s1:p5", "ps:eth0"]}
`

// Calibrate measures what this machine's emulated network forwards: it runs
// Geryon's plan on a one-switch topology, unshaped, with cfg's program and
// binary (cfg's topology and plans are ignored), and counts the frames
// over every link per second of the jobs' run.
func Calibrate(ctx context.Context, cfg Config) (*Calibration, error) {
	t, err := topo.Parse([]byte(calibrationTopology), "calibration")
	if err != nil {
		return nil, err
	}
	jobs, err := workload.Default(t)
	if err != nil {
		return nil, err
	}
	in, err := solver.NewInstance(t, jobs)
	if err != nil {
		return nil, err
	}
	p, err := solver.Solve(ctx, in, solver.AlgoGeryon, solver.Options{Seed: 1, LP: lp.Auto})
	if err != nil {
		return nil, fmt.Errorf("calibration plan: %w", err)
	}
	cfg.Topology, cfg.Plans, cfg.Scale, cfg.Keep = t, []*solver.Plan{p}, 1, false
	cfg.Fragments = calibrationFragments
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("cal%d", os.Getpid())
	}
	// Unshaped queues are short in time; a timeout that does not fire on
	// a CPU's hiccup keeps resends out of the figure.
	cfg.Timeout = time.Second
	slog.Info("calibrating: what this machine's emulated network forwards", "topology", t.Name, "fragments", cfg.Fragments)
	exp, err := Run(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	if err := exp.Failure(); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	o := exp.Outcomes[0]
	secs := o.Ended.Sub(o.Began).Seconds()
	var frames uint64
	for _, l := range o.Snapshot.Links {
		frames += l.AB.Sent.Packets + l.BA.Sent.Packets
	}
	if secs <= 0 || frames == 0 {
		return nil, errors.New("calibration: the jobs carried no frames")
	}
	c := &Calibration{FrameHopsPerSecond: float64(frames) / secs,
		OtherCores: o.CPU.OthersCores(), Measured: time.Now().UTC(), Seconds: secs}
	c.Host, c.Cores = hostAndCores()
	slog.Info("calibrated", "frame_hops_per_second", math.Round(c.FrameHopsPerSecond), "other_cores", c.OtherCores)
	return c, nil
}

// LoadCalibration reads the kept calibration at path; ok is false when
// there is none, or it is for another machine or older than a week.
func LoadCalibration(path string) (c *Calibration, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("calibration: %w", err)
	}
	c = &Calibration{}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, false, fmt.Errorf("calibration %s: %w", path, err)
	}
	host, cores := hostAndCores()
	fresh := c.Host == host && c.Cores == cores && time.Since(c.Measured) < calibrationMaxAge && c.FrameHopsPerSecond > 0
	return c, fresh, nil
}

// hostAndCores names this machine for its calibration.
func hostAndCores() (string, int) {
	host, _ := os.Hostname()
	return host, runtime.NumCPU()
}

// Save keeps the calibration at path.
func (c *Calibration) Save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("calibration: %w", err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + fmt.Sprintf(".%d", os.Getpid())
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("calibration: %w", err)
	}
	return os.Rename(tmp, path)
}

// FrameHops is the frames per second a plan puts on the links at the
// topology's own rates: its predicted load on every link direction
// (gradients, partial sums and results) in frames of values int32s.
func FrameHops(p *solver.Plan, values int) float64 {
	frameBits := float64(8 * (gradproto.FrameOverhead + gradproto.HeaderLen + 4*values))
	var gbps float64
	for _, l := range p.Links {
		gbps += l.LoadGbps
	}
	return gbps * 1e9 / frameBits
}

// ChooseScale is the emulation scale for plans on this machine: the largest
// factor from the 1-2-5 series (at most 1) at which the busiest plan's
// frame-hops stay within Headroom of the calibrated budget.
func ChooseScale(c *Calibration, plans []*solver.Plan, values int) (float64, error) {
	if c == nil || c.FrameHopsPerSecond <= 0 {
		return 0, errors.New("no calibration to scale by")
	}
	busiest := 0.0
	for _, p := range plans {
		busiest = max(busiest, FrameHops(p, values))
	}
	if busiest <= 0 {
		return 1, nil
	}
	return seriesFloor(min(1, Headroom*c.FrameHopsPerSecond/busiest)), nil
}

// seriesFloor is the largest of 1, 2, 5 times a power of ten not above x,
// written exactly (5e-06, not 4.9999999999999996e-06).
func seriesFloor(x float64) float64 {
	exp := int(math.Floor(math.Log10(x)))
	for _, m := range []int{5, 2, 1} {
		v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, exp), 64)
		if v <= x*(1+1e-9) {
			return v
		}
	}
	v, _ := strconv.ParseFloat(fmt.Sprintf("1e%d", exp), 64)
	return v
}
