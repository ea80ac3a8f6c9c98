package main

// grid monitor: a thin layer over harness/monitor.

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/monitor"
)

func init() {
	register(&cli.Command{
		Name:      "monitor",
		Usage:     "show a run's traffic per link, like iftop's text mode",
		ArgsUsage: "RUN",
		Description: "Samples the kernel counters of every interface of every node of RUN (see 'grid ls') every\n" +
			"interval and prints one table per sample, as 'iftop -t' does: for each link (veth pair), its\n" +
			"two ends, the rate each way over the last 2 s, 10 s and 40 s (bits/s), the peak rate over one\n" +
			"interval and the bytes sent since grid monitor started ('=>' is the first end sending to the\n" +
			"second, '<=' the reverse), then the total over all links. Tables follow each other until\n" +
			"Ctrl-C; --once prints one table after one interval and exits. Needs root.\n\n" +
			"Example:\n  sudo grid monitor ft4 --top 10\n  sudo grid monitor ft4 --once --interval 2s --sort total",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "interval", Aliases: []string{"i"}, Value: time.Second, Usage: "time between samples"},
			&cli.BoolFlag{Name: "once", Usage: "print one table after one interval and exit"},
			&cli.StringFlag{Name: "sort", Value: string(monitor.ByRate), Usage: "order links by `ORDER`: rate (the last 2 s) or total (bytes since start), both ways together"},
			&cli.IntFlag{Name: "top", Usage: "show only the first `N` links (0: all)"},
		},
		Action: func(c *cli.Context) error {
			args, err := positionalArgs(c)
			if err != nil {
				return cli.Exit("grid monitor: "+err.Error(), 2)
			}
			if len(args) != 1 {
				return cli.Exit("grid monitor: give exactly one run (see 'grid ls')", 2)
			}
			order, err := monitor.ParseOrder(c.String("sort"))
			if err != nil {
				return cli.Exit("grid monitor: --sort: "+err.Error(), 2)
			}
			if c.Duration("interval") <= 0 || c.Int("top") < 0 {
				return cli.Exit("grid monitor: --interval must be positive and --top not negative", 2)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			return watch(ctx, c.App.Writer, args[0], c.Duration("interval"), c.Bool("once"),
				monitor.TableOptions{Sort: order, Top: c.Int("top")})
		},
	})
}

// watch prints a table of run's traffic every interval until ctx ends, or
// once after one interval.
func watch(ctx context.Context, w io.Writer, run string, interval time.Duration, once bool, table monitor.TableOptions) error {
	if err := fabric.CheckRoot(); err != nil {
		return err
	}
	st, err := fabric.LoadState(run)
	if err != nil {
		return err
	}
	if st.Status != fabric.StatusUp {
		return fmt.Errorf("run %q is not up (%s)", run, st.Describe())
	}
	// Enough samples for the 40 s rate, and no more: the live view may run for days.
	keep := int(monitor.Windows[len(monitor.Windows)-1]/interval) + 2
	m, err := monitor.New(st, monitor.Options{Interval: interval, Keep: keep})
	if err != nil {
		return err
	}
	defer m.Close()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if err := m.Sample(); err != nil {
			return err
		}
		snap := m.Snapshot()
		table.Title = monitor.Title(run, snap, interval)
		if err := monitor.FormatTable(w, snap, table); err != nil {
			return err
		}
		if once {
			return nil
		}
	}
}
