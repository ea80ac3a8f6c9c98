package main

import (
	"fmt"
	"regexp"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/conformance"
	"github.com/grid-ina/grid/harness/p4c"
)

func init() {
	register(&cli.Command{
		Name:  "conformance",
		Usage: "run p4c's v1model STF tests on grid's engine and say which pass and why the others fail",
		Description: "conformance takes every programs/NAME.p4 + NAME.stf of the corpus directory, gets its bmv2 JSON\n" +
			"from the embedded compiler (--json ours) or from reference/NAME.json made by real p4c\n" +
			"(--json reference), runs the STF test on the engine and prints one line per program: PASS, or\n" +
			"FAIL with the stage (compile, load, stf, run, crash, timeout) and the reason. It ends with\n" +
			"\"N of M pass\" and the programs real bmv2 passes (reference/verdicts.txt) that fail here; the\n" +
			"exit status is 1 when there is any such program.\n\n" +
			"Example:\n   grid conformance --json reference --run 'checksum|header-stack' --details",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "corpus `DIR` holding programs/ and reference/ (default: <repo>/../shared/p4c-conformance)"},
			&cli.StringFlag{Name: "json", Value: string(conformance.Ours), Usage: "`MODE` is where the bmv2 JSON comes from: ours (the embedded compiler) or reference (real p4c's reference/NAME.json)"},
			&cli.StringFlag{Name: "run", Usage: "only programs whose name matches `REGEX`"},
			&cli.BoolFlag{Name: "details", Aliases: []string{"d"}, Usage: "show the full reason of each failure (byte diffs, all errors)"},
			&cli.DurationFlag{Name: "timeout", Value: conformance.DefaultTimeout, Usage: "give up on one program after `DURATION`"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return cli.Exit("grid conformance: takes no arguments (see grid conformance --help)", 1)
			}
			opts := conformance.Options{Mode: conformance.Mode(c.String("json")), Dir: c.String("dir"), Timeout: c.Duration("timeout")}
			if opts.Dir == "" {
				dir, err := conformance.DefaultDir()
				if err != nil {
					return cli.Exit(fmt.Sprintf("grid conformance: %v; pass --dir", err), 1)
				}
				opts.Dir = dir
			}
			if re := c.String("run"); re != "" {
				compiled, err := regexp.Compile(re)
				if err != nil {
					return cli.Exit(fmt.Sprintf("grid conformance: --run: %v", err), 1)
				}
				opts.Run = compiled
			}
			if opts.Mode == conformance.Ours {
				opts.Compile = func(path string) ([]byte, error) {
					res, err := p4c.Compile(path, p4c.Options{})
					if err != nil {
						return nil, err
					}
					return res.JSON, nil
				}
			}
			report, err := conformance.Run(opts)
			if err != nil {
				return cli.Exit(fmt.Sprintf("grid conformance: %v", err), 1)
			}
			report.Write(c.App.Writer, c.Bool("details"))
			if len(report.Regressions()) > 0 {
				return cli.Exit("", 1)
			}
			return nil
		},
	})
}
