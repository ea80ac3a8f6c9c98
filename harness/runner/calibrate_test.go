package runner

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/controller/controllertest"
	"github.com/grid-ina/grid/harness/p4test/targettest"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
)

func TestScaleKeepsTheBusiestPlanWithinTheHeadroomOfTheCalibration(t *testing.T) {
	t1 := topo.PaperFig1()
	plans := []*solver.Plan{controllertest.Solve(t, t1, solver.AlgoGRIDPaths), controllertest.Solve(t, t1, solver.AlgoGeryon)}
	cal := &Calibration{FrameHopsPerSecond: 40000}
	scale, err := ChooseScale(cal, plans, 32)
	if err != nil {
		t.Fatal(err)
	}
	busiest := max(FrameHops(plans[0], 32), FrameHops(plans[1], 32))
	if used := busiest * scale / cal.FrameHopsPerSecond; used > Headroom || used < Headroom/2.5 {
		t.Errorf("scale %g puts %.3f of the budget to use, want at most %.2f and no less than the 1-2-5 series' step below", scale, used, Headroom)
	}
	if m := scale / math.Pow(10, math.Floor(math.Log10(scale))); math.Abs(m-1) > 1e-9 && math.Abs(m-2) > 1e-9 && math.Abs(m-5) > 1e-9 {
		t.Errorf("scale %g is not 1, 2 or 5 times a power of ten", scale)
	}
	if s, _ := ChooseScale(&Calibration{FrameHopsPerSecond: 1e15}, plans, 32); s != 1 {
		t.Errorf("a budget beyond the topology's own rates gives scale %g, want 1", s)
	}
	if _, err := ChooseScale(nil, plans, 32); err == nil {
		t.Error("no calibration, yet a scale")
	}
}

func TestACalibrationIsKeptPerMachineAndTrustedForAWeek(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache", "calibration.json")
	if _, fresh, err := LoadCalibration(path); err != nil || fresh {
		t.Fatalf("no file: fresh %v, err %v", fresh, err)
	}
	c := &Calibration{FrameHopsPerSecond: 1234, Measured: time.Now()}
	c.Host, c.Cores = hostAndCores()
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	got, fresh, err := LoadCalibration(path)
	if err != nil || !fresh || got.FrameHopsPerSecond != 1234 {
		t.Fatalf("got %+v fresh %v err %v", got, fresh, err)
	}
	c.Measured = time.Now().Add(-8 * 24 * time.Hour)
	c.Save(path)
	if _, fresh, _ := LoadCalibration(path); fresh {
		t.Error("a calibration 8 days old is trusted")
	}
	c.Measured, c.Host = time.Now(), "another-machine"
	c.Save(path)
	if _, fresh, _ := LoadCalibration(path); fresh {
		t.Error("another machine's calibration is trusted")
	}
}

func TestCalibrationCountsTheFramesTheEmulatedNetworkForwards(t *testing.T) {
	controllertest.NeedFabric(t)
	c, err := Calibrate(context.Background(), Config{Program: controllertest.Program(t), Binary: targettest.GridBinary(t), Name: runName()})
	if err != nil {
		t.Fatal(err)
	}
	// Four workers' fragments over two links each and the results over
	// five: 13 frames per fragment at the least, in well under a minute.
	if least := 13.0 * calibrationFragments / 60; c.FrameHopsPerSecond < least || c.Seconds <= 0 {
		t.Errorf("calibrated %.0f frame-hops/s over %.2f s, want at least %.0f", c.FrameHopsPerSecond, c.Seconds, least)
	}
}
