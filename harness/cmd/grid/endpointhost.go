package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/endpointhost"
)

// endpointHostReady starts the line `grid endpoint-host` prints once every
// endpoint's socket is open.
const endpointHostReady = "grid endpoint-host: listening"

func init() {
	register(&cli.Command{
		Name:      "endpoint-host",
		Usage:     "run many workers and PSs in one process, each socket in its host's network namespace (what grid run uses)",
		ArgsUsage: "SPEC.json",
		Description: "endpoint-host runs every endpoint SPEC.json names as `grid worker` or `grid ps` would run it\n" +
			"alone, but all in one process: each endpoint's UDP socket is opened inside its host's network\n" +
			"namespace and stays there, so its packets leave through that host's interface. Each endpoint\n" +
			"writes its own report and log. grid run writes the spec (endpoints.json next to the jobs'\n" +
			"specs) and starts this. The spec is JSON:\n\n" +
			`   {"endpoints": [{"name": "job1-worker0", "namespace": "/run/netns/grid-r-w1", "spec": "job1.json",` + "\n" +
			`                   "role": "worker", "index": 0, "report": "job1-worker0.report.json",` + "\n" +
			`                   "log": "job1-worker0.log"}, ...]}` + "\n\n" +
			"Once every socket is open, one line on standard output says so:\n\n" +
			"   " + endpointHostReady + ": 193 endpoints\n\n" +
			"Workers whose job spec says \"start\": \"signal\" send after SIGUSR1. Once every worker has ended\n" +
			"the PSs stop and the host exits: 0 when every endpoint verified every sum, 1 otherwise.\n" +
			"SIGINT or SIGTERM stops every endpoint early; each still writes its report.",
		Action: runEndpointHost,
	})
}

func runEndpointHost(c *cli.Context) error {
	if c.NArg() != 1 {
		return cli.Exit("grid endpoint-host: want one SPEC.json (see grid endpoint-host --help)", 2)
	}
	spec, err := endpointhost.Load(c.Args().First())
	if err != nil {
		return cli.Exit(fmt.Sprintf("grid endpoint-host: %v", err), 2)
	}
	start := startSignal()
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, err := endpointhost.Open(ctx, spec)
	if err != nil {
		return cli.Exit(fmt.Sprintf("grid endpoint-host: %v", err), 1)
	}
	fmt.Fprintf(c.App.Writer, "%s: %d endpoints\n", endpointHostReady, h.Len())
	unverified, err := h.Run(ctx, start)
	switch {
	case err != nil:
		return cli.Exit(fmt.Sprintf("grid endpoint-host: %v", err), 1)
	case len(unverified) > 0:
		return cli.Exit(fmt.Sprintf("grid endpoint-host: %d of %d endpoints did not verify (their reports say why): %s",
			len(unverified), h.Len(), strings.Join(unverified, ", ")), 1)
	}
	fmt.Fprintf(c.App.Writer, "grid endpoint-host: all %d endpoints verified every sum\n", h.Len())
	return nil
}
