package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/lab"
	"github.com/grid-ina/grid/harness/p4rt/client"
)

func init() {
	register(&cli.Command{
		Name:      "lab",
		Usage:     "run a teaching exercise in p4lang/tutorials' folder format (what 'make run' does there), without a VM",
		ArgsUsage: "EXERCISE_DIR",
		Description: "lab runs the exercise in EXERCISE_DIR as the tutorials' 'make run' does, with grid in place of\n" +
			"p4c, Mininet and bmv2: it compiles every .p4 file into build/ (NAME.json, NAME.p4.p4info.txtpb),\n" +
			"builds the topology of the Makefile's TOPO (default topology.json) as network namespaces (hosts\n" +
			"with the file's address and MAC, ARP on, then their commands), starts a grid switch per switch\n" +
			"(the Nth of the file has device id N-1 and P4Runtime on 127.0.0.1:50051+N-1, reachable from\n" +
			"here; logs/sN.log, pcaps/sN-ethP_in.pcap and _out.pcap as bmv2 names them) and programs each\n" +
			"from its runtime_json (logs/sN-p4runtime-requests.txt) and cli_input (logs/sN_cli_output.log).\n" +
			"Link latency is applied by the switches to what they send (both ways between switches, towards the\n" +
			"host on a host's link: the kernel here has no netem); bandwidth by tbf and each port's egress\n" +
			"queue. --backend bmv2 runs simple_switch_grpc (on PATH) in each switch's namespace instead, reached\n" +
			"from here through forwarders at the same addresses (and simple_switch_CLI at 9090+N), cli_input\n" +
			"through simple_switch_CLI as the tutorials do; bmv2 applies no link latency.\n\n" +
			"The lab keeps running after the command returns; from the exercise folder:\n" +
			"   grid lab shell h1                  a shell on h1 (Mininet's 'xterm h1')\n" +
			"   grid lab exec h1 -- ping -c 1 h2   Mininet's 'h1 ping -c 1 h2'\n" +
			"   grid lab pingall                   Mininet's 'pingall'\n" +
			"   grid cli --thrift-port 9090        simple_switch_CLI's commands for the first switch\n" +
			"   grid lab stop                      remove it all\n\n" +
			"Example:\n   cd tutorials/exercises/basic && cp solution/basic.p4 . && sudo grid lab .",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "run `NAME` (default: lab- and the folder's name)"},
			&cli.IntFlag{Name: "grpc-port", Value: lab.DefaultGRPCBasePort, Usage: "P4Runtime `PORT` of the first switch; the Nth has PORT+N-1"},
			&cli.StringFlag{Name: "program", Usage: "run `FILE.p4` (e.g. solution/NAME.p4, relative to EXERCISE_DIR) in place of the folder's program of the same name"},
			&cli.StringFlag{Name: "compiler", Value: lab.CompilerGrid, Usage: "`COMPILER` of the programs: grid (grid's own) or p4c (p4c-bm2-ss on PATH, as the tutorials' Makefile)"},
			&cli.StringFlag{Name: "backend", Value: lab.BackendGrid, Usage: "`BACKEND` of the switches: grid (grid switch) or bmv2 (simple_switch_grpc on PATH, reached through forwarders from here; no link latency)"},
		},
		Action: runLab,
		Subcommands: []*cli.Command{
			{
				Name:      "check",
				Usage:     "check a student's work on one of grid's own labs (p4/labs): its packet tests and plan checks",
				ArgsUsage: "[LAB_DIR]",
				Description: "check runs the lab's check.json: the STF packet tests of its tests/ folder on the lab's program\n" +
					"(the Makefile's DEFAULT_PROG, or --program) on grid's engine, and for the solver lab the routing\n" +
					"plan of its topology. It prints PASS or FAIL per check, with what went wrong, and exits 1\n" +
					"unless every check passes. No root is needed.\n\n" +
					"Example:\n   grid lab check p4/labs/1-forwarding\n   grid lab check p4/labs/1-forwarding --program p4/labs/1-forwarding/solution/forwarding.p4",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "program", Usage: "check `FILE.p4` instead of the lab's program"},
					&cli.StringFlag{Name: "topology", Usage: "check the plan of topology `FILE` instead of the lab's"},
				},
				Action: func(c *cli.Context) error {
					args, err := positionalArgs(c)
					if err != nil || len(args) > 1 {
						return cli.Exit("grid lab check: at most one LAB_DIR (see grid lab check --help)", 2)
					}
					dir := "."
					if len(args) == 1 {
						dir = args[0]
					}
					ok, err := lab.Check(c.Context, dir, c.String("program"), c.String("topology"), c.App.Writer)
					if err != nil {
						return cli.Exit(fmt.Sprintf("grid lab check: %v", err), 1)
					}
					if !ok {
						return cli.Exit("", 1)
					}
					return nil
				},
			},
			{
				Name:      "shell",
				Usage:     "open a shell on a host of the running lab",
				ArgsUsage: "HOST",
				Flags:     []cli.Flag{&cli.StringFlag{Name: "name", Usage: "run `NAME` (default: the lab of the current folder)"}},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return cli.Exit("grid lab shell: want one HOST (see grid lab shell --help)", 2)
					}
					run, err := labRun(c)
					if err != nil {
						return err
					}
					if err := lab.Shell(run, c.Args().First()); err != nil {
						return cli.Exit(fmt.Sprintf("grid lab shell: %v", err), 1)
					}
					return nil
				},
			},
			{
				Name:      "exec",
				Usage:     "run a command on a host of the running lab, host names standing for their addresses (Mininet's 'h1 ping h2')",
				ArgsUsage: "HOST -- COMMAND [ARG...]",
				Flags:     []cli.Flag{&cli.StringFlag{Name: "name", Usage: "run `NAME` (default: the lab of the current folder)"}},
				Action: func(c *cli.Context) error {
					args, err := positionalArgs(c)
					if err != nil || len(args) < 2 {
						return cli.Exit("grid lab exec: want HOST -- COMMAND (see grid lab exec --help)", 2)
					}
					l, err := runningLab(c)
					if err != nil {
						return err
					}
					if err := l.Exec(args[0], args[1:]); err != nil {
						return cli.Exit(fmt.Sprintf("grid lab exec: %v", err), 1)
					}
					return nil
				},
			},
			{
				Name:      "forward",
				Usage:     "relay TCP connections from here to a switch's namespace (how grid lab --backend bmv2 reaches bmv2)",
				ArgsUsage: "LISTEN_ADDR TARGET_ADDR",
				Hidden:    true,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "name", Required: true, Usage: "run `NAME`"},
					&cli.StringFlag{Name: "node", Required: true, Usage: "`SWITCH` whose namespace TARGET_ADDR is in"},
				},
				Action: func(c *cli.Context) error {
					args, err := positionalArgs(c)
					if err != nil || len(args) != 2 {
						return cli.Exit("grid lab forward: want LISTEN_ADDR TARGET_ADDR", 2)
					}
					ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
					defer stop()
					if err := lab.Forward(ctx, c.String("name"), c.String("node"), args[0], args[1]); err != nil {
						return cli.Exit(fmt.Sprintf("grid lab forward: %v", err), 1)
					}
					return nil
				},
			},
			{
				Name:  "tmux",
				Usage: "open a tmux session with a shell per host of the running lab (Mininet's 'xterm h1 h2 ...'), then 'tmux attach -t RUN'",
				Flags: []cli.Flag{&cli.StringFlag{Name: "name", Usage: "run `NAME` (default: the lab of the current folder)"}},
				Action: func(c *cli.Context) error {
					l, err := runningLab(c)
					if err != nil {
						return err
					}
					if err := l.Tmux(); err != nil {
						return cli.Exit(fmt.Sprintf("grid lab tmux: %v", err), 1)
					}
					fmt.Fprintf(c.App.Writer, "tmux session %s: a window per host; attach with: tmux attach -t %s\n", l.Run, l.Run)
					return nil
				},
			},
			{
				Name:  "pingall",
				Usage: "ping every host of the running lab from every other, as Mininet's pingall",
				Flags: []cli.Flag{&cli.StringFlag{Name: "name", Usage: "run `NAME` (default: the lab of the current folder)"}},
				Action: func(c *cli.Context) error {
					l, err := runningLab(c)
					if err != nil {
						return err
					}
					received, sent, err := l.PingAll(c.App.Writer)
					if err != nil {
						return cli.Exit(fmt.Sprintf("grid lab pingall: %v", err), 1)
					}
					if received < sent {
						return cli.Exit("", 1)
					}
					return nil
				},
			},
			{
				Name:      "stop",
				Usage:     "stop the running lab: its switches and namespaces (Mininet's exit, 'make stop')",
				ArgsUsage: "[EXERCISE_DIR]",
				Flags:     []cli.Flag{&cli.StringFlag{Name: "name", Usage: "run `NAME` (default: the lab of EXERCISE_DIR or the current folder)"}},
				Action: func(c *cli.Context) error {
					run := c.String("name")
					if run == "" {
						dir := "."
						if c.NArg() > 0 {
							dir = c.Args().First()
						}
						run = lab.RunName(dir)
					}
					if err := lab.Stop(run); err != nil {
						return cli.Exit(fmt.Sprintf("grid lab stop: %v", err), 1)
					}
					fmt.Fprintf(c.App.Writer, "lab %s stopped\n", run)
					return nil
				},
			},
		},
	})
	register(&cli.Command{
		Name:      "cli",
		Usage:     "simple_switch_CLI's commands (table_add, counter_read, mc_*, ...) for a switch, over P4Runtime",
		ArgsUsage: "[COMMANDS_FILE]",
		Description: "cli runs simple_switch_CLI's commands on a switch through its P4Runtime server (grid switch or\n" +
			"simple_switch_grpc), reading them from COMMANDS_FILE or standard input, one a line, and prints\n" +
			"what simple_switch_CLI prints. --thrift-port P names the switch as simple_switch_CLI does: in a\n" +
			"running lab, the switch bmv2 would have given that Thrift port (9090 the first, 9091 the second);\n" +
			"otherwise --grpc-addr and --device-id. The switch must have a P4Runtime pipeline (a lab sets one).\n\n" +
			"Commands: table_add, table_set_default, table_delete, table_modify, table_clear, mirroring_add,\n" +
			"mc_mgrp_create, mc_mgrp_destroy, mc_node_create, mc_node_associate, mc_node_dissociate,\n" +
			"counter_read, counter_reset, register_read, register_write, register_reset, meter_set_rates,\n" +
			"meter_array_set_rates. Entry handles live as long as the command.\n\n" +
			"Example:\n   echo 'counter_read MyIngress.rx_port 1' | grid cli --thrift-port 9090",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "thrift-port", Usage: "the switch whose bmv2 Thrift `PORT` this would be, in the running lab"},
			&cli.StringFlag{Name: "name", Usage: "the lab's run `NAME` for --thrift-port (default: the lab of the current folder)"},
			&cli.StringFlag{Name: "grpc-addr", Value: "127.0.0.1:50051", Usage: "P4Runtime server `HOST:PORT`"},
			&cli.Uint64Flag{Name: "device-id", Usage: "P4Runtime device `ID`"},
			&cli.Uint64Flag{Name: "election-id", Value: 10, Usage: "election `ID` (must differ from other controllers')"},
		},
		Action: runCLI,
	})
}

