package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/p4rt/client"
	"github.com/grid-ina/grid/harness/p4test"
	"github.com/grid-ina/grid/harness/stf"
)

func init() {
	register(&cli.Command{
		Name:      "p4test",
		Usage:     "run STF packet tests against a P4 program on grid's embedded switch, grid switch or real bmv2",
		ArgsUsage: "PROG.p4|PROG.json TEST.stf [MORE.stf ...] [--target engine|grid-switch|bmv2] [--trace]",
		Description: "p4test compiles PROG.p4 with the embedded compiler (or loads PROG.json, bmv2 JSON from any\n" +
			"p4c), runs the commands of TEST.stf in order on a switch and checks that every 'expect' packet\n" +
			"came out on its port and nothing else did. STF is the format of p4c's bmv2 tests:\n\n" +
			"   add TABLE [PRIORITY] FIELD:VALUE ... ACTION(PARAM:VALUE, ...)    # VALUE/LEN, VALUE&&&MASK, 0x0a**\n" +
			"   setdefault TABLE ACTION(PARAM:VALUE, ...)\n" +
			"   packet PORT HEX...          expect PORT HEX... [$]   ('*' = any nibble, '$' = packet ends here)\n" +
			"   mc_mgrp_create G   mc_node_create RID PORT...   mc_node_associate G NODE   mirroring_add S PORT\n" +
			"   register_write R I V   check_register R(I) == V   check_counter C(I) packets|bytes == N\n" +
			"   advance_clock 800ms         (grid's extension: move the switch's clock; us, ms or s)\n\n" +
			"Every mismatch is shown as a byte diff with the differing bytes marked; the exit status is 1 when\n" +
			"a test fails. Several STF files each run on a fresh switch; a .p4 program is compiled with the\n" +
			"-D definitions plus those of the test's '# build: NAME[=VALUE] ...' line (which win), once per\n" +
			"distinct set. --trace prints each command and the switch's per-packet log (parser states,\n" +
			"tables hit or missed, actions, drops).\n\n" +
			"--target picks the switch. engine (the default) is the engine inside this process with a\n" +
			"virtual clock (1 us per packet): no root, no ports. grid-switch and bmv2 run a switch process\n" +
			"in a private network namespace (gridp4t-PID-N) with veth ports 0 to 7 at least, and up to one\n" +
			"beyond the highest port the test names (or a 9-bit action argument gives), load the program\n" +
			"and every entry, group and meter over P4Runtime, send and receive the packets through packet\n" +
			"sockets; after each packet they wait until the expected packets came out (or nothing came for\n" +
			"250 ms, at most --packet-timeout), then --grace for extras (20 ms on grid-switch, 100 ms on\n" +
			"bmv2, which takes longer to pick up a frame). A packet grid switch sends to a port without a\n" +
			"veth fails the test as an unexpected one does. advance_clock sleeps. grid-switch is `grid\n" +
			"switch`, grid's drop-in for simple_switch_grpc (this binary unless --switch says otherwise);\n" +
			"bmv2 is simple_switch_grpc with the program compiled by p4c-bm2-ss, registers read and written\n" +
			"through simple_switch_CLI. Both need root and the .p4 source (P4Runtime needs the program's\n" +
			"P4Info; or PROG.json with --p4info, e.g. p4c's); everything is removed afterwards, also on\n" +
			"Ctrl-C.\n\n" +
			"Examples:\n   grid p4test p4/examples/basic_ipv4.p4 p4/examples/basic_ipv4.stf --trace\n" +
			"   grid p4test p4/aggregator/aggregator.p4 p4/aggregator/tests/*.stf\n" +
			"   sudo grid p4test --target grid-switch p4/aggregator/aggregator.p4 p4/aggregator/tests/*.stf\n" +
			"   sudo grid p4test --target bmv2 p4/aggregator/aggregator.p4 p4/aggregator/tests/*.stf",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "trace", Usage: "print every STF command and the switch's per-packet log"},
			&cli.StringSliceFlag{Name: "include", Aliases: []string{"I"}, Usage: "search `DIR` for #include files when compiling (repeatable)"},
			&cli.StringSliceFlag{Name: "define", Aliases: []string{"D"}, Usage: "predefine macro `NAME[=VALUE]` when compiling (repeatable); a test's '# build: NAME[=VALUE] ...' line adds its own"},
			&cli.StringFlag{Name: "target", Value: string(p4test.Engine), Usage: "the switch `KIND`: engine (in this process), grid-switch (grid switch on veth ports) or bmv2 (simple_switch_grpc on veth ports)"},
			&cli.StringFlag{Name: "switch", Usage: "the switch `PROGRAM` of --target grid-switch (default: this grid binary) or bmv2 (default: simple_switch_grpc on PATH)"},
			&cli.StringFlag{Name: "p4info", Usage: "the P4Info `FILE` (.txtpb, .txt, .bin, .binpb or .json) of a PROG.json, for --target grid-switch or bmv2"},
			&cli.DurationFlag{Name: "packet-timeout", Value: 2 * time.Second, Usage: "with grid-switch and bmv2, the longest wait for the packets a packet causes (`DURATION`, e.g. 2s)"},
			&cli.DurationFlag{Name: "grace", Usage: "with grid-switch and bmv2, the wait for unexpected packets once the expected ones came out, before the next command (`DURATION`)",
				DefaultText: p4test.GridSwitchGrace.String() + " on grid-switch, " + p4test.Bmv2Grace.String() + " on bmv2"},
		},
		Action: func(c *cli.Context) error {
			files, err := positionalArgs(c)
			if err != nil {
				return cli.Exit("grid p4test: "+err.Error(), 1)
			}
			if len(files) < 2 {
				return cli.Exit("grid p4test: want PROG.p4|PROG.json and TEST.stf (see grid p4test --help)", 1)
			}
			for _, f := range files[1:] {
				if filepath.Ext(f) != ".stf" {
					return cli.Exit(fmt.Sprintf("grid p4test: %s: a test must be an .stf file (the program comes first)", f), 1)
				}
			}
			kind, err := p4test.ParseTargetKind(c.String("target"))
			if err != nil {
				return cli.Exit("grid p4test: --target: "+err.Error(), 1)
			}
			if kind != p4test.Engine && !isP4(files[0]) && c.String("p4info") == "" {
				return cli.Exit(fmt.Sprintf("grid p4test: %s: --target %s loads the program over P4Runtime, which needs its P4Info: give the .p4 source, or --p4info with the .json", files[0], kind), 1)
			}
			if c.String("p4info") != "" && isP4(files[0]) {
				return cli.Exit(fmt.Sprintf("grid p4test: --p4info goes with a .json program; %s is compiled, P4Info included", files[0]), 1)
			}
			if c.Duration("grace") < 0 || c.Duration("packet-timeout") < 0 {
				return cli.Exit("grid p4test: --grace and --packet-timeout are durations of at least 0", 1)
			}
			remote := p4test.RemoteConfig{Switch: c.String("switch"), PacketTimeout: c.Duration("packet-timeout"), Grace: c.Duration("grace")}
			if kind == p4test.GridSwitch && remote.Switch == "" {
				if remote.Switch, err = os.Executable(); err != nil {
					return cli.Exit("grid p4test: find this grid binary for --target grid-switch: "+err.Error(), 1)
				}
			}
			// Ctrl-C ends the test in progress; its switch and namespace are
			// removed before the command returns.
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			prog := &programSource{path: files[0], p4info: c.String("p4info"), kind: kind, includes: c.StringSlice("include"), defines: parseDefines(c.StringSlice("define")), built: map[string]p4test.Program{}}
			opts := stf.Options{}
			trace := c.Bool("trace")
			if trace {
				opts.Trace = c.App.Writer
			}
			failed := 0
			for _, stfPath := range files[1:] {
				program, err := prog.forTest(ctx, stfPath)
				if err != nil {
					fmt.Fprintln(c.App.ErrWriter, strings.TrimRight(err.Error(), "\n"))
					return cli.Exit("", 1)
				}
				ok, err := runSTFFile(ctx, c, kind, remote, program, stfPath, opts)
				if ctx.Err() != nil {
					fmt.Fprintf(c.App.ErrWriter, "grid p4test: interrupted during %s (its switch is stopped and removed)\n", filepath.Base(stfPath))
					return cli.Exit("", 1)
				}
				if err != nil {
					fmt.Fprintf(c.App.ErrWriter, "%s: %v\n", prog.path, err)
					return cli.Exit("", 1)
				}
				if !ok {
					failed++
				}
			}
			if len(files) > 2 {
				fmt.Fprintf(c.App.Writer, "%d of %d tests pass\n", len(files)-1-failed, len(files)-1)
			}
			if failed > 0 {
				if !trace {
					fmt.Fprintln(c.App.Writer, "(add --trace to follow each packet through the parser, tables and actions)")
				}
				return cli.Exit("", 1)
			}
			return nil
		},
	})
}

