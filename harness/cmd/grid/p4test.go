package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/stf"
)

func init() {
	register(&cli.Command{
		Name:      "p4test",
		Usage:     "run an STF packet test against a P4 program on grid's embedded switch (no bmv2 needed)",
		ArgsUsage: "PROG.p4|PROG.json TEST.stf [MORE.stf ...] [--trace]",
		Description: "p4test compiles PROG.p4 with the embedded compiler (or loads PROG.json, bmv2 JSON from any\n" +
			"p4c), runs the commands of TEST.stf in order on an in-memory switch and checks that every\n" +
			"'expect' packet came out on its port and nothing else did. STF is the format of p4c's bmv2 tests:\n\n" +
			"   add TABLE [PRIORITY] FIELD:VALUE ... ACTION(PARAM:VALUE, ...)    # VALUE/LEN, VALUE&&&MASK, 0x0a**\n" +
			"   setdefault TABLE ACTION(PARAM:VALUE, ...)\n" +
			"   packet PORT HEX...          expect PORT HEX... [$]   ('*' = any nibble, '$' = packet ends here)\n" +
			"   mc_mgrp_create G   mc_node_create RID PORT...   mc_node_associate G NODE   mirroring_add S PORT\n" +
			"   register_write R I V   check_register R(I) == V   check_counter C(I) packets|bytes == N\n\n" +
			"Every mismatch is shown as a byte diff with the differing bytes marked; the exit status is 1 when\n" +
			"a test fails. Several STF files each run on a fresh switch; a .p4 program is compiled with the\n" +
			"-D definitions plus those of the test's '# build: NAME[=VALUE] ...' line (which win), once per\n" +
			"distinct set. --trace prints each command and the switch's per-packet log (parser states,\n" +
			"tables hit or missed, actions, drops).\n\n" +
			"Examples:\n   grid p4test p4/examples/basic_ipv4.p4 p4/examples/basic_ipv4.stf --trace\n" +
			"   grid p4test p4/aggregator/aggregator.p4 p4/aggregator/tests/*.stf",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "trace", Usage: "print every STF command and the switch's per-packet log"},
			&cli.StringSliceFlag{Name: "include", Aliases: []string{"I"}, Usage: "search `DIR` for #include files when compiling (repeatable)"},
			&cli.StringSliceFlag{Name: "define", Aliases: []string{"D"}, Usage: "predefine macro `NAME[=VALUE]` when compiling (repeatable); a test's '# build: NAME[=VALUE] ...' line adds its own"},
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
			prog := &programSource{path: files[0], includes: c.StringSlice("include"), defines: parseDefines(c.StringSlice("define")), built: map[string][]byte{}}
			opts := stf.Options{}
			trace := c.Bool("trace")
			if trace {
				opts.Trace = c.App.Writer
			}
			failed := 0
			for _, stfPath := range files[1:] {
				programJSON, err := prog.forTest(stfPath)
				if err != nil {
					fmt.Fprintln(c.App.ErrWriter, strings.TrimRight(err.Error(), "\n"))
					return cli.Exit("", 1)
				}
				ok, err := runSTFFile(c, programJSON, stfPath, opts)
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
// the error is for a program that does not load.
func runSTFFile(c *cli.Context, programJSON []byte, stfPath string, opts stf.Options) (bool, error) {
	cmds, err := stf.ParseFile(stfPath)
	if err != nil {
		fmt.Fprintln(c.App.ErrWriter, err)
		fmt.Fprintf(c.App.Writer, "FAIL %s: the test does not parse\n", filepath.Base(stfPath))
		return false, nil
	}
	result, err := stf.Run(programJSON, cmds, opts)
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
// source compiled once per set of definitions its tests ask for.
type programSource struct {
	path     string
	includes []string
	defines  map[string]string
	built    map[string][]byte // by the definitions' canonical text
}

// forTest returns the bmv2 JSON that the STF file at stfPath runs on.
func (p *programSource) forTest(stfPath string) ([]byte, error) {
	defines := maps.Clone(p.defines)
	if isP4(p.path) {
		extra, err := stf.ReadBuild(stfPath)
		if err != nil {
			return nil, err
		}
		maps.Copy(defines, extra)
	}
	var key strings.Builder
	for _, name := range slices.Sorted(maps.Keys(defines)) {
		fmt.Fprintf(&key, "%s=%s ", name, defines[name])
	}
	if data, ok := p.built[key.String()]; ok {
		return data, nil
	}
	data, err := loadProgram(p.path, p.includes, defines)
	if err != nil {
		return nil, err
	}
	p.built[key.String()] = data
	return data, nil
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

// loadProgram returns the bmv2 JSON of a .json file, or of a .p4 file
// compiled with the embedded compiler.
func loadProgram(path string, includeDirs []string, defines map[string]string) ([]byte, error) {
	switch {
	case filepath.Ext(path) == ".json":
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read program: %w", err)
		}
		return data, nil
	case isP4(path):
		res, err := p4c.Compile(path, p4c.Options{IncludeDirs: includeDirs, Defines: defines})
		if err != nil {
			return nil, err
		}
		return res.JSON, nil
	}
	return nil, fmt.Errorf("%s: want a .p4 program or its bmv2 .json", path)
}
