package main

// The fabric commands: up, down, clean, ls and exec, thin layers over
// harness/fabric.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/controller"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/topo"
)

func init() {
	register(&cli.Command{
		Name:      "up",
		Usage:     "build a topology as network namespaces and veth links (Mininet's job)",
		ArgsUsage: "TOPOLOGY.yaml",
		Description: "Creates one network namespace per host and per switch, named RUN-NODE (see 'ip netns list'),\n" +
			"and one veth pair per link. Host interfaces get their address, a static neighbour entry for\n" +
			"their gateway and a route through it to 10.0.0.0/8, the hosts' network (further interfaces\n" +
			"of a multi-homed host are chosen by source address), so no ARP is needed. IPv6 and multicast\n" +
			"are off, and so is transmit checksum offload on host interfaces. Every interface is shaped to\n" +
			"its link bandwidth with tbf; link delay and loss need netem, and where the kernel lacks it\n" +
			"they are recorded for the switch back end to emulate ('grid ls RUN' lists them). A switch's\n" +
			"ports are the veth ends in its namespace, named TAGs<id>p<port> after the P4 port number;\n" +
			"'grid ls RUN' shows the mapping, kept in /run/grid/RUN/state.json. The run stays up after\n" +
			"grid exits; remove it with 'grid down RUN'. Interrupting 'grid up' (Ctrl-C, SIGTERM) or any\n" +
			"error rolls back what was built. Needs root.\n\n" +
			"--switches also starts the switches, grid switch or real bmv2 (a simple_switch_grpc per switch),\n" +
			"on their ports with --program loaded over P4Runtime (at 127.0.0.1:9559 in each switch's\n" +
			"namespace; tables empty) and leaves them running: 'grid down' stops them.\n\n" +
			"Example:\n  sudo grid up topologies/fattree-k4.yaml --name ft4\n  sudo grid exec ft4 h1 -- ip addr\n  sudo grid down ft4\n" +
			"  sudo grid up topologies/testbed.yaml --switches bmv2",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Aliases: []string{"n"}, Usage: "run name, the prefix of its namespaces (default: the file name without extension)"},
			&cli.IntFlag{Name: "workers", Usage: "goroutines building in parallel", DefaultText: "2 per CPU"},
			&cli.StringFlag{Name: "switches", Usage: "also start the switches: grid (grid switch) or bmv2 (simple_switch_grpc), loaded with --program"},
			&cli.StringFlag{Name: "program", Value: "p4/aggregator/aggregator.p4", Usage: "the P4 `FILE` --switches loads (the default is in the grid tree)"},
			&cli.StringFlag{Name: "compiler", Value: compilerGrid, Usage: "--program's compiler: grid (grid p4c) or p4c (p4c-bm2-ss on PATH)"},
		},
		Action: func(c *cli.Context) error {
			args, err := positionalArgs(c)
			if err != nil {
				return cli.Exit("grid up: "+err.Error(), 2)
			}
			if len(args) != 1 {
				return cli.Exit("grid up: give exactly one topology file (see 'grid up --help')", 2)
			}
			if n := c.Int("workers"); n < 0 {
				return cli.Exit(fmt.Sprintf("grid up: --workers %d: want a positive count (0 for 2 per CPU)", n), 2)
			}
			if name := c.String("name"); name != "" {
				if err := fabric.CheckRunName(name); err != nil {
					return cli.Exit("grid up: --name: "+err.Error(), 2)
				}
			}
			if err := checkSwitchFlags(c); err != nil {
				return cli.Exit("grid up: "+err.Error(), 2)
			}
			t, err := topo.Load(args[0])
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			var prog *p4c.Result
			if c.IsSet("switches") {
				if prog, err = compileAggregator(ctx, c.String("compiler"), pathFlag(c, "program"), aggregator.Build{}); err != nil {
					return err
				}
			}
			began := time.Now()
			st, err := fabric.Up(ctx, t, fabric.Options{Name: c.String("name"), Workers: c.Int("workers")})
			if err != nil {
				if errors.Is(err, context.Canceled) {
					return fmt.Errorf("interrupted: everything built was removed")
				}
				return err
			}
			hosts, switches := st.Count()
			fmt.Fprintf(c.App.Writer, "run %s up: %d hosts, %d switches, %d links in %v (namespaces %s-*)\n",
				st.Run, hosts, switches, len(st.Links), time.Since(began).Round(time.Millisecond), st.Run)
			if prog != nil {
				// Detached: the switches outlive this process, and 'grid
				// down' stops them (they are in the run's state).
				ctl, err := controller.Start(ctx, st, controller.Options{Backend: runBackend(c.String("switches")), Program: prog, Detach: true})
				if err == nil {
					err = ctl.Close()
				}
				if err != nil {
					return errors.Join(err, fabric.Down(st.Run))
				}
				fmt.Fprintf(c.App.Writer, "switches: %d %s loaded with %s (P4Runtime at %s in each switch's namespace)\n",
					switches, switchDescription[c.String("switches")], prog.Name, controller.P4RuntimeAddr)
			}
			fmt.Fprintf(c.App.Writer, "next: grid ls %s; grid exec %s NODE -- CMD; grid down %s\n", st.Run, st.Run, st.Run)
			return nil
		},
	})

	register(&cli.Command{
		Name:      "down",
		Usage:     "remove runs: their recorded processes, namespaces, links and state",
		ArgsUsage: "RUN...",
		Description: "Stops the processes recorded in each run's state (SIGTERM, then SIGKILL after 2 s), deletes\n" +
			"its namespaces (which removes their interfaces and qdiscs) and its state in /run/grid.\n\n" +
			"Example:\n  sudo grid down ft4",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.Exit("grid down: name the runs to remove (see 'grid ls')", 2)
			}
			var errs []error
			for _, run := range c.Args().Slice() {
				if err := fabric.Down(run); err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(c.App.Writer, "run %s down\n", run)
			}
			return errors.Join(errs...)
		},
	})

	register(&cli.Command{
		Name:      "clean",
		Usage:     "remove every leftover of grid runs, including crashed and half-built ones",
		ArgsUsage: "[RUN-PATTERN...]",
		Description: "Removes all runs (or those whose names match the shell patterns) whatever state they are in:\n" +
			"built, half built by a killed 'grid up', left by a killed 'grid run', or half torn down. It\n" +
			"does not trust the run's state file alone: it finds the run's namespaces (RUN-*) and the\n" +
			"processes inside them in the kernel and its temporary folders (/tmp/grid-run-RUN.*) on disk,\n" +
			"so a run whose state.json is missing or corrupt is removed too, and a name without wildcards\n" +
			"finds a run whose state directory is gone. For each run it prints what it stopped and removed,\n" +
			"and what it could not (then it exits 1 and keeps the state for a retry). Without patterns it\n" +
			"also deletes interfaces named like grid's from the root namespace and the temporary folders of\n" +
			"runs that are gone. Runs a live 'grid up' is still building are skipped.\n\n" +
			"Example:\n  sudo grid clean\n  sudo grid clean 'ft*'",
		Action: func(c *cli.Context) error {
			rep, err := fabric.Clean(c.Args().Slice()...)
			if rep != nil {
				writeCleanReport(c.App.Writer, rep)
			}
			return err
		},
	})

	register(&cli.Command{
		Name:      "ls",
		Usage:     "list runs, or the nodes and interfaces of one run",
		ArgsUsage: "[RUN]",
		Description: "Without arguments lists every run with its status and size. With a run name lists its\n" +
			"nodes, their namespaces and interfaces: name, port (the P4 port on switches), MAC, address\n" +
			"and the peer at the other end.\n\n" +
			"Example:\n  grid ls\n  grid ls ft4",
		Action: func(c *cli.Context) error {
			switch c.NArg() {
			case 0:
				return listRuns(c)
			case 1:
				st, err := fabric.LoadState(c.Args().First())
				if err != nil {
					return err
				}
				return listNodes(c, st)
			default:
				return cli.Exit("grid ls: give at most one run", 2)
			}
		},
	})

	register(&cli.Command{
		Name:      "exec",
		Usage:     "run a command inside a node's namespace (Mininet's 'h1 ping h2')",
		ArgsUsage: "RUN NODE -- COMMAND [ARG...]",
		Description: "Replaces grid with COMMAND running in the network namespace of NODE (a host or a switch),\n" +
			"with /sys showing that namespace, like 'ip netns exec'. Standard input, output and error\n" +
			"and the exit status are the command's. The process is recorded in the run's state, so\n" +
			"'grid down' stops it if it still runs. Switch namespaces forward nothing by themselves:\n" +
			"hosts reach each other (ping) once a switch back end runs on the switches' ports.\n\n" +
			"Example:\n  sudo grid exec ft4 h1 -- ip -br addr\n  sudo grid exec ft4 e1 -- tcpdump -eni any   # frames reaching switch e1's ports",
		SkipFlagParsing: true,
		HideHelpCommand: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
				return cli.ShowCommandHelp(c.Lineage()[1], "exec")
			}
			if len(args) >= 3 && args[2] == "--" {
				args = append(args[:2:2], args[3:]...)
			}
			if len(args) < 3 {
				return cli.Exit("grid exec: usage: grid exec RUN NODE -- COMMAND [ARG...]", 2)
			}
			return fabric.Exec(args[0], args[1], args[2:])
		},
	})
}