// runSTFFile runs one STF file on a fresh switch and prints its verdict;
// the error is for a program that does not load or a switch that does not
// start.
func runSTFFile(ctx context.Context, c *cli.Context, kind p4test.TargetKind, remote p4test.RemoteConfig, prog p4test.Program, stfPath string, opts stf.Options) (bool, error) {
	cmds, err := stf.ParseFile(stfPath)
	if err != nil {
		fmt.Fprintln(c.App.ErrWriter, err)
		fmt.Fprintf(c.App.Writer, "FAIL %s: the test does not parse\n", filepath.Base(stfPath))
		return false, nil
	}
	result, err := p4test.RunSTF(ctx, kind, remote, prog, cmds, opts)
	if err != nil {
		return false, err
	}
	if !result.Passed() {
		result.Report(c.App.Writer)
		fmt.Fprintf(c.App.Writer, "FAIL %s: %s\n", filepath.Base(stfPath), result.Summary())
		return false, nil
	}
	fmt.Fprintf(c.App.Writer, "%s %s\n", filepath.Base(stfPath), result.Summary())
	return true, nil
}

// programSource is the program under test: bmv2 JSON read once, or a P4
// source compiled once per set of definitions its tests ask for, by the
// compiler that goes with the target.
type programSource struct {
	path     string
	p4info   string // the P4Info file of a .json program, if given
	kind     p4test.TargetKind
	includes []string
	defines  map[string]string
	built    map[string]p4test.Program // by the definitions' canonical text
}

