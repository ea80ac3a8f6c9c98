package solver

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteComparison prints one row per plan: lambda from the evaluator, the
// algorithm's bound, the intended lambda and worst violation (R-GRIA), the
// PS load and the busiest switch's utilisation, and the solve time.
func WriteComparison(w io.Writer, plans []*Plan) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "algorithm\tmodel\tlambda Gbps\tbound Gbps\tintended Gbps\tmax violation\tPS load Gbps\tbusiest switch\tsolve ms\t")
	for _, p := range plans {
		bound, intended, viol := "-", "-", "-"
		if p.BoundGbps != nil {
			bound = fmt.Sprintf("%.4g", *p.BoundGbps)
		}
		if p.IntendedLambdaGbps != nil {
			intended = fmt.Sprintf("%.4g", *p.IntendedLambdaGbps)
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
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%s\t%s\t%s\t%.4g\t%s\t%.1f\t\n", p.Algorithm, p.Model, p.LambdaGbps, bound, intended, viol, ps, busiest, 1000*p.SolveSeconds)
	}
	return tw.Flush()
}
