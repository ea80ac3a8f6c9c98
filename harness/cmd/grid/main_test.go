package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// positionalOf runs a throwaway command with the given flags and arguments and
// returns what positionalArgs made of them.
func positionalOf(t *testing.T, args ...string) (pos []string, name string, verbose bool, defs []string) {
	t.Helper()
	app := &cli.App{Commands: []*cli.Command{{
		Name: "probe",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Aliases: []string{"n"}},
			&cli.BoolFlag{Name: "verbose"},
			&cli.StringSliceFlag{Name: "define", Aliases: []string{"D"}},
		},
		Action: func(c *cli.Context) error {
			var err error
			pos, err = positionalArgs(c)
			name, verbose, defs = c.String("name"), c.Bool("verbose"), c.StringSlice("define")
			return err
		},
	}}}
	if err := app.Run(append([]string{"grid", "probe"}, args...)); err != nil {
		t.Fatal(err)
	}
	return
}

func TestPositionalArgsAppliesFlagsWrittenAfterArguments(t *testing.T) {
	pos, name, verbose, defs := positionalOf(t, "a.yaml", "--name", "r1", "b.stf", "--verbose", "-D", "X=1", "-D", "Y")
	if !reflect.DeepEqual(pos, []string{"a.yaml", "b.stf"}) || name != "r1" || !verbose {
		t.Fatalf("positional %v, name %q, verbose %v", pos, name, verbose)
	}
	if !reflect.DeepEqual(defs, []string{"X=1", "Y"}) {
		t.Fatalf("repeated -D gave %v, want both values in order", defs)
	}
}

func TestPositionalArgsKeepsEverythingAfterDoubleDash(t *testing.T) {
	pos, name, _, _ := positionalOf(t, "run", "h1", "-n", "x", "--", "ip", "-br", "--name", "addr")
	if !reflect.DeepEqual(pos, []string{"run", "h1", "ip", "-br", "--name", "addr"}) || name != "x" {
		t.Fatalf("positional %v, name %q", pos, name)
	}
}

func TestUnknownCommandIsNamedAndExitsTwo(t *testing.T) {
	out, code := exitCode(t, "bogus")
	if code != 2 || !strings.Contains(out, `no command "bogus"`) {
		t.Fatalf("grid bogus: exit %d, output %q", code, out)
	}
}

func TestVersionFlagPrintsWhatTheVersionCommandDoes(t *testing.T) {
	flag, err := runGrid(t, "--version")
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := runGrid(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(flag, "grid "+version+"\ncommit ") || flag != cmd {
		t.Errorf("grid --version printed %q, grid version %q", flag, cmd)
	}
}