// writeCleanReport says run by run what clean removed and what it could not.
func writeCleanReport(w io.Writer, rep *fabric.CleanReport) {
	for _, r := range rep.Runs {
		if err := r.Err(); err != nil {
			fmt.Fprintf(w, "run %s NOT fully removed: %s; could not: %v\n", r.Run, r.Summary(), errors.Join(r.Failed...))
			continue
		}
		fmt.Fprintf(w, "removed run %s: %s\n", r.Run, r.Summary())
	}
	for _, r := range rep.Busy {
		fmt.Fprintf(w, "skipped run %s: a live 'grid up' is building it\n", r)
	}
	for _, i := range rep.Interfaces {
		fmt.Fprintf(w, "removed stray interface %s\n", i)
	}
	for _, d := range rep.TempDirs {
		fmt.Fprintf(w, "removed temporary folder %s (its run is gone)\n", d)
	}
	if len(rep.Runs)+len(rep.Busy)+len(rep.Interfaces)+len(rep.TempDirs) == 0 {
		fmt.Fprintln(w, "nothing to clean")
	}
}

func listRuns(c *cli.Context) error {
	runs, err := fabric.Runs()
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintln(c.App.Writer, "no runs")
		return nil
	}
	w := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "RUN\tSTATUS\tTOPOLOGY\tHOSTS\tSWITCHES\tLINKS\tPROCESSES\tCREATED")
	for _, run := range runs {
		st, err := fabric.LoadState(run)
		if err != nil {
			what := "no state"
			if !errors.Is(err, fabric.ErrNoRun) {
				what = "unreadable state"
			}
			left := ""
			if l, err := fabric.FindLeftovers(run); err == nil {
				left = fmt.Sprintf(": %d namespaces, %d processes, %d temporary folders left", len(l.Namespaces), len(l.Processes), len(l.TempDirs))
			}
			fmt.Fprintf(w, "%s\t%s%s (remove with 'grid clean %s')\t\t\t\t\t\t\n", run, what, left, run)
			continue
		}
		hosts, switches := st.Count()
		alive := 0
		for _, p := range st.Processes {
			if p.Alive() {
				alive++
			}
		}
		src := st.TopologyFile
		if src == "" {
			src = st.TopologyName
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", st.Run, st.Describe(), src, hosts, switches, len(st.Links),
			alive, st.Created.Local().Format(time.DateTime))
	}
	return w.Flush()
}

