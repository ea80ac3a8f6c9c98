// Command grid is the GRID in-network aggregation testbed: it builds emulated
// topologies, compiles and loads the P4 aggregator, solves gradient routing and
// runs experiments. Each subcommand lives in its own file and registers itself
// here, so the CLI stays a thin layer over the packages under harness/.
package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/internal/repo"
)

// commands is filled by the init functions of the files in this package.
var commands []*cli.Command

func register(c *cli.Command) { commands = append(commands, c) }

func newApp() *cli.App {
	sort.Slice(commands, func(i, j int) bool { return commands[i].Name < commands[j].Name })
	return &cli.App{
		Name:    "grid",
		Version: version,
		Usage:   "testbed for in-network gradient aggregation (GRID, ToN 2023) on network namespaces and P4",
		Description: "grid builds namespace topologies, compiles P4 to bmv2 JSON, runs P4 switches, solves\n" +
			"gradient routing plans and runs emulated training jobs. 'grid COMMAND --help' explains each command.",
		Commands: commands,
		CommandNotFound: func(c *cli.Context, name string) {
			fmt.Fprintf(c.App.ErrWriter, "grid: no command %q (see 'grid --help')\n", name)
			cli.OsExiter(2)
		},
		EnableBashCompletion: true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "log debug messages"},
		},
		Before: func(c *cli.Context) error {
			slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(c)})))
			return startProfile()
		},
		After: func(*cli.Context) error {
			pprof.StopCPUProfile()
			return nil
		},
	}
}

// profileEnv names the environment variable that makes every grid process
// (a run's switch host and endpoints included, which inherit it) write a
// CPU profile: GRID_CPUPROFILE=PREFIX writes PREFIX.PID.pprof, for
// `go tool pprof`.
const profileEnv = "GRID_CPUPROFILE"

func startProfile() error {
	prefix := os.Getenv(profileEnv)
	if prefix == "" {
		return nil
	}
	f, err := os.Create(fmt.Sprintf("%s.%d.pprof", prefix, os.Getpid()))
	if err != nil {
		return fmt.Errorf("%s: %w", profileEnv, err)
	}
	return pprof.StartCPUProfile(f)
}

func main() {
	if err := newApp().Run(os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "grid: %v\n", err)
		os.Exit(1)
	}
}

// logLevel is the level --verbose asks for.
func logLevel(c *cli.Context) slog.Level {
	if c.Bool("verbose") {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// logAlsoTo writes the log to the file path as well as to standard error
// until the returned function is called.
func logAlsoTo(c *cli.Context, path string) (restore func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.MultiWriter(os.Stderr, f), &slog.HandlerOptions{Level: logLevel(c)})))
	return func() {
		slog.SetDefault(prev)
		f.Close()
	}, nil
}

// pathFlag is a path flag's value: as given, relative to the working
// directory, or, when the user gave none, its default inside the grid tree
// (repo.Resolve), so that `bin/grid run` works from any directory.
func pathFlag(c *cli.Context, name string) string {
	v := c.String(name)
	if c.IsSet(name) || v == "" {
		return v
	}
	return repo.Resolve(v)
}

// positionalArgs returns a command's positional arguments and applies the
// flags written after them ("grid up FILE --name RUN"), which urfave/cli v2
// leaves among the arguments because it stops parsing flags at the first
// positional one. Everything after "--" is positional and kept verbatim.
func positionalArgs(c *cli.Context) ([]string, error) {
	rest := c.Args().Slice()
	var verbatim []string
	for i, a := range rest {
		if a == "--" {
			rest, verbatim = rest[:i], rest[i+1:]
			break
		}
	}
	var positional []string
	for len(rest) > 0 {
		if !strings.HasPrefix(rest[0], "-") || rest[0] == "-" {
			positional = append(positional, rest[0])
			rest = rest[1:]
			continue
		}
		set := flag.NewFlagSet(c.Command.Name, flag.ContinueOnError)
		set.SetOutput(io.Discard)
		for _, f := range c.Command.Flags {
			primary := f.Names()[0]
			// Every occurrence goes through c.Set, so repeated slice flags append.
			apply := func(v string) error { return c.Set(primary, v) }
			for _, name := range f.Names() {
				if _, isBool := f.(*cli.BoolFlag); isBool {
					set.BoolFunc(name, "", apply)
				} else {
					set.Func(name, "", apply)
				}
			}
		}
		if err := set.Parse(rest); err != nil {
			return nil, fmt.Errorf("%s: %w", c.Command.Name, err)
		}
		rest = set.Args()
	}
	return append(positional, verbatim...), nil
}
