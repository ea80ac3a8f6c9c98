// Package sim runs the paper's large-scale simulation (GRID, ToN 2023,
// Sec. 6.3, Figs. 11-16): every algorithm on fat-tree and leaf-spine fabrics
// with ToR/leaf or random-20% programmable switches, sweeping the number of
// workers, scored by the solver's evaluator; it writes a CSV and plots.
package sim

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"text/tabwriter"

	"github.com/grid-ina/grid/harness/solver"
)

// Config says what to simulate.
type Config struct {
	Scenarios  []solver.Scenario
	Algorithms []string
	// Workers lists the worker counts per fabric ("fattree", "leafspine"); nil uses DefaultWorkers.
	Workers map[string][]int
	Seed    uint64 // first seed; run r uses Seed+r for capacities, placement and rounding
	Runs    int    // instances per point (default 1)
	Options solver.Options
	// IgnoreLinks evaluates in the paper's model (links assumed sufficient, as
	// the paper's own simulation does) instead of with 100 Gbps link limits.
	IgnoreLinks bool
}

// DefaultWorkers are the sweeps used when Config.Workers is nil.
var DefaultWorkers = map[string][]int{
	"fattree":   {16, 32, 64, 96, 128, 160, 191},
	"leafspine": {50, 100, 200, 300, 400, 499},
}

// Row is one algorithm on one instance.
type Row struct {
	Scenario  string
	Workers   int
	Seed      uint64
	Algorithm string
	// Model is the network model the algorithm optimised (solver.Plan.Model).
	Model string
	// LambdaGbps is the slowest worker's rate, MeanRateGbps the average worker rate.
	LambdaGbps, MeanRateGbps float64
	// SwitchAggGbps is the traffic aggregated in switches (sum of switch loads);
	// PSLoadGbps what reaches the PS.
	SwitchAggGbps, PSLoadGbps float64
	// BoundGbps is the algorithm's own bound (0 when it has none).
	BoundGbps    float64
	SolveSeconds float64
	// Exact is grid-exact's verdict: "yes" when it proved LambdaGbps
	// optimal, "no" when it did not (the link-aware MILP was too big or
	// stopped: the row is grid-paths' search under BoundGbps); "" for the
	// other algorithms.
	Exact string
}

// Run simulates every scenario, worker count, run and algorithm.
func Run(ctx context.Context, cfg Config) ([]Row, error) {
	runs := max(1, cfg.Runs)
	workers := cfg.Workers
	if workers == nil {
		workers = DefaultWorkers
	}
	var rows []Row
	for _, sc := range cfg.Scenarios {
		for _, n := range workers[sc.Fabric] {
			for r := 0; r < runs; r++ {
				seed := cfg.Seed + uint64(r)
				t, jobs, err := sc.Build(n, seed)
				if err != nil {
					return nil, err
				}
				in, err := solver.NewInstance(t, jobs)
				if err != nil {
					return nil, fmt.Errorf("scenario %s, %d workers: %w", sc.Name, n, err)
				}
				if cfg.IgnoreLinks {
					in = in.WithoutLinkLimits()
				}
				for _, algo := range cfg.Algorithms {
					opt := cfg.Options
					opt.Seed = seed
					p, err := solver.Solve(ctx, in, algo, opt)
					if err != nil {
						return nil, fmt.Errorf("scenario %s, %d workers, seed %d: %w", sc.Name, n, seed, err)
					}
					rows = append(rows, rowOf(sc.Name, n, seed, p))
				}
				slog.Debug("simulated", "scenario", sc.Name, "workers", n, "seed", seed)
			}
		}
	}
	return rows, nil
}

func rowOf(scenario string, n int, seed uint64, p *solver.Plan) Row {
	r := Row{Scenario: scenario, Workers: n, Seed: seed, Algorithm: p.Algorithm, Model: p.Model, LambdaGbps: p.LambdaGbps, SolveSeconds: p.SolveSeconds}
	var sum float64
	var cnt int
	for _, j := range p.Jobs {
		r.PSLoadGbps += j.PSLoadGbps
		for _, w := range j.Workers {
			sum += w.RateGbps
			cnt++
		}
	}
	r.MeanRateGbps = sum / float64(max(cnt, 1))
	for _, s := range p.Switches {
		r.SwitchAggGbps += s.LoadGbps
	}
	if p.BoundGbps != nil {
		r.BoundGbps = *p.BoundGbps
	}
	if p.Exact != nil {
		r.Exact = map[bool]string{true: "yes", false: "no"}[*p.Exact]
	}
	return r
}

// WriteTable prints the rows for people: per instance and algorithm the
// model it optimised, lambda, its bound and whether grid-exact proved it,
// switch aggregation, PS load and solve time, rates in the unit that fits.
// model is Config.ModelName, the network every plan is scored in.
func WriteTable(w io.Writer, rows []Row, model string) error {
	largest := 0.0
	for _, r := range rows {
		largest = max(largest, r.LambdaGbps, r.BoundGbps, r.SwitchAggGbps, r.PSLoadGbps)
	}
	scale, unit := solver.RateUnit(largest)
	rate := func(v float64) string { return strconv.FormatFloat(v*scale, 'g', 4, 64) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "scenario\tworkers\talgorithm\tmodel\tlambda %[1]s\tbound %[1]s\texact\tswitch agg %[1]s\tPS load %[1]s\tsolve ms\t\n", unit)
	unproved := false
	for _, r := range rows {
		bound, exact := "-", "-"
		if r.BoundGbps > 0 {
			bound = rate(r.BoundGbps)
		}
		if r.Exact != "" {
			exact = r.Exact
			unproved = unproved || r.Exact == "no"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t\n", r.Scenario, r.Workers, r.Algorithm, r.Model, rate(r.LambdaGbps), bound, exact,
			rate(r.SwitchAggGbps), rate(r.PSLoadGbps), 1000*r.SolveSeconds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "model: what the algorithm optimised: paper = links assumed sufficient (the paper's Eq. 1), links = link capacities and paths, none = a baseline's fixed rule; every lambda is scored in one network (%s).\n", model)
	if unproved {
		fmt.Fprintln(w, "exact no: grid-exact's link-aware MILP was too big or stopped, so its row is grid-paths' search and its bound the paper model's optimum (links ignored), an upper bound.")
	}
	return nil
}

// ModelName describes the network model of cfg for titles.
func (cfg Config) ModelName() string {
	if cfg.IgnoreLinks {
		return "paper model, links unlimited"
	}
	return "100 Gbps links"
}

// CSVHeader names the CSV columns.
var CSVHeader = []string{"scenario", "workers", "seed", "algorithm", "model", "lambda_gbps", "mean_rate_gbps", "switch_agg_gbps", "ps_load_gbps", "bound_gbps", "solve_seconds", "exact"}

// WriteCSV writes rows with CSVHeader.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for _, r := range rows {
		if err := cw.Write([]string{r.Scenario, strconv.Itoa(r.Workers), strconv.FormatUint(r.Seed, 10), r.Algorithm, r.Model,
			f(r.LambdaGbps), f(r.MeanRateGbps), f(r.SwitchAggGbps), f(r.PSLoadGbps), f(r.BoundGbps), f(r.SolveSeconds), r.Exact}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
