package main

// grid run: the default experiment. Until the embedded switch and the
// experiment runner exist (workers, PS, traffic monitor are later issues), it
// does the parts that exist end to end: solve the routing plan, build the
// topology as namespaces, show it, tear it down, and keep the plan and the
// drawing under results/.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/lp"
	"github.com/grid-ina/grid/harness/solver"
	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

func init() {
	register(&cli.Command{
		Name:  "run",
		Usage: "run the default experiment: solve the routing plan, build the topology, show it, tear it down",
		Description: "run loads a topology (the paper's 3-switch testbed by default) and its training job, compares\n" +
			"the routing algorithms, builds the topology as network namespaces, prints it and removes it\n" +
			"again. The plan, the comparison and a drawing go to results/RUN-TIME/. Sending real gradients\n" +
			"through P4 switches comes with the embedded switch and the experiment runner, which are not\n" +
			"built yet. Needs root.\n\n" +
			"Example:\n   sudo grid run\n   sudo grid run --topo topologies/fattree-k4.yaml --keep",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "topo", Value: "topologies/testbed.yaml", Usage: "topology `FILE`"},
			&cli.StringFlag{Name: "jobs", Usage: "jobs `FILE`; default: one job with the topology's PS and all its workers"},
			&cli.StringFlag{Name: "algo", Value: solver.DefaultAlgorithm, Usage: "routing `ALGO` whose plan is kept"},
			&cli.StringFlag{Name: "name", Usage: "run name (default: from the topology file)"},
			&cli.StringFlag{Name: "results", Value: "results", Usage: "`DIR` that receives the run's folder"},
			&cli.BoolFlag{Name: "keep", Usage: "leave the topology up (remove it later with 'grid down RUN')"},
		},
		Action: runDefault,
	})
}

func runDefault(c *cli.Context) error {
	if err := fabric.CheckRoot(); err != nil {
		return err
	}
	t, err := topo.Load(c.String("topo"))
	if err != nil {
		return err
	}
	jobs, err := workload.Default(t)
	if f := c.String("jobs"); f != "" {
		jobs, err = workload.Load(f, t)
	}
	if err != nil {
		return err
	}
	in, err := solver.NewInstance(t, jobs)
	if err != nil {
		return err
	}
	w := c.App.Writer
	slog.Info("solving routing plans", "topology", c.String("topo"), "jobs", len(jobs))
	var plans []*solver.Plan
	var kept *solver.Plan
	for _, a := range solver.Algorithms() {
		p, err := solver.Solve(c.Context, in, a, solver.Options{Seed: 1, LP: lp.Auto})
		if err != nil {
			return fmt.Errorf("solve %s: %w", a, err)
		}
		plans = append(plans, p)
		if a == c.String("algo") {
			kept = p
		}
	}
	if kept == nil {
		return fmt.Errorf("--algo %q: unknown algorithm (one of %v)", c.String("algo"), solver.Algorithms())
	}
	var comparison bytes.Buffer
	if err := solver.WriteComparison(&comparison, plans); err != nil {
		return err
	}
	fmt.Fprint(w, comparison.String())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	began := time.Now()
	st, err := fabric.Up(ctx, t, fabric.Options{Name: c.String("name")})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted: everything built was removed")
		}
		return err
	}
	fmt.Fprintf(w, "\nbuilt in %v\n", time.Since(began).Round(time.Millisecond))
	if err := listNodes(c, st); err != nil {
		return err
	}
	if !c.Bool("keep") {
		defer func() {
			if err := fabric.Down(st.Run); err != nil {
				slog.Error("tear down", "run", st.Run, "err", err)
				return
			}
			fmt.Fprintf(w, "run %s down\n", st.Run)
		}()
	}

	dir, err := writeRunResults(c.String("results"), st.Run, kept, comparison.Bytes(), t)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "results in %s (the %s plan, the comparison, the topology drawing)\n", dir, kept.Algorithm)
	return nil
}

// writeRunResults fills a hidden temporary folder and renames it into place,
// so a results folder that exists is always complete.
func writeRunResults(root, run string, plan *solver.Plan, comparison []byte, t *topo.Topology) (string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("results: %w", err)
	}
	final := filepath.Join(root, run+"-"+time.Now().UTC().Format("20060102T150405Z"))
	tmp, err := os.MkdirTemp(root, ".partial-"+run+"-")
	if err != nil {
		return "", fmt.Errorf("results: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	var planJSON bytes.Buffer
	if err := plan.WriteJSON(&planJSON); err != nil {
		return "", fmt.Errorf("results: plan: %w", err)
	}
	files := map[string][]byte{
		"plan.json":      planJSON.Bytes(),
		"comparison.txt": comparison,
		"topology.svg":   t.SVG(),
		"topology.dot":   t.DOT(),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return "", fmt.Errorf("results: %w", err)
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("results: %w", err)
	}
	return final, nil
}
