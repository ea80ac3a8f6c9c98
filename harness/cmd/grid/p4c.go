package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/p4c"
)

func init() {
	register(&cli.Command{
		Name:      "p4c",
		Usage:     "compile a P4_16 v1model program to bmv2 JSON and P4Info (like p4c-bm2-ss --p4runtime-files)",
		ArgsUsage: "FILE.p4",
		Description: "p4c compiles FILE.p4 with grid's embedded compiler and writes, into the output directory,\n" +
			"NAME.json (bmv2 JSON for simple_switch and grid's engine), NAME.p4info.txtpb and NAME.p4info.binpb\n" +
			"(P4Runtime P4Info with p4c's IDs). Errors are printed as file:line:col: messages on stderr and the\n" +
			"exit status is 1; constructs outside the supported subset are reported as 'unsupported: ...'.\n\n" +
			"Example:\n   grid p4c p4/aggregator/aggregator.p4 -o build/ -D GRID_VALUES_64=1",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: ".", Usage: "write the output files into `DIR`"},
			&cli.StringSliceFlag{Name: "include", Aliases: []string{"I"}, Usage: "search `DIR` for #include files (repeatable)"},
			&cli.StringSliceFlag{Name: "define", Aliases: []string{"D"}, Usage: "predefine macro `NAME[=VALUE]` (repeatable)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 {
				return cli.Exit("grid p4c: want exactly one FILE.p4 argument (see grid p4c --help)", 1)
			}
			out, includes, defs := c.String("out"), c.StringSlice("include"), c.StringSlice("define")
			// Flags may also follow the file (grid p4c FILE.p4 -o DIR), which
			// urfave/cli leaves as arguments.
			if c.NArg() > 1 {
				fs := flag.NewFlagSet("p4c", flag.ContinueOnError)
				fs.SetOutput(c.App.ErrWriter)
				fs.StringVar(&out, "o", out, "output directory")
				fs.StringVar(&out, "out", out, "output directory")
				fs.Func("I", "include directory", func(v string) error { includes = append(includes, v); return nil })
				fs.Func("include", "include directory", func(v string) error { includes = append(includes, v); return nil })
				fs.Func("D", "macro", func(v string) error { defs = append(defs, v); return nil })
				fs.Func("define", "macro", func(v string) error { defs = append(defs, v); return nil })
				if err := fs.Parse(c.Args().Tail()); err != nil {
					return cli.Exit(fmt.Sprintf("grid p4c: %v", err), 1)
				}
				if fs.NArg() > 0 {
					return cli.Exit("grid p4c: want exactly one FILE.p4 argument (see grid p4c --help)", 1)
				}
			}
			defines := map[string]string{}
			for _, d := range defs {
				name, val, ok := strings.Cut(d, "=")
				if !ok {
					val = "1"
				}
				defines[name] = val
			}
			res, err := p4c.Compile(c.Args().First(), p4c.Options{IncludeDirs: includes, Defines: defines})
			if err != nil {
				fmt.Fprintln(c.App.ErrWriter, strings.TrimRight(err.Error(), "\n"))
				return cli.Exit("", 1)
			}
			paths, err := res.WriteFiles(out)
			if err != nil {
				return cli.Exit(fmt.Sprintf("grid p4c: %v", err), 1)
			}
			for _, p := range paths {
				fmt.Fprintln(c.App.Writer, p)
			}
			return nil
		},
	})
}
