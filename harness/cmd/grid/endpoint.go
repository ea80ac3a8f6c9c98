package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/endpoint"
)

const endpointSpecHelp = "The spec is one JSON file per job, shared by the PS and every worker (grid run writes it): the\n" +
	"job's plan (id, PS node and address, values per packet, the workers' addresses, aggregation nodes\n" +
	"and slots), fragments per worker, gradient seed, window, retransmission timeout and deadline;\n" +
	"'go doc github.com/grid-ina/grid/harness/endpoint' shows its fields. Gradients are a function\n" +
	"of the seed, so every sum is checked exactly without shipping data.\n\n" +
	"The report (--report, JSON, written atomically whatever happens) counts packets sent, resent\n" +
	"and received, control packets (collisions, ECN), says whether every sum was verified and gives\n" +
	"the first mismatch, start and end times and the goodput. The exit status is 0 only when every\n" +
	"fragment completed with exact sums; 2 for a bad spec or command line."

func init() {
	register(&cli.Command{
		Name:      "worker",
		Usage:     "run one emulated worker of a job: send its gradient fragments, check every result sum",
		ArgsUsage: "--spec FILE --index I [--report FILE]",
		Description: "worker sends the worker's gradient fragments to the job's PS over UDP port 18258 from its own\n" +
			"address (run it in the worker host's network namespace), through a congestion window that\n" +
			"grows with results and halves (once per window) on a switch's control packet (collision or\n" +
			"over capacity) or a timeout, resends fragments without a result after a retransmission\n" +
			"timeout measured from round trips (the spec's timeout until then; doubled on consecutive\n" +
			"timeouts), and checks every result the switches multicast back against the exact sums of all\n" +
			"workers' gradients. It stops when every fragment has its\n" +
			"result or at the spec's deadline. With \"start\": \"signal\" in the spec it binds, prints its ready\n" +
			"line (grid worker: listening on IP:18258) and sends only after SIGUSR1, so that a runner can\n" +
			"start all workers together; the deadline counts from the signal, the spec's start_wait bounds\n" +
			"the wait.\n\n" + endpointSpecHelp + "\n\n" +
			"Example (in host w1's namespace of run testbed):\n" +
			"   grid exec testbed w1 -- grid worker --spec job1.json --index 0 --report w1.json",
		Flags: endpointFlags(&cli.IntFlag{Name: "index", Value: -1, DefaultText: "the spec's index",
			Usage: "this worker's position `I` in the spec's job.members (from 0)"}),
		OnUsageError: endpointUsageError,
		Action: endpointAction(func(c *cli.Context, spec *endpoint.Spec) (endpointRun, error) {
			index, err := spec.WorkerIndex(c.Int("index"))
			if err != nil {
				return nil, err
			}
			var opts []endpoint.Option
			if spec.Start == endpoint.StartSignal {
				opts = append(opts, endpoint.StartOn(startSignal()))
			}
			return func(ctx context.Context, ready endpoint.Option) (*endpoint.Report, error) {
				return endpoint.RunWorker(ctx, spec, index, append(opts, ready)...)
			}, nil
		}),
	})
	register(&cli.Command{
		Name:      "ps",
		Usage:     "run the parameter server of a job: add what the switches send, multicast exact results",
		ArgsUsage: "--spec FILE [--report FILE]",
		Description: "ps receives the job's fragments on UDP port 18258 at the PS's address (run it in the PS host's\n" +
			"network namespace): fragments of workers it aggregates itself and the switches' partial sums.\n" +
			"It adds each worker's contribution exactly once (the recovery protocol of p4/README.md),\n" +
			"checks each completed fragment against the exact sums and sends the result to 255.255.255.255,\n" +
			"which the switches multicast to the workers. A late resend gets the result again, addressed\n" +
			"to the worker that sent it alone. It stops\n" +
			"once every fragment is complete and nothing of the job arrived for the linger time, or at\n" +
			"the deadline. Start the workers once it printed its ready line:\n\n" +
			"   grid ps: listening on 10.0.0.9:18258\n\n" +
			"SIGINT or SIGTERM stops it early (the report is still written; the exit status is 1\n" +
			"unless every fragment was already complete and exact).\n\n" + endpointSpecHelp + "\n\n" +
			"Example (in the PS host's namespace of run testbed):\n" +
			"   grid exec testbed ps -- grid ps --spec job1.json --report ps.json",
		Flags:        endpointFlags(),
		OnUsageError: endpointUsageError,
		Action: endpointAction(func(c *cli.Context, spec *endpoint.Spec) (endpointRun, error) {
			if spec.Role == endpoint.RoleWorker {
				return nil, errors.New("role: the spec is a worker's, not the PS's")
			}
			return func(ctx context.Context, ready endpoint.Option) (*endpoint.Report, error) {
				return endpoint.RunPS(ctx, spec, ready)
			}, nil
		}),
	})
}

