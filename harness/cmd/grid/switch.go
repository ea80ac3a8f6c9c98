package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/vishvananda/netns"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/topo"
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
			"The pipeline's p4_device_config may be the bmv2 JSON or, as PI accepts, a p4.tmp.P4DeviceConfig\n" +
			"wrapping it (p4lang/tutorials' P4Runtime library sends that).\n\n" +
			"bmv2's command line works unchanged, as courses' launchers write it: --log-console and --log-file\n" +
			"log every frame and, at -L trace or debug, the per-packet trace; --thrift-port, --nanolog, --log-flush,\n" +
			"--dump-packet-data, --debugger and --notifications-addr are accepted and noted once, as are the\n" +
			"target options --enable-swap, --load-modules and --dp-grpc-server-addr. There is no Thrift server\n" +
			"(simple_switch_CLI cannot connect; 'grid cli' speaks its commands over P4Runtime).\n\n" +
			"Each port has an egress queue, as simple_switch's: 64 packets (set_queue_depth), --priority-queues N\n" +
			"of them served by priority, draining at the port's --rate (the link's bits per second behind it)\n" +
			"and at most set_queue_rate packets per second ('grid cli'); without either a queue stays empty.\n" +
			"Programs see enq_qdepth, deq_qdepth, deq_timedelta and enq_timestamp as bmv2 fills them.\n\n" +
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
			&cli.StringFlag{Name: "log-file", Usage: "write what --log-console shows to `FILE` (appending), as bmv2 does"},
			&cli.StringFlag{Name: "log-level", Aliases: []string{"L"}, Value: "trace", Usage: "`LEVEL` of --log-console and --log-file: trace and debug include the per-packet trace; info, warn, error, off"},
			&cli.BoolFlag{Name: "log-flush", Usage: "bmv2's flush after every log message: accepted (grid switch always writes each line at once)"},
			&cli.StringFlag{Name: "nanolog", Usage: "bmv2's nanomsg event log `ADDR`: accepted and noted (no nanomsg here; events are in the --log-console and --log-file trace)"},
			&cli.IntFlag{Name: "dump-packet-data", Usage: "bmv2's packet bytes in log messages (`N` bytes): accepted and noted (see the frames with --pcap)"},
			&cli.BoolFlag{Name: "debugger", Usage: "bmv2's debugger: accepted and noted (there is none; use --log-console)"},
			&cli.StringFlag{Name: "debugger-addr", Usage: "bmv2's debugger `ADDR`: accepted and noted"},
			&cli.StringFlag{Name: "notifications-addr", Usage: "bmv2's nanomsg notifications `ADDR`: accepted and noted (P4Runtime clients get PacketIn on their stream)"},
			&cli.StringFlag{Name: "pcap", Usage: "write each port's received and sent frames to pcap files in `DIR`"},
			&cli.StringSliceFlag{Name: "delay", Usage: "hold every frame port sends for a while: `PORT=DURATION`, e.g. 1=5ms (repeatable)"},
			&cli.StringSliceFlag{Name: "loss", Usage: "drop frames port sends with a probability: `PORT=FRACTION`, e.g. 1=0.01 (repeatable)"},
			&cli.Uint64Flag{Name: "loss-seed", Value: 1, Usage: "seed `N` of the generators --loss draws from"},
			&cli.StringSliceFlag{Name: "rate", Usage: "the link rate behind a port, at which its egress queue drains: `PORT=RATE`, e.g. 1=512Kbps or 2=10Mbps (repeatable)"},
			&cli.BoolFlag{Name: "exclusive-ports", Usage: "the ports' interfaces carry this switch's frames only (a namespace holding nothing else, as grid's fabric): the namespace's IP stack is spared them, once packet sockets (the switch's, iftop's, tcpdump's) have seen them, by a tc ingress filter removed when the switch stops"},
			&cli.StringFlag{Name: "port-netns", Usage: "open the ports (-i) in the network namespace at `PATH` (e.g. /run/netns/NAME) while the P4Runtime server listens where grid switch runs, as Mininet's switches share the root namespace with their controllers"},
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
	cfg := dataplane.SwitchConfig{DeviceID: c.Uint64("device-id"), PcapDir: c.String("pcap"), LossSeed: c.Uint64("loss-seed"),
		Exclusive: c.Bool("exclusive-ports")}
	if strings.HasPrefix(cfg.PcapDir, "-") {
		// bmv2 takes a bare --pcap for the current directory; here the next
		// flag would become the directory.
		return usage("--pcap %s: want a directory (for the current one, --pcap .)", cfg.PcapDir)
	}
	if cfg.Ports, err = switchPorts(c.StringSlice("interface"), c.StringSlice("delay"), c.StringSlice("loss"), c.StringSlice("rate")); err != nil {
		return usage("%v", err)
	}
	opts, err := targetOptions(target)
	if err != nil {
		return usage("after '--': %v", err)
	}
	cfg.GRPCAddr, cfg.CPUPort, cfg.PriorityQueues = opts.grpcAddr, opts.cpuPort, int(opts.priorityQueues)
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
	logs, err := switchLogging(c)
	if err != nil {
		return usage("%v", err)
	}
	defer logs.close()
	cfg.Logger, cfg.Trace = logs.logger, logs.trace
	for _, n := range append(bmv2Notes(c), opts.notes...) {
		cfg.Logger.Info(n.msg, n.attrs...)
	}

	sw, err := newSwitchIn(c.String("port-netns"), cfg)
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
	sw.Stats().Log(cfg.Logger)
	if err != nil {
		return cli.Exit(fmt.Sprintf("grid switch: %v", err), 1)
	}
	return nil
}

