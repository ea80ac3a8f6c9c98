package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/dataplane"
)

func init() {
	register(&cli.Command{
		Name:      "switch",
		Usage:     "run grid's embedded P4 switch, a drop-in for bmv2's simple_switch_grpc",
		ArgsUsage: "[PROGRAM.json | --no-p4] [-- --grpc-server-addr HOST:PORT --cpu-port N]",
		Description: "switch runs a v1model P4 switch on network interfaces (veth ends) of the namespace it is\n" +
			"started in, controlled over P4Runtime, with simple_switch_grpc's command line: -i PORT@INTERFACE\n" +
			"attaches a switch port to an interface, and the P4Runtime server listens on --grpc-server-addr\n" +
			"(default " + dataplane.DefaultGRPCAddr + ") given after '--', as bmv2's target options. A controller installs the\n" +
			"pipeline with SetForwardingPipelineConfig (P4Info plus the bmv2 JSON); PROGRAM.json, if given,\n" +
			"runs with empty tables until then, and with --no-p4 every frame is dropped until then. Frames\n" +
			"the program sends to --cpu-port go to the controller as PacketIn; PacketOut enters there.\n" +
			"--thrift-port is accepted, so bmv2's command line works unchanged, and ignored with a notice:\n" +
			"there is no Thrift server (simple_switch_CLI cannot connect); registers are served over P4Runtime.\n\n" +
			"Beyond bmv2, --delay and --loss impair what a port sends (the kernel's netem is not needed):\n" +
			"each frame waits DURATION before it leaves, or is dropped with probability FRACTION (drawn\n" +
			"from --loss-seed, so runs repeat). --pcap writes INTERFACE_in.pcap and INTERFACE_out.pcap per\n" +
			"port, as bmv2 does. Once listening, one line on standard output says where:\n\n" +
			"   grid switch: listening on 127.0.0.1:9559, ports 0@sw0 1@sw1\n\n" +
			"SIGINT or SIGTERM stops the switch; it logs each port's counters as it exits, and warns of\n" +
			"frames the program sent to a port number without an interface (dropped), per port number.\n\n" +
			"Example (inside the switch's namespace, e.g. via 'ip netns exec' or 'grid exec'):\n" +
			"   grid switch --device-id 1 -i 0@sw0 -i 1@sw1 --delay 1=2ms --loss 1=0.01 --no-p4 -- \\\n" +
			"       --grpc-server-addr 127.0.0.1:9559 --cpu-port 64",
		Flags: []cli.Flag{
			&cli.Uint64Flag{Name: "device-id", Usage: "P4Runtime device `ID` of the switch"},
			&cli.IntFlag{Name: "thrift-port", Usage: "simple_switch_grpc's Thrift server `PORT`: accepted, so bmv2's command line works, and ignored (no Thrift server; registers are served over P4Runtime)", DefaultText: "none"},
			&cli.StringSliceFlag{Name: "interface", Aliases: []string{"i"}, Usage: "attach switch port `PORT@INTERFACE` (repeatable)"},
			&cli.BoolFlag{Name: "no-p4", Usage: "start without a program: frames are dropped until a controller sets one"},
			&cli.BoolFlag{Name: "log-console", Usage: "log every frame and the per-packet trace of the program (parser, tables, actions) on standard error"},
			&cli.StringFlag{Name: "pcap", Usage: "write each port's received and sent frames to pcap files in `DIR`"},
			&cli.StringSliceFlag{Name: "delay", Usage: "hold every frame port sends for a while: `PORT=DURATION`, e.g. 1=5ms (repeatable)"},
			&cli.StringSliceFlag{Name: "loss", Usage: "drop frames port sends with a probability: `PORT=FRACTION`, e.g. 1=0.01 (repeatable)"},
			&cli.Uint64Flag{Name: "loss-seed", Value: 1, Usage: "seed `N` of the generators --loss draws from"},
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return cli.Exit(fmt.Sprintf("grid switch: %v (see grid switch --help)", err), 2)
		},
		Action: runSwitch,
	})
}