// summarizeRun is listNodes in a few lines, for a fabric of hundreds of
// nodes: how many of each, and where the whole list is.
func summarizeRun(w io.Writer, st *fabric.State) {
	hosts, switches := st.Count()
	fmt.Fprintf(w, "run %s (%s), topology %s, interface tag %s: %d hosts, %d switches, %d links (every node and interface: --nodes, or grid ls %s)\n",
		st.Run, st.Describe(), st.TopologyName, st.Tag, hosts, switches, len(st.Links), st.Run)
	if pending := st.Emulation.Pending; len(pending) > 0 {
		fmt.Fprintf(w, "delay and loss of %d link(s) emulated by the switches (netem unavailable: %s)\n",
			len(pending), strings.TrimSpace(st.Emulation.NetemError))
	}
}

func listNodes(c *cli.Context, st *fabric.State) error {
	fmt.Fprintf(c.App.Writer, "run %s (%s), topology %s, interface tag %s\n", st.Run, st.Describe(), st.TopologyName, st.Tag)
	w := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tKIND\tNETNS\tINTERFACE\tPORT\tMAC\tADDRESS\tRATE\tPEER")
	for _, n := range st.Nodes {
		if len(n.Interfaces) == 0 {
			fmt.Fprintf(w, "%s\t%s\t%s\t\t\t\t\t\t\n", n.Name, n.Kind, n.Namespace)
		}
		for i, ifc := range n.Interfaces {
			name, kind, ns := n.Name, string(n.Kind), n.Namespace
			if i > 0 {
				name, kind, ns = "", "", ""
			}
			rate := "-"
			if ifc.RateBits > 0 {
				rate = topo.Bandwidth(ifc.RateBits).String()
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", name, kind, ns, ifc.Name, ifc.Port, ifc.MAC, ifc.IP, rate, st.EndpointString(ifc.Peer))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, p := range st.Processes {
		if p.Alive() {
			fmt.Fprintf(c.App.Writer, "process %d (%s) in %s\n", p.PID, p.Role, p.Node)
		}
	}
	if pending := st.Emulation.Pending; len(pending) > 0 {
		fmt.Fprintf(c.App.Writer, "delay and loss NOT applied on %d link(s), for the switch back end to emulate (netem unavailable: %s):\n",
			len(pending), strings.TrimSpace(st.Emulation.NetemError))
		for _, l := range pending {
			fmt.Fprintf(c.App.Writer, "  %s--%s  delay %v  loss %g%%\n", st.EndpointString(l.A), st.EndpointString(l.B), l.Delay, l.Loss)
		}
	}
	return nil
}