// newSwitchIn makes the switch with its ports in the network namespace at
// nsPath ("" for the current one) and its P4Runtime server listening in the
// current one.
func newSwitchIn(nsPath string, cfg dataplane.SwitchConfig) (*dataplane.Switch, error) {
	if nsPath == "" {
		return dataplane.NewSwitch(cfg)
	}
	addr := cfg.GRPCAddr
	if addr == "" {
		addr = dataplane.DefaultGRPCAddr
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("P4Runtime server: %w", err)
	}
	cfg.Listener = lis
	var sw *dataplane.Switch
	err = inNetns(nsPath, func() error {
		var err error
		sw, err = dataplane.NewSwitch(cfg)
		return err
	})
	if err != nil && sw == nil {
		lis.Close() // NewSwitch closes it itself, but inNetns may fail first
	}
	return sw, err
}

// inNetns runs f on a locked OS thread inside the network namespace at
// nsPath. Sockets f opens stay in that namespace. A thread that cannot
// return to its namespace is left locked, so Go retires it.
func inNetns(nsPath string, f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		origin, err := netns.Get()
		if err != nil {
			done <- fmt.Errorf("--port-netns: %w", err)
			return
		}
		defer origin.Close()
		target, err := netns.GetFromPath(nsPath)
		if err != nil {
			done <- fmt.Errorf("--port-netns %s: %w", nsPath, err)
			return
		}
		defer target.Close()
		if err := netns.Set(target); err != nil {
			done <- fmt.Errorf("--port-netns %s: enter: %w", nsPath, err)
			return
		}
		err = f()
		if netns.Set(origin) == nil {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}

// note is a log line said once at start about an option grid switch
// accepts for bmv2's sake without doing what bmv2 does with it.
type note struct {
	msg   string
	attrs []any
}

// bmv2Notes are the notes for the bmv2 options given that mean nothing here.
func bmv2Notes(c *cli.Context) []note {
	var notes []note
	if c.IsSet("thrift-port") {
		notes = append(notes, note{"--thrift-port ignored: grid switch has no Thrift server; registers are read and written over P4Runtime",
			[]any{"thrift_port", c.Int("thrift-port")}})
	}
	for _, n := range []struct{ flag, why string }{
		{"nanolog", "no nanomsg event log; the events are in the --log-console and --log-file trace"},
		{"dump-packet-data", "packet bytes are not in the log; --pcap records every frame"},
		{"debugger", "there is no debugger; --log-console traces every packet"},
		{"debugger-addr", "there is no debugger"},
		{"notifications-addr", "no nanomsg notifications; P4Runtime clients get PacketIn on their stream"},
		{"log-flush", "every log line is written at once anyway"},
	} {
		if c.IsSet(n.flag) {
			notes = append(notes, note{"--" + n.flag + " ignored: " + n.why, []any{n.flag, c.Value(n.flag)}})
		}
	}
	return notes
}

// switchLogs are where grid switch logs: standard error at info level
// unless --log-console or --log-file ask for bmv2's log, at -L's level.
type switchLogs struct {
	logger *slog.Logger
	trace  io.Writer // the engine's per-packet trace; nil when off
	file   *os.File
}

func (l *switchLogs) close() {
	if l.file != nil {
		l.file.Close()
	}
}

// bmv2LogLevels maps bmv2's -L levels to slog's; trace and debug also turn
// on the per-packet trace.
var bmv2LogLevels = map[string]slog.Level{
	"trace": slog.LevelDebug, "debug": slog.LevelDebug, "info": slog.LevelInfo,
	"warn": slog.LevelWarn, "error": slog.LevelError, "off": slog.LevelError + 4,
}

func switchLogging(c *cli.Context) (*switchLogs, error) {
	level, ok := bmv2LogLevels[c.String("log-level")]
	if !ok {
		return nil, fmt.Errorf("--log-level %s: want trace, debug, info, warn, error or off", c.String("log-level"))
	}
	logs := &switchLogs{logger: slog.Default()}
	var outs []io.Writer
	if c.Bool("log-console") {
		outs = append(outs, c.App.ErrWriter)
	}
	if path := c.String("log-file"); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("--log-file: %w", err)
		}
		logs.file = f
		outs = append(outs, f)
	}
	if len(outs) == 0 {
		return logs, nil
	}
	w := io.MultiWriter(outs...)
	logs.logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	if level <= slog.LevelDebug {
		logs.trace = w
	}
	return logs, nil
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

