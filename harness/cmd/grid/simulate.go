package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/solver/sim"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "simulate",
		Usage:     "run the paper's large-scale routing simulation (Sec. 6.3) and write CSV and plots",
		ArgsUsage: " ",
		Description: "simulate builds the paper's fabrics — a k=8 fat-tree (80 switches, 192 servers) and a\n" +
			"leaf-spine (60 switches, 500 servers), 100 Gbps links and PS, switch capacities uniform in\n" +
			"100 Gbps-3.2 Tbps — with (a) ToR/leaf switches or (b) a random 20% programmable, sweeps the\n" +
			"number of workers, runs every algorithm on each instance and writes simulation.csv and\n" +
			"PNG/SVG plots of the slowest worker's rate, the switch aggregation rate and the PS load to\n" +
			"results/<name>/ (replaced as a whole when the run completes).\n\n" +
			"Example:\n   grid simulate --name paper-sim --runs 3\n" +
			"   grid simulate --name paper-model --ignore-links\n" +
			"   grid simulate --scenario fattree-tor --workers 16,64,191 --algo grid,grid-exact,atp",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "name", Value: "simulation", Usage: "write into results/`NAME`/"},
			&cli.StringFlag{Name: "results", Value: "results", Usage: "results `DIR`"},
			&cli.StringFlag{Name: "scenario", Value: "all", Usage: "`LIST` of fattree-tor, fattree-random20, leafspine-leaf, leafspine-random20, or all"},
			&cli.StringFlag{Name: "workers", Usage: "comma-separated worker `COUNTS` for every scenario (default: 16..191 on the fat-tree, 50..499 on the leaf-spine)"},
			&cli.StringFlag{Name: "algo", Value: "all", Usage: "`ALGO` list as for grid solve, or all"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "first `SEED`; run r uses seed+r for capacities, workers and rounding"},
			&cli.IntFlag{Name: "runs", Value: 1, Usage: "`N` random instances per point (plots show the mean)"},
			&cli.BoolFlag{Name: "ignore-links", Usage: "evaluate in the paper's model, links assumed sufficient (the paper's own simulation); default: 100 Gbps links limit rates"},
		}, solverFlags()...),
		Action: runSimulate,
	})
}

func runSimulate(c *cli.Context) error {
	if n := c.Int("runs"); n < 1 {
		return fmt.Errorf("--runs %d: at least 1 instance per point", n)
	}
	algos, err := solver.ParseAlgorithms(c.String("algo"))
	if err != nil {
		return err
	}
	opt, err := solverOptions(c)
	if err != nil {
		return err
	}
	var scenarios []solver.Scenario
	for _, sc := range solver.PaperScenarios() {
		if c.String("scenario") == "all" || containsWord(c.String("scenario"), sc.Name) {
			scenarios = append(scenarios, sc)
		}
	}
	if len(scenarios) == 0 {
		return fmt.Errorf("--scenario %q names no scenario (fattree-tor, fattree-random20, leafspine-leaf, leafspine-random20, all)", c.String("scenario"))
	}
	cfg := sim.Config{Scenarios: scenarios, Algorithms: algos, Seed: c.Uint64("seed"), Runs: c.Int("runs"), Options: opt, IgnoreLinks: c.Bool("ignore-links")}
	if s := c.String("workers"); s != "" {
		var counts []int
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("--workers: %q is not a positive count", f)
			}
			counts = append(counts, n)
		}
		cfg.Workers = map[string][]int{"fattree": counts, "leafspine": counts}
	}
	ctx, stop := interruptible(c)
	defer stop()
	rows, err := sim.Run(ctx, cfg)
	if err != nil {
		return err
	}
	files, err := sim.WriteResults(filepath.Join(pathFlag(c, "results"), c.String("name")), rows, algos, cfg.ModelName())
	if err != nil {
		return err
	}
	if err := sim.WriteTable(c.App.Writer, rows, cfg.ModelName()); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "\nwrote %d files, e.g. %s\n", len(files), files[0])
	return nil
}

func containsWord(list, w string) bool {
	for _, f := range strings.Split(list, ",") {
		if strings.TrimSpace(f) == w {
			return true
		}
	}
	return false
}
