package lab

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/p4test"
	"github.com/grid-ina/grid/harness/p4test/targettest"
)

const ownLabs = "../../p4/labs"

// Every one of grid's labs is graded by `grid lab check`: the starter a
// student begins from fails it, the solution passes.
func TestEveryLabCheckFailsOnTheStarterAndPassesOnTheSolution(t *testing.T) {
	specs, _ := filepath.Glob(filepath.Join(ownLabs, "*", "check.json"))
	if len(specs) < 4 {
		t.Fatalf("found %d labs with a check.json, want the 4 of the sequence", len(specs))
	}
	for _, spec := range specs {
		dir := filepath.Dir(spec)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			for _, f := range []string{"README.md", "Makefile"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("the lab has no %s", f)
				}
			}
			var out bytes.Buffer
			ok, err := Check(context.Background(), dir, "", "", &out)
			if err != nil || ok {
				t.Errorf("the starter passes (%v, %v):\n%s", ok, err, out.String())
			}
			if !strings.Contains(out.String(), "FAIL") {
				t.Errorf("the starter's check names no failure:\n%s", out.String())
			}
			program, topology := "", ""
			if p, _ := filepath.Glob(filepath.Join(dir, "solution", "*.p4")); len(p) == 1 {
				program = p[0]
			}
			if p := filepath.Join(dir, "solution", "topology.yaml"); fileExists(p) {
				topology = p
			}
			if program == "" && topology == "" {
				t.Fatal("no solution/NAME.p4 or solution/topology.yaml")
			}
			out.Reset()
			ok, err = Check(context.Background(), dir, program, topology, &out)
			if err != nil || !ok {
				t.Errorf("the solution fails (%v):\n%s", err, out.String())
			}
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Lab 1 runs as a lab with its solution: h1 reaches h3 across both switches
// by the entries of its runtime JSON files.
func TestLabOneRunsWithItsSolutionAndHostsReachEachOther(t *testing.T) {
	needRoot(t)
	dir := filepath.Join(t.TempDir(), "1-forwarding")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(ownLabs, "1-forwarding"))); err != nil {
		t.Fatal(err)
	}
	_, st, _ := startLabWith(t, dir, "solution/forwarding.p4")
	for _, dst := range []string{"10.0.2.2", "10.0.3.3"} {
		if out, err := onHost(t, st, "h1", "ping", "-c", "1", "-W", "3", dst); err != nil {
			t.Errorf("h1 ping %s: %v\n%s", dst, err, out)
		}
	}
}

// The labs' packet tests hold on real bmv2 with the reference compiler too,
// so what a student learns on grid holds on the tutorials' VM.
func TestLabSolutionsPassTheirPacketTestsOnRealBmv2(t *testing.T) {
	targettest.Bmv2OrSkip(t)
	specs, _ := filepath.Glob(filepath.Join(ownLabs, "*", "check.json"))
	ran := 0
	for _, spec := range specs {
		dir := filepath.Dir(spec)
		solutions, _ := filepath.Glob(filepath.Join(dir, "solution", "*.p4"))
		if len(solutions) != 1 {
			continue // the solver lab has no program
		}
		cases, err := p4test.LoadSuite(filepath.Join(dir, "tests"))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p4test.RunSuite(context.Background(), p4test.Bmv2, p4test.RemoteConfig{}, solutions[0], cases) {
			ran++
			if !r.Passed() {
				t.Errorf("%s on bmv2: %s", filepath.Base(dir), r.Report())
			}
		}
	}
	if ran < 4 {
		t.Errorf("ran %d packet tests on bmv2, want the 4 of labs 1-3", ran)
	}
}