// forTest returns the program that the STF file at stfPath runs on.
func (p *programSource) forTest(ctx context.Context, stfPath string) (p4test.Program, error) {
	defines := maps.Clone(p.defines)
	if isP4(p.path) {
		extra, err := stf.ReadBuild(stfPath)
		if err != nil {
			return p4test.Program{}, err
		}
		maps.Copy(defines, extra)
	}
	var key strings.Builder
	for _, name := range slices.Sorted(maps.Keys(defines)) {
		fmt.Fprintf(&key, "%s=%s ", name, defines[name])
	}
	if prog, ok := p.built[key.String()]; ok {
		return prog, nil
	}
	prog, err := p.load(ctx, defines)
	if err != nil {
		return p4test.Program{}, err
	}
	p.built[key.String()] = prog
	return prog, nil
}

// load reads a .json program, or compiles a .p4 one.
func (p *programSource) load(ctx context.Context, defines map[string]string) (p4test.Program, error) {
	switch {
	case filepath.Ext(p.path) == ".json":
		data, err := os.ReadFile(p.path)
		if err != nil {
			return p4test.Program{}, fmt.Errorf("read program: %w", err)
		}
		prog := p4test.Program{JSON: data}
		if p.p4info != "" {
			if prog.P4Info, err = client.LoadP4Info(p.p4info); err != nil {
				return p4test.Program{}, fmt.Errorf("--p4info: %w", err)
			}
		}
		return prog, nil
	case isP4(p.path):
		return p4test.CompileFor(ctx, p.kind, p.path, p4test.CompileOptions{IncludeDirs: p.includes, Defines: defines})
	}
	return p4test.Program{}, fmt.Errorf("%s: want a .p4 program or its bmv2 .json", p.path)
}

func isP4(path string) bool { ext := filepath.Ext(path); return ext == ".p4" || ext == ".p4_16" }

// parseDefines turns -D NAME[=VALUE] flags into macros; NAME alone is NAME=1.
func parseDefines(flags []string) map[string]string {
	defines := map[string]string{}
	for _, d := range flags {
		name, value, ok := strings.Cut(d, "=")
		if !ok {
			value = "1"
		}
		defines[name] = value
	}
	return defines
}
