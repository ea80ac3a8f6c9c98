package main

// The emulation scale of grid run and grid reproduce: one factor for every
// rate of the model, given or chosen from this machine's calibration.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/runner"
	"github.com/grid-ina/grid/harness/solver"
)

// scaleAuto is the --scale value that picks the factor from the calibration.
const scaleAuto = "auto"

func init() {
	register(&cli.Command{
		Name:  "calibrate",
		Usage: "measure what this machine's emulated network forwards, which --scale auto scales experiments to",
		Description: "calibrate runs the whole stack unshaped on a one-switch topology (four workers and a PS\n" +
			"sending through a grid switch, Geryon's plan, every sum checked) and counts the frames over\n" +
			"every link per second: the budget an experiment's rates must stay well inside, so they are\n" +
			"bound by the emulated links and switch capacities, not by the CPU. The figure is kept in\n" +
			runner.CalibrationFile + " (per machine, trusted for a week); grid run --scale auto uses it,\n" +
			"measuring it first when it is missing. Run it again on a quiet machine for a truer figure.\n" +
			"Needs root.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "program", Value: "p4/aggregator/aggregator.p4", Usage: "the aggregator's P4 `FILE`"},
		},
		Action: func(c *cli.Context) error {
			prog, err := aggregator.Compile(pathFlag(c, "program"), aggregator.Build{})
			if err != nil {
				return err
			}
			cal, err := calibrate(c.Context, prog)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "this machine's emulated network forwards %.0f frame-hops/s (%d cores; other processes used %.2f cores meanwhile); kept in %s\n",
				cal.FrameHopsPerSecond, cal.Cores, cal.OtherCores, runner.CalibrationFile)
			return nil
		},
	})
}

// calibrate measures the machine and keeps the figure.
func calibrate(ctx context.Context, prog *p4c.Result) (*runner.Calibration, error) {
	cal, err := runner.Calibrate(ctx, runner.Config{Program: prog, Values: 32})
	if err != nil {
		return nil, err
	}
	if err := cal.Save(runner.CalibrationFile); err != nil {
		return nil, err
	}
	return cal, nil
}

// scaleFlag is the factor --scale gives, or 0 for "auto".
func scaleFlag(c *cli.Context) (float64, error) {
	flag := c.String("scale")
	if flag == scaleAuto {
		return 0, nil
	}
	f, err := strconv.ParseFloat(flag, 64)
	if err != nil || !(f > 0) || f > 1 {
		return 0, fmt.Errorf("--scale %q: want a factor in (0, 1] or %q", flag, scaleAuto)
	}
	return f, nil
}

// emulationScale is --scale: a factor in (0, 1], or "auto" (1 with
// --link-rate, which sets the rates itself).
func emulationScale(ctx context.Context, c *cli.Context, plans []*solver.Plan, prog *p4c.Result, values int) (float64, error) {
	if f, err := scaleFlag(c); err != nil || f > 0 {
		return f, err
	}
	if c.String("link-rate") != "" {
		return 1, nil
	}
	cal, fresh, err := runner.LoadCalibration(runner.CalibrationFile)
	if err != nil {
		return 0, err
	}
	if !fresh {
		slog.Info("no calibration for this machine yet: measuring it (grid calibrate)", "file", runner.CalibrationFile)
		if cal, err = calibrate(ctx, prog); err != nil {
			return 0, err
		}
	}
	scale, err := runner.ChooseScale(cal, plans, values)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(c.App.Writer, "emulation scale %g: this machine forwards %.0f frame-hops/s (%s); the busiest plan needs %.3g at the topology's rates\n",
		scale, cal.FrameHopsPerSecond, cal.Measured.Format("2006-01-02"), busiestHops(plans, values))
	return scale, nil
}

func busiestHops(plans []*solver.Plan, values int) float64 {
	busiest := 0.0
	for _, p := range plans {
		busiest = max(busiest, runner.FrameHops(p, values))
	}
	return busiest
}

// printPlanTimes says how long each plan's slowest worker sends at the
// plan's lambda emulated at scale: the estimate printed before solving
// counts the CPU's forwarding, which a scaled-down run does not wait for.
func printPlanTimes(w io.Writer, plans []*solver.Plan, fragments, values int, scale float64) {
	var parts []string
	total := time.Duration(0)
	for _, p := range plans {
		if d := runner.PlanTime(p, fragments, values, scale); d > 0 {
			parts = append(parts, fmt.Sprintf("%s %v", p.Algorithm, d.Round(time.Second)))
			total += d
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "at the emulated rates the slowest workers send for at least: %s (%v in all)\n", strings.Join(parts, ", "), total.Round(time.Second))
	}
}