// startSignal is closed at the first SIGUSR1. It catches the signal from
// now on, before the ready line, so a runner that signals right after
// reading that line never kills the worker with SIGUSR1's default action.
func startSignal() <-chan struct{} {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1)
	start := make(chan struct{})
	go func() {
		<-sigs
		signal.Stop(sigs)
		close(start)
	}()
	return start
}

// endpointFlags are the flags of both commands, then extra.
func endpointFlags(extra ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "spec", Usage: "the job's spec `FILE` (JSON)"},
		&cli.StringFlag{Name: "report", Usage: "write the report as JSON to `FILE`"},
	}, extra...)
}

// endpointRun runs an endpoint; the option reports its bound address.
type endpointRun func(context.Context, endpoint.Option) (*endpoint.Report, error)

// endpointAction loads the spec, lets prepare check the command's part of
// it (an error there is a bad spec or flag: exit 2) and runs what it
// returns.
func endpointAction(prepare func(*cli.Context, *endpoint.Spec) (endpointRun, error)) cli.ActionFunc {
	return func(c *cli.Context) error {
		spec, err := endpointSpec(c)
		if err != nil {
			return err
		}
		run, err := prepare(c, spec)
		if err != nil {
			return cli.Exit(fmt.Sprintf("grid %s: %s: %v", c.Command.Name, c.String("spec"), err), 2)
		}
		return runEndpoint(c, run)
	}
}

func endpointUsageError(c *cli.Context, err error, _ bool) error {
	return cli.Exit(fmt.Sprintf("grid %s: %v (see grid %s --help)", c.Command.Name, err, c.Command.Name), 2)
}

func endpointSpec(c *cli.Context) (*endpoint.Spec, error) {
	if c.Args().Present() {
		return nil, cli.Exit(fmt.Sprintf("grid %s: unexpected argument %q (see grid %s --help)", c.Command.Name, c.Args().First(), c.Command.Name), 2)
	}
	if c.String("spec") == "" {
		return nil, cli.Exit(fmt.Sprintf("grid %s: --spec FILE is required (see grid %s --help)", c.Command.Name, c.Command.Name), 2)
	}
	spec, err := endpoint.LoadSpec(c.String("spec"))
	if err != nil {
		return nil, cli.Exit(fmt.Sprintf("grid %s: %v", c.Command.Name, err), 2)
	}
	return spec, nil
}

// runEndpoint runs an endpoint until it ends or SIGINT/SIGTERM, writes its
// report and prints a summary; the error says why it did not verify. Once
// the socket is bound it prints "grid ps: listening on IP:18258" (or grid
// worker), the line a runner waits for before it starts the workers.
func runEndpoint(c *cli.Context, run endpointRun) error {
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, endpoint.OnListening(func(addr netip.AddrPort) {
		fmt.Fprintf(c.App.Writer, "grid %s: listening on %s\n", c.Command.Name, addr)
	}))
	if err != nil {
		return fmt.Errorf("%s: %w", c.Command.Name, err)
	}
	if path := c.String("report"); path != "" {
		if err := endpoint.WriteReport(path, rep); err != nil {
			return err
		}
	}
	rep.WriteSummary(c.App.Writer)
	if err := rep.Failure(); err != nil {
		return cli.Exit(fmt.Sprintf("grid %s: %v", c.Command.Name, err), 1)
	}
	return nil
}
