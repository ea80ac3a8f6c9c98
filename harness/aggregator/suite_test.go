package aggregator

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/grid-ina/grid/harness/p4test"
	"github.com/grid-ina/grid/harness/p4test/targettest"
)

// loadSuite lists the suite's cases and checks that every "# build:" line
// names a parameter of the program (GRID_UNITS=M, GRID_VALUES_64).
func loadSuite(t *testing.T) (program string, cases []p4test.SuiteCase) {
	t.Helper()
	dir := programDir(t)
	cases, err := p4test.LoadSuite(filepath.Join(dir, "tests"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 17 {
		t.Fatalf("only %d STF cases in the suite", len(cases))
	}
	for _, c := range cases {
		for name, value := range c.Defines {
			switch name {
			case "GRID_VALUES_64":
			case "GRID_UNITS":
				if n, err := strconv.Atoi(value); err != nil || n <= 0 {
					t.Errorf("%s: GRID_UNITS=%q is not a positive number", c.Path, value)
				}
			default:
				t.Errorf("%s: unknown build definition %q (GRID_UNITS, GRID_VALUES_64)", c.Path, name)
			}
		}
	}
	return filepath.Join(dir, "aggregator.p4"), cases
}

func checkSuite(t *testing.T, results []p4test.SuiteResult) {
	t.Helper()
	for _, r := range results {
		t.Run(r.Case.Name, func(t *testing.T) {
			if !r.Passed() {
				t.Error(r.Report())
			}
		})
	}
}

func TestSTFSuitePassesOnTheEmbeddedEngine(t *testing.T) {
	program, cases := loadSuite(t)
	checkSuite(t, p4test.RunSuite(context.Background(), p4test.Engine, p4test.RemoteConfig{}, program, cases))
}

// TestSTFSuitePassesOnTheGridSwitchOverP4Runtime runs the same files
// through the same driver as TestSTFSuiteOnRealBmv2, against `grid switch`
// (grid's drop-in for simple_switch_grpc, built from this tree): a switch
// process on veth ports in a private namespace, the program and every
// entry, group and meter loaded over P4Runtime, packets through packet
// sockets, real time (advance_clock sleeps).
func TestSTFSuitePassesOnTheGridSwitchOverP4Runtime(t *testing.T) {
	targettest.NeedRoot(t)
	program, cases := loadSuite(t)
	cfg := p4test.RemoteConfig{Switch: targettest.GridBinary(t)}
	checkSuite(t, p4test.RunSuite(context.Background(), p4test.GridSwitch, cfg, program, cases))
}

// TestSTFSuiteOnRealBmv2 runs the suite unchanged on simple_switch_grpc,
// the program compiled by p4c-bm2-ss, when they are installed (the Vagrant
// VM); it skips, naming what is missing, elsewhere (GRID_REQUIRE_BMV2=1
// makes that a failure).
func TestSTFSuiteOnRealBmv2(t *testing.T) {
	targettest.Bmv2OrSkip(t)
	program, cases := loadSuite(t)
	checkSuite(t, p4test.RunSuite(context.Background(), p4test.Bmv2, p4test.RemoteConfig{}, program, cases))
}