func runSwitch(c *cli.Context) error {
	usage := func(format string, args ...any) error {
		return cli.Exit(fmt.Sprintf("grid switch: "+format+" (see grid switch --help)", args...), 2)
	}
	program, target, err := switchArgs(c)
	if err != nil {
		return usage("%v", err)
	}
	cfg := dataplane.SwitchConfig{DeviceID: c.Uint64("device-id"), PcapDir: c.String("pcap"), LossSeed: c.Uint64("loss-seed")}
	if strings.HasPrefix(cfg.PcapDir, "-") {
		// bmv2 takes a bare --pcap for the current directory; here the next
		// flag would become the directory.
		return usage("--pcap %s: want a directory (for the current one, --pcap .)", cfg.PcapDir)
	}
	if cfg.Ports, err = switchPorts(c.StringSlice("interface"), c.StringSlice("delay"), c.StringSlice("loss")); err != nil {
		return usage("%v", err)
	}
	if cfg.GRPCAddr, cfg.CPUPort, err = targetOptions(target); err != nil {
		return usage("after '--': %v", err)
	}
	for _, p := range cfg.Ports {
		if cfg.CPUPort != 0 && p.Port == cfg.CPUPort {
			return usage("port %d is the CPU port (--cpu-port) and cannot have an interface (-i %s)", p.Port, p)
		}
	}
	switch {
	case program != "" && c.Bool("no-p4"):
		return usage("give PROGRAM.json or --no-p4, not both")
	case program == "" && !c.Bool("no-p4"):
		return usage("give PROGRAM.json or --no-p4, as simple_switch_grpc wants one of them")
	case program != "":
		if cfg.Program, err = os.ReadFile(program); err != nil {
			return cli.Exit(fmt.Sprintf("grid switch: %v", err), 1)
		}
	}
	if port := c.Int("thrift-port"); c.IsSet("thrift-port") && (port <= 0 || port > 65535) {
		return usage("--thrift-port %d: not a TCP port", port)
	}
	cfg.Logger = slog.Default()
	if c.Bool("log-console") {
		cfg.Logger = slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
		cfg.Trace = c.App.ErrWriter
	}
	if c.IsSet("thrift-port") {
		cfg.Logger.Info("--thrift-port ignored: grid switch has no Thrift server; registers are read and written over P4Runtime",
			"thrift_port", c.Int("thrift-port"))
	}

	sw, err := dataplane.NewSwitch(cfg)
	if err != nil {
		if program != "" {
			err = fmt.Errorf("%s: %w", program, err)
		}
		return cli.Exit(fmt.Sprintf("grid switch: %v", err), 1)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(c.App.Writer, "grid switch: listening on %s, ports %s\n", sw.Addr(), portList(sw.Ports()))
	err = sw.Serve(ctx)
	logCounters(cfg.Logger, sw.Stats())
	if err != nil {
		return cli.Exit(fmt.Sprintf("grid switch: %v", err), 1)
	}
	return nil
}

// switchArgs splits the arguments into the program (if any) and the target
// options after "--". The flag parser drops a "--" that directly follows
// the flags, so arguments that start with a dash can only have come after
// one.
func switchArgs(c *cli.Context) (program string, target []string, err error) {
	args := c.Args().Slice()
	if len(args) > 0 && strings.HasPrefix(args[0], "-") {
		return "", args, nil
	}
	if i := slices.Index(args, "--"); i >= 0 {
		target = args[i+1:]
	}
	all, err := positionalArgs(c)
	if err != nil {
		return "", nil, err
	}
	positional := all[:len(all)-len(target)]
	switch len(positional) {
	case 0:
		return "", target, nil
	case 1:
		return positional[0], target, nil
	}
	return "", nil, fmt.Errorf("one program at most, not %s", strings.Join(positional, " "))
}

// targetOptions parses simple_switch_grpc's target options, those after
// "--", that grid's switch has.
func targetOptions(args []string) (addr string, cpuPort uint32, err error) {
	set := flag.NewFlagSet("target options", flag.ContinueOnError)
	set.SetOutput(io.Discard)
	set.StringVar(&addr, "grpc-server-addr", dataplane.DefaultGRPCAddr, "")
	port := set.Uint("cpu-port", 0, "")
	if err := set.Parse(args); err != nil {
		return "", 0, fmt.Errorf("%w (grid switch has --grpc-server-addr HOST:PORT and --cpu-port N)", err)
	}
	if set.NArg() > 0 {
		return "", 0, fmt.Errorf("unexpected %q", set.Arg(0))
	}
	if *port > 511 {
		return "", 0, fmt.Errorf("--cpu-port %d: v1model ports are 9 bits (at most 511)", *port)
	}
	cpuPortGiven := false
	set.Visit(func(f *flag.Flag) { cpuPortGiven = cpuPortGiven || f.Name == "cpu-port" })
	if cpuPortGiven && *port == 0 {
		// As simple_switch_grpc, which exits for it: no CPU port is
		// --cpu-port left out.
		return "", 0, errors.New("--cpu-port 0: 0 is not a valid value (leave --cpu-port out for no CPU port)")
	}
	return addr, uint32(*port), nil
}

// switchPorts builds the port specifications from -i PORT@INTERFACE,
// --delay PORT=DURATION and --loss PORT=FRACTION.
func switchPorts(ifaces, delays, losses []string) ([]dataplane.PortSpec, error) {
	var specs []dataplane.PortSpec
	index := map[uint32]int{}
	attached := map[string]bool{}
	for _, arg := range ifaces {
		num, iface, ok := strings.Cut(arg, "@")
		port, err := strconv.ParseUint(num, 10, 32)
		if !ok || iface == "" || err != nil {
			return nil, fmt.Errorf("-i %s: want PORT@INTERFACE, e.g. 0@sw0", arg)
		}
		if _, dup := index[uint32(port)]; dup {
			return nil, fmt.Errorf("-i %s: port %d is given twice", arg, port)
		}
		if attached[iface] {
			return nil, fmt.Errorf("-i %s: interface %s is given twice", arg, iface)
		}
		attached[iface] = true
		index[uint32(port)] = len(specs)
		specs = append(specs, dataplane.PortSpec{Port: uint32(port), Interface: iface})
	}
	// impair applies one --delay or --loss argument to its port.
	impair := func(flagName, arg string, seen map[uint32]bool, set func(*dataplane.PortSpec, string) error) error {
		num, value, ok := strings.Cut(arg, "=")
		port, err := strconv.ParseUint(num, 10, 32)
		if !ok || err != nil {
			return fmt.Errorf("--%s %s: want PORT=VALUE", flagName, arg)
		}
		i, known := index[uint32(port)]
		switch {
		case !known:
			return fmt.Errorf("--%s %s: port %d has no interface (-i %d@INTERFACE)", flagName, arg, port, port)
		case seen[uint32(port)]:
			return fmt.Errorf("--%s %s: port %d is given twice", flagName, arg, port)
		}
		seen[uint32(port)] = true
		if err := set(&specs[i], value); err != nil {
			return fmt.Errorf("--%s %s: %w", flagName, arg, err)
		}
		return nil
	}
	seen := map[uint32]bool{}
	for _, arg := range delays {
		err := impair("delay", arg, seen, func(s *dataplane.PortSpec, v string) error {
			d, err := time.ParseDuration(v)
			if err == nil && d < 0 {
				err = fmt.Errorf("%v is negative", d)
			}
			s.Delay = d
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	seen = map[uint32]bool{}
	for _, arg := range losses {
		err := impair("loss", arg, seen, func(s *dataplane.PortSpec, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f >= 0 && f <= 1) {
				return fmt.Errorf("%q is not a fraction between 0 and 1", v)
			}
			s.Loss = f
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return specs, nil
}

func portList(specs []dataplane.PortSpec) string {
	if len(specs) == 0 {
		return "none"
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.String())
	}
	return strings.Join(names, " ")
}

// logCounters logs each port's counters, and the frames no port took: in
// total and, at warning level, by port number (which the STF driver of
// harness/p4test reads to fail a test whose packets went to a port that has
// no veth).
func logCounters(log *slog.Logger, st dataplane.Stats) {
	for _, p := range st.Ports {
		log.Info("port counters", "port", p.PortSpec.String(), "rx_frames", p.RxFrames, "rx_bytes", p.RxBytes,
			"tx_frames", p.TxFrames, "tx_bytes", p.TxBytes, "loss_drops", p.LossDrops, "queue_drops", p.QueueDrops,
			"tx_errors", p.TxErrors, "rx_errors", p.RxErrors, "unsent_at_stop", p.UnsentAtStop)
	}
	if st.PipelineErrors+st.UnknownEgress > 0 {
		log.Info("pipeline counters", "errors", st.PipelineErrors, "to_ports_without_interface", st.UnknownEgress)
	}
	st.LogUnknownEgress(log)
}