// labRun is the run of the lab the command names (--name) or of the
// current folder.
func labRun(c *cli.Context) (string, error) {
	if run := c.String("name"); run != "" {
		return run, nil
	}
	return lab.RunName("."), nil
}

// runningLab is the running lab the command names.
func runningLab(c *cli.Context) (*lab.Lab, error) {
	run, _ := labRun(c)
	l, err := lab.LoadLab(run)
	if err != nil {
		return nil, cli.Exit(fmt.Sprintf("grid lab %s: %v", c.Command.Name, err), 1)
	}
	return l, nil
}

func runLab(c *cli.Context) error {
	args, err := positionalArgs(c)
	if err != nil || len(args) != 1 {
		return cli.Exit("grid lab: want one EXERCISE_DIR (see grid lab --help)", 2)
	}
	ex, err := lab.Load(args[0])
	if err == nil && c.IsSet("program") {
		err = ex.UseProgram(c.String("program"))
	}
	if err != nil {
		return cli.Exit(fmt.Sprintf("grid lab: %v", err), 1)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := lab.Start(ctx, ex, lab.Options{Name: c.String("name"), GRPCBasePort: c.Int("grpc-port"), Out: c.App.Writer,
		Backend: c.String("backend"), Compiler: c.String("compiler")}); err != nil {
		return cli.Exit(fmt.Sprintf("grid lab: %v", err), 1)
	}
	return nil
}

func runCLI(c *cli.Context) error {
	args, err := positionalArgs(c)
	if err != nil || len(args) > 1 {
		return cli.Exit("grid cli: at most one COMMANDS_FILE (see grid cli --help)", 2)
	}
	addr, device := c.String("grpc-addr"), c.Uint64("device-id")
	if c.IsSet("thrift-port") {
		run, _ := labRun(c)
		l, err := lab.LoadLab(run)
		if err != nil {
			return cli.Exit(fmt.Sprintf("grid cli: --thrift-port %d: %v", c.Int("thrift-port"), err), 1)
		}
		found := false
		for _, sp := range l.Switches {
			if sp.ThriftPort == c.Int("thrift-port") {
				addr, device, found = sp.GRPCAddr, sp.DeviceID, true
			}
		}
		if !found {
			return cli.Exit(fmt.Sprintf("grid cli: --thrift-port %d: no switch of lab %s has it (the first has %d)", c.Int("thrift-port"), run, lab.DefaultThriftBasePort), 1)
		}
	}
	ctx, cancel := context.WithTimeout(c.Context, 10*time.Second)
	cl, err := client.Dial(ctx, addr, device, c.Uint64("election-id"))
	cancel()
	if err != nil {
		return cli.Exit(fmt.Sprintf("grid cli: %v", err), 1)
	}
	defer cl.Close()
	s, err := lab.NewSession(c.Context, cl, c.App.Writer)
	if err != nil {
		return cli.Exit(fmt.Sprintf("grid cli: %s device %s: %v", addr, strconv.FormatUint(device, 10), err), 1)
	}
	in, name := os.Stdin, "standard input"
	if len(args) == 1 {
		f, err := os.Open(args[0])
		if err != nil {
			return cli.Exit(fmt.Sprintf("grid cli: %v", err), 1)
		}
		defer f.Close()
		in, name = f, args[0]
	}
	if err := s.Run(c.Context, in, name); err != nil {
		return cli.Exit(fmt.Sprintf("grid cli: %v", err), 1)
	}
	return nil
}
