// Package targettest holds the test helpers for running tests on switch
// processes (package p4test's remote targets): building the `grid` binary
// whose `switch` command is the drop-in for simple_switch_grpc, and
// deciding whether the real-bmv2 tests can run here.
package targettest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/p4test"
)

// RequireBmv2Env is the environment variable that turns the real-bmv2
// tests' skip into a failure (scripts/test-bmv2.sh sets it in the Vagrant
// VM, where a skip would hide a broken install).
const RequireBmv2Env = "GRID_REQUIRE_BMV2"

// NeedRoot skips the test unless it runs as root.
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the switch runs in a network namespace on veth ports reached through packet sockets (CI runs as root)")
	}
}

// The grid binary is built once per test process, into buildDir.
var (
	buildOnce sync.Once
	buildDir  string
	gridBin   string
	buildErr  error
)

// GridBinary builds the grid command of this repository (once per test
// process; Main removes it at the end) and returns its path.
func GridBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := repo.Root()
		if err != nil {
			buildErr = err
			return
		}
		if buildDir, err = os.MkdirTemp("", "grid-targettest-"); err != nil {
			buildErr = err
			return
		}
		gridBin = filepath.Join(buildDir, "grid")
		cmd := exec.Command("go", "build", "-o", gridBin, "./harness/cmd/grid")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./harness/cmd/grid: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return gridBin
}

// Main runs the tests of a package that uses GridBinary and removes the
// binary afterwards: call it from the package's TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// Bmv2OrSkip skips the test, naming what is missing, unless the reference
// tools are on PATH (simple_switch_grpc, simple_switch_CLI, p4c-bm2-ss)
// and the test runs as root. With GRID_REQUIRE_BMV2=1 it fails instead of
// skipping.
func Bmv2OrSkip(t testing.TB) {
	t.Helper()
	var missing []string
	for _, tool := range []string{p4test.SimpleSwitchGRPC, p4test.SimpleSwitchCLI, p4test.P4cCompiler} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	var why string
	switch {
	case len(missing) > 0:
		why = "real bmv2 is not installed here: " + strings.Join(missing, ", ") + " not on PATH (the Vagrant VM has them: see p4/README.md)"
	case os.Geteuid() != 0:
		why = "real bmv2 runs on veth ports in a network namespace, which needs root"
	default:
		return
	}
	if os.Getenv(RequireBmv2Env) == "1" {
		t.Fatalf("%s; %s=1 requires the real-bmv2 tests to run", why, RequireBmv2Env)
	}
	t.Skipf("%s; skipped (set %s=1 to make this a failure)", why, RequireBmv2Env)
}
