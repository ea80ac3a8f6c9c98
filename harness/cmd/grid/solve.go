package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "solve",
		Usage:     "compute gradient routing plans (GRID, its exact and link-aware variants, ATP, SwitchML, Geryon) and compare them",
		ArgsUsage: " ",
		Description: "solve reads a topology and its training jobs, runs the chosen algorithms and prints one\n" +
			"comparison table: the slowest worker's max-min fair rate (lambda) under link, switch, PS\n" +
			"and rate caps, the algorithm's own bound, PS load, busiest switch and solve time.\n" +
			"With -o the plan of the (first) algorithm is written as JSON for the experiment runner;\n" +
			"--explain prints each plan's per-worker routes and per-switch loads.\n\n" +
			"Example:\n   grid solve --topo topologies/paper-fig1.yaml --algo all\n" +
			"   grid solve --topo topologies/paper-fig1.yaml --algo grid --seed 7 -o plan.json --explain",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "topo", Required: true, Usage: "topology `FILE` (YAML, see topologies/)"},
			&cli.StringFlag{Name: "jobs", Usage: "jobs `FILE` (YAML, see workloads/jobs/); default: one job with the topology's PS and all its workers"},
			&cli.StringFlag{Name: "algo", Value: solver.DefaultAlgorithm, Usage: "`ALGO`: grid, grid-paths, grid-exact, atp, switchml, geryon, a comma-separated list, or all"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed `N` of the randomized rounding (grid, grid-paths)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the plan of the first algorithm to `FILE` as JSON"},
			&cli.BoolFlag{Name: "explain", Usage: "print every plan's routes, switch loads and violations"},
		}, solverFlags()...),
		Action: runSolve,
	})
}

func runSolve(c *cli.Context) error {
	t, err := topo.Load(c.String("topo"))
	if err != nil {
		return err
	}
	var jobs []workload.Job
	if f := c.String("jobs"); f != "" {
		jobs, err = workload.Load(f, t)
	} else {
		jobs, err = workload.Default(t)
	}
	if err != nil {
		return err
	}
	algos, err := solver.ParseAlgorithms(c.String("algo"))
	if err != nil {
		return err
	}
	opt, err := solverOptions(c)
	if err != nil {
		return err
	}
	in, err := solver.NewInstance(t, jobs)
	if err != nil {
		return err
	}
	opt.Seed = c.Uint64("seed")
	ctx, stop := interruptible(c)
	defer stop()
	var plans []*solver.Plan
	for _, a := range algos {
		p, err := solver.Solve(ctx, in, a, opt)
		if err != nil {
			return err
		}
		plans = append(plans, p)
	}
	w := c.App.Writer
	if err := solver.WriteComparison(w, plans); err != nil {
		return err
	}
	if c.Bool("explain") {
		for _, p := range plans {
			fmt.Fprintln(w)
			if err := p.Explain(w); err != nil {
				return err
			}
		}
	}
	if out := c.String("output"); out != "" {
		if err := writePlan(out, plans[0]); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nwrote the %s plan to %s\n", plans[0].Algorithm, out)
	}
	return nil
}

// writePlan writes through a temporary file in the same directory and renames
// it, so a failed run never leaves a half-written plan.
func writePlan(path string, p *solver.Plan) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".plan-*.json")
	if err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := p.WriteJSON(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write plan %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write plan %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}

// solverFlags are the solver options solve and simulate share.
func solverFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "lp", Value: string(lp.Auto), Usage: "LP `BACKEND`: embedded (pure Go), cbc (coinor-cbc) or auto (cbc when installed)"},
		&cli.IntFlag{Name: "paths", Value: 8, Usage: "`K` shortest paths per worker and aggregation node for the link-aware algorithms"},
		&cli.IntFlag{Name: "exact-limit", Usage: "grid-exact solves the link-aware model exactly when it has at most `N` integer variables (classes x nodes x paths; default 30000 with cbc, 1200 embedded) and its MILPs finish within seconds; otherwise it runs grid-paths' search under the paper model's bound and says exact only if it reaches the bound"},
	}
}

// solverOptions reads solverFlags.
func solverOptions(c *cli.Context) (solver.Options, error) {
	backend, err := lp.ParseBackend(c.String("lp"))
	if err != nil {
		return solver.Options{}, err
	}
	if backend == lp.CBC && !lp.CBCAvailable() {
		return solver.Options{}, fmt.Errorf("--lp cbc: the cbc program is not installed (apt-get install coinor-cbc)")
	}
	if c.Int("paths") < 1 {
		return solver.Options{}, fmt.Errorf("--paths must be at least 1")
	}
	if c.Int("exact-limit") < 0 {
		return solver.Options{}, fmt.Errorf("--exact-limit must be positive (or 0 for the default)")
	}
	return solver.Options{LP: backend, Paths: c.Int("paths"), MILPLimit: c.Int("exact-limit")}, nil
}

// interruptible is the command's context, cancelled by SIGINT or SIGTERM, so
// a running cbc is killed and its temporary files removed before grid exits.
func interruptible(c *cli.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
}
