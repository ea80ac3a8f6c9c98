package solver

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// RateUnit picks the unit a table of rates (given in Gbps) reads best in:
// the largest that keeps the biggest rate at or above 1. It returns the
// factor a Gbps value is multiplied by and the unit's name.
func RateUnit(largestGbps float64) (float64, string) {
	switch {
	case largestGbps >= 1 || largestGbps <= 0 || math.IsInf(largestGbps, 0) || math.IsNaN(largestGbps):
		return 1, "Gbit/s"
	case largestGbps >= 1e-3:
		return 1e3, "Mbit/s"
	case largestGbps >= 1e-6:
		return 1e6, "kbit/s"
	}
	return 1e9, "bit/s"
}

// Role says in words what a plan is: which row is the paper's R-GRIA
// rounding, which the plan grid run installs, whether grid-exact proved its
// rate, which rows are baselines.
func (p *Plan) Role() string {
	switch p.Algorithm {
	case AlgoGRID:
		return "the paper's R-GRIA: LP rounding, paths ignored"
	case AlgoGRIDPaths:
		if DefaultAlgorithm == AlgoGRIDPaths {
			return "GRID with links: the plan grid run installs by default"
		}
		return "GRID with links"
	case AlgoGRIDExact:
		switch {
		case p.Exact == nil:
			return "exact optimum"
		case *p.Exact && p.Model == "paper":
			return "exact optimum, proved (paper model: links cannot limit)"
		case *p.Exact:
			return "exact optimum, proved"
		}
		return "not proved exact: best found under the bound"
	case AlgoATP:
		return "baseline ATP: first switch on the default path"
	case AlgoSwitchML:
		return "baseline SwitchML: rack switch"
	case AlgoGeryon:
		return "baseline Geryon: no in-network aggregation"
	}
	return ""
}

// WriteComparison prints one row per plan: lambda from the evaluator, the
// algorithm's bound, the intended lambda and worst violation (R-GRIA), the
// PS load and the busiest switch's utilisation, the solve time and what the
// plan is. Rates are in the unit that fits the table (RateUnit).
func WriteComparison(w io.Writer, plans []*Plan) error {
	largest := 0.0
	for _, p := range plans {
		largest = math.Max(largest, p.LambdaGbps)
		if p.BoundGbps != nil && !math.IsInf(*p.BoundGbps, 0) {
			largest = math.Max(largest, *p.BoundGbps)
		}
	}
	scale, unit := RateUnit(largest)
	rate := func(v float64) string { return fmt.Sprintf("%.4g", v*scale) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "algorithm\tmodel\tlambda %[1]s\tbound %[1]s\tintended %[1]s\tmax violation\tPS load %[1]s\tbusiest switch\tsolve ms\twhat it is\n", unit)
	rgria := false
	for _, p := range plans {
		bound, intended, viol := "-", "-", "-"
		if p.BoundGbps != nil {
			bound = rate(*p.BoundGbps)
		}
		if p.IntendedLambdaGbps != nil {
			rgria = true
			intended = rate(*p.IntendedLambdaGbps)
			viol = fmt.Sprintf("%.3gx", p.MaxViolation())
			if len(p.Violations) == 0 {
				viol = "none"
			}
		}
		var ps float64
		for _, j := range p.Jobs {
			ps += j.PSLoadGbps
		}
		busiest := "-"
		best := 0.0
		for _, s := range p.Switches {
			if s.CapacityGbps > 0 && s.LoadGbps/s.CapacityGbps > best {
				best = s.LoadGbps / s.CapacityGbps
				busiest = fmt.Sprintf("%s %.0f%%", s.Name, 100*best)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\n", p.Algorithm, p.Model, rate(p.LambdaGbps), bound, intended, viol, rate(ps), busiest, 1000*p.SolveSeconds, p.Role())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "lambda: the slowest worker's rate the network carries with the plan (max-min fair; gradients, partial sums and results on every link).")
	if rgria {
		fmt.Fprintln(w, "intended: the rate R-GRIA's LP promises every worker; max violation: how far those rates overrun the most overloaded capacity.")
	}
	return nil
}
