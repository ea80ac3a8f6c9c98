package solver

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

func comparison(t *testing.T, tp *topo.Topology) string {
	t.Helper()
	jobs, err := workload.Default(tp)
	if err != nil {
		t.Fatal(err)
	}
	in := mustInstance(t, tp, jobs)
	var plans []*Plan
	for _, algo := range Algorithms() {
		p, err := Solve(context.Background(), in, algo, Options{Seed: 1, LP: lp.Embedded})
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	var b bytes.Buffer
	if err := WriteComparison(&b, plans); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func row(table, algo string) string {
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, algo+" ") {
			return l
		}
	}
	return ""
}

// On Fig. 1 R-GRIA's rounding carries 1.5 Gbps where the README promises
// GRID 3 Gbps: the table says which row is the paper's rounding, which the
// plan grid run installs, and whether grid-exact proved its rate.
func TestComparisonSaysWhichRowIsThePapersRoundingAndWhichGridRuns(t *testing.T) {
	table := comparison(t, topo.PaperFig1())
	for algo, want := range map[string]string{
		AlgoGRID:      "the paper's R-GRIA",
		AlgoGRIDPaths: "the plan grid run installs",
		AlgoGRIDExact: "exact optimum, proved",
		AlgoGeryon:    "baseline Geryon",
	} {
		if r := row(table, algo); !strings.Contains(r, want) {
			t.Errorf("%s row %q does not say %q:\n%s", algo, r, want, table)
		}
	}
	if !strings.Contains(table, "intended: the rate R-GRIA's LP promises") {
		t.Errorf("the table does not explain intended rates and violations:\n%s", table)
	}
}

// At grid run --link-rate 20Mbps every rate is a few Mbit/s: the table
// says so instead of 0.01 Gbps.
func TestComparisonUsesAUnitThatFitsTheRates(t *testing.T) {
	tp := topo.PaperFig1()
	for _, l := range tp.Links {
		l.Bandwidth = 20 * topo.Mbps
	}
	tp.Node("ps").Ingress = 20 * topo.Mbps
	table := comparison(t, tp)
	if !strings.Contains(table, "lambda Mbit/s") || strings.Contains(table, "0.00") {
		t.Errorf("20 Mbit/s links, but the table is not in Mbit/s:\n%s", table)
	}
	// Two streams share the PS's 20 Mbit/s.
	if r := row(table, AlgoGRIDPaths); !strings.HasPrefix(strings.Join(strings.Fields(r), " "), "grid-paths links 10 ") {
		t.Errorf("grid-paths row %q lacks its 10 Mbit/s", r)
	}
	for _, c := range []struct {
		gbps  float64
		scale float64
		unit  string
	}{{100, 1, "Gbit/s"}, {0.02, 1e3, "Mbit/s"}, {5e-5, 1e6, "kbit/s"}, {3e-8, 1e9, "bit/s"}} {
		if s, u := RateUnit(c.gbps); s != c.scale || u != c.unit {
			t.Errorf("RateUnit(%g) = %g, %s; want %g, %s", c.gbps, s, u, c.scale, c.unit)
		}
	}
}
