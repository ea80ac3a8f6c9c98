// Package aggregator is the control plane of the GRID aggregator P4
// program (p4/aggregator): it compiles the program, turns routing plans
// into per-switch configuration (FromSolverPlan) and a switch's part of a
// plan (gradproto.SwitchConfig) into table entries, multicast groups and
// meter rates on an engine switch or as STF commands. Its tests generate
// the STF regression tests, run the suite (p4test.RunSuite) and check the
// compiled program against the Go reference model (harness/gradproto).
package aggregator

import (
	"fmt"
	"strconv"

	"github.com/grid-ina/grid/harness/gradproto"
	"github.com/grid-ina/grid/harness/p4c"
)

// Build selects the compile-time parameters of the program.
type Build struct {
	// Units is GRID_UNITS, the number of memory units; 0 means the default
	// (gradproto.DefaultUnits).
	Units int
	// Values is N, 32 or 64 values per packet; 0 means 32.
	Values int
}

// UnitCount is M, the number of memory units of the build.
func (b Build) UnitCount() int {
	if b.Units == 0 {
		return gradproto.DefaultUnits
	}
	return b.Units
}

// ValueCount is N, the number of values per packet of the build.
func (b Build) ValueCount() int {
	if b.Values == 0 {
		return gradproto.DefaultValues
	}
	return b.Values
}

// Defines returns the preprocessor definitions of the build.
func (b Build) Defines() map[string]string {
	d := map[string]string{}
	if b.Units != 0 {
		d["GRID_UNITS"] = strconv.Itoa(b.Units)
	}
	if b.Values == 64 {
		d["GRID_VALUES_64"] = "1"
	}
	return d
}

// check refuses builds the program does not support.
func (b Build) check() error {
	if b.Values != 0 && b.Values != 32 && b.Values != 64 {
		return fmt.Errorf("%d values per packet: the aggregator supports 32 and 64", b.Values)
	}
	return nil
}

// Compile compiles the aggregator at path (p4/aggregator/aggregator.p4)
// with the build's parameters.
func Compile(path string, b Build) (*p4c.Result, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	res, err := p4c.Compile(path, p4c.Options{Defines: b.Defines()})
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", path, err)
	}
	return res, nil
}
