package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/switchhost"
)

// switchHostReady starts the line `grid switch-host` prints once every
// switch listens.
const switchHostReady = "grid switch-host: listening"

func init() {
	register(&cli.Command{
		Name:      "switch-host",
		Usage:     "run many embedded P4 switches in one process, each in its network namespace (what grid run uses)",
		ArgsUsage: "SPEC.json",
		Description: "switch-host runs every switch SPEC.json names as `grid switch` would run it alone, but all in one\n" +
			"process: each switch's ports are its namespace's veths and its P4Runtime server listens at its\n" +
			"grpc_addr inside that namespace, so a controller reaches each as a separate switch. grid run writes\n" +
			"the spec (switches/switches.json in the run's folder) and starts this. The spec is JSON:\n\n" +
			`   {"switches": [{"name": "s1", "namespace": "/run/netns/grid-r-s1", "device_id": 1,` + "\n" +
			`                  "grpc_addr": "127.0.0.1:9559", "ports": [{"Port": 1, "Interface": "s1-eth1",` + "\n" +
			`                  "Delay": 2000000, "Loss": 0.01}]}]}` + "\n\n" +
			"(Delay in nanoseconds, Loss a fraction.) Once every switch listens, one line on standard output\n" +
			"says so:\n\n" +
			"   " + switchHostReady + ": 80 switches\n\n" +
			"The process takes the CPU scheduling weight of as many processes as it hosts switches (a negative\n" +
			"nice, up to -19), so that next to the run's other processes it gets the CPU the switches would get\n" +
			"as processes (where the kernel groups processes by session, the weight counts within the session).\n" +
			"The ports are the switches' alone when the spec says \"exclusive_ports\": true (grid switch\n" +
			"--exclusive-ports).\n" +
			"SIGINT or SIGTERM stops every switch; each logs its ports' counters as it exits.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "pcap", Usage: "write each switch's port frames to pcap files in `DIR`/SWITCH"},
			&cli.Uint64Flag{Name: "loss-seed", Value: 1, Usage: "seed `N` of the generators loss emulation draws from"},
		},
		Action: runSwitchHost,
	})
}

func runSwitchHost(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("grid switch-host: want one SPEC.json (see grid switch-host --help)", 2)
	}
	spec, err := switchhost.Load(c.Args().First())
	if err != nil {
		return cli.Exit(fmt.Sprintf("grid switch-host: %v", err), 1)
	}
	h, err := switchhost.Open(spec, switchhost.Options{PcapDir: c.String("pcap"), LossSeed: c.Uint64("loss-seed"), Logger: slog.Default()})
	if err != nil {
		return cli.Exit(fmt.Sprintf("grid switch-host: %v", err), 1)
	}
	if nice, err := switchhost.TakeWeightOf(h.Len()); err != nil {
		slog.Warn("the switch host keeps the CPU weight of one process", "switches", h.Len(), "err", err)
	} else {
		slog.Info("the switch host weighs as its switches would as processes", "switches", h.Len(), "nice", nice)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(c.App.Writer, "%s: %d switches\n", switchHostReady, h.Len())
	if err := h.Serve(ctx); err != nil {
		return cli.Exit(fmt.Sprintf("grid switch-host: %v", err), 1)
	}
	return nil
}
