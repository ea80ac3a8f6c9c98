package main

import (
	"fmt"
	"os"
	"path/filepath"
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
			"a test fails. Several STF files each run on a fresh switch. --trace prints each command and the\n" +
			"switch's per-packet log (parser states, tables hit or missed, actions, drops).\n\n" +
			"Examples:\n   grid p4test p4/examples/basic_ipv4.p4 p4/examples/basic_ipv4.stf --trace\n" +
			"   grid p4test p4/aggregator/aggregator.p4 p4/aggregator/tests/*.stf",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "trace", Usage: "print every STF command and the switch's per-packet log"},
			&cli.StringSliceFlag{Name: "include", Aliases: []string{"I"}, Usage: "search `DIR` for #include files when compiling (repeatable)"},
		},
		Action: func(c *cli.Context) error {
			// The flag parser stops at the first argument; accept --trace
			// after the files too, as the usage line shows it.
			trace := c.Bool("trace")
			var files []string
			for _, a := range c.Args().Slice() {
				if a == "--trace" || a == "-trace" {
					trace = true
					continue
				}
				files = append(files, a)
			}
			if len(files) < 2 {
				return cli.Exit("grid p4test: want PROG.p4|PROG.json and TEST.stf (see grid p4test --help)", 1)
			}
			progPath := files[0]
			programJSON, err := loadProgram(progPath, c.StringSlice("include"))
			if err != nil {
				fmt.Fprintln(c.App.ErrWriter, strings.TrimRight(err.Error(), "\n"))
				return cli.Exit("", 1)
			}
			opts := stf.Options{}
			if trace {
				opts.Trace = c.App.Writer
			}
			failed := 0
			for _, stfPath := range files[1:] {
				ok, err := runSTFFile(c, programJSON, stfPath, opts)
				if err != nil {
					fmt.Fprintf(c.App.ErrWriter, "%s: %v\n", progPath, err)
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

// loadProgram returns the bmv2 JSON of a .json file, or of a .p4 file
// compiled with the embedded compiler.
func loadProgram(path string, includeDirs []string) ([]byte, error) {
	switch filepath.Ext(path) {
	case ".json":
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read program: %w", err)
		}
		return data, nil
	case ".p4", ".p4_16":
		res, err := p4c.Compile(path, p4c.Options{IncludeDirs: includeDirs})
		if err != nil {
			return nil, err
		}
		return res.JSON, nil
	}
	return nil, fmt.Errorf("%s: want a .p4 program or its bmv2 .json", path)
}