// targets are simple_switch_grpc's target options, those after "--".
type targets struct {
	grpcAddr       string
	cpuPort        uint32
	priorityQueues uint
	notes          []note
}

// targetOptions parses simple_switch_grpc's target options. Those that mean
// nothing here are accepted and noted.
func targetOptions(args []string) (targets, error) {
	var t targets
	set := flag.NewFlagSet("target options", flag.ContinueOnError)
	set.SetOutput(io.Discard)
	set.StringVar(&t.grpcAddr, "grpc-server-addr", dataplane.DefaultGRPCAddr, "")
	port := set.Uint("cpu-port", 0, "")
	set.UintVar(&t.priorityQueues, "priority-queues", 1, "")
	dropPort := set.Uint("drop-port", 511, "")
	set.Bool("enable-swap", false, "")
	set.String("load-modules", "", "")
	set.String("dp-grpc-server-addr", "", "")
	if err := set.Parse(args); err != nil {
		return t, fmt.Errorf("%w (grid switch has --grpc-server-addr HOST:PORT, --cpu-port N, --priority-queues N, --drop-port N, --enable-swap, --load-modules and --dp-grpc-server-addr)", err)
	}
	if set.NArg() > 0 {
		return t, fmt.Errorf("unexpected %q", set.Arg(0))
	}
	if *port > 511 {
		return t, fmt.Errorf("--cpu-port %d: v1model ports are 9 bits (at most 511)", *port)
	}
	if t.priorityQueues < 1 || t.priorityQueues > 8 {
		return t, fmt.Errorf("--priority-queues %d: want 1 to 8, as simple_switch", t.priorityQueues)
	}
	given := map[string]string{}
	set.Visit(func(f *flag.Flag) { given[f.Name] = f.Value.String() })
	if _, ok := given["cpu-port"]; ok && *port == 0 {
		// As simple_switch_grpc, which exits for it: no CPU port is
		// --cpu-port left out.
		return t, errors.New("--cpu-port 0: 0 is not a valid value (leave --cpu-port out for no CPU port)")
	}
	t.cpuPort = uint32(*port)
	if *dropPort != 511 {
		return t, fmt.Errorf("--drop-port %d: grid switch drops on port 511, v1model's drop port, only", *dropPort)
	}
	for _, n := range []struct{ flag, why string }{
		{"enable-swap", "programs are swapped with SetForwardingPipelineConfig"},
		{"load-modules", "there are no extern modules to load"},
		{"dp-grpc-server-addr", "there is no data-plane gRPC service; ports are network interfaces"},
	} {
		if v, ok := given[n.flag]; ok {
			t.notes = append(t.notes, note{"--" + n.flag + " ignored: " + n.why, []any{n.flag, v}})
		}
	}
	return t, nil
}

// switchPorts builds the port specifications from -i PORT@INTERFACE,
// --delay PORT=DURATION and --loss PORT=FRACTION.
func switchPorts(ifaces, delays, losses, rates []string) ([]dataplane.PortSpec, error) {
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
	for _, arg := range rates {
		err := impair("rate", arg, seen, func(s *dataplane.PortSpec, v string) error {
			bw, err := topo.ParseBandwidth(v)
			if err == nil && bw <= 0 {
				err = fmt.Errorf("%q is not a positive rate", v)
			}
			s.Rate = float64(bw)
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
