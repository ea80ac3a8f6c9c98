package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/topo"
)

func init() {
	outFlag := &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the topology to `FILE` instead of standard output"}
	register(&cli.Command{
		Name:  "topo",
		Usage: "generate, check and draw topology files",
		Description: "Topology files (YAML, documented by topologies/schema.json) describe the hosts, switches and\n" +
			"links grid builds. The generators write the paper's topologies; show checks a file and draws it.\n\n" +
			"Example:\n  grid topo fattree --k 4 -o /tmp/k4.yaml && grid topo show /tmp/k4.yaml --svg /tmp/k4.svg",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.ShowSubcommandHelp(c)
			}
			return fmt.Errorf("topo: no subcommand %q (fattree, leafspine, testbed, fig1 or show; see 'grid topo --help')", c.Args().First())
		},
		Subcommands: []*cli.Command{
			{
				Name:  "fattree",
				Usage: "write an Al-Fares k-ary fat-tree",
				Description: "(k/2)^2 core switches, k pods of k/2 aggregation and k/2 edge switches, and k/2 hosts per\n" +
					"edge switch unless --hosts-per-edge says otherwise. Every switch is programmable with 100Gbps\n" +
					"capacity, every link 100Gbps; the last host is the PS, the others workers.\n\n" +
					"Example (the paper's simulation, 80 switches and 192 servers):\n  grid topo fattree --k 8 --hosts-per-edge 6 -o fattree-k8.yaml",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "k", Usage: "switch port count `K`, even and at least 2; required", Required: true, DefaultText: "none"},
					&cli.IntFlag{Name: "hosts-per-edge", Usage: "`H` hosts under each edge switch", DefaultText: "k/2"},
					outFlag,
				},
				Action: func(c *cli.Context) error {
					return writeGenerated(c, func() (*topo.Topology, error) { return topo.FatTree(c.Int("k"), c.Int("hosts-per-edge")) })
				},
			},
			{
				Name:  "leafspine",
				Usage: "write a leaf-spine (two-tier Clos) topology",
				Description: "Every leaf links to every spine; hosts are spread over the leaves as evenly as possible.\n" +
					"Every switch is programmable with 100Gbps capacity, every link 100Gbps; the last host is the PS.\n\n" +
					"Example (the paper's simulation, 60 switches and 500 servers):\n  grid topo leafspine --spines 30 --leaves 30 --hosts 500 -o leafspine-60.yaml",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "spines", Usage: "number of spine switches `S`; required", Required: true, DefaultText: "none"},
					&cli.IntFlag{Name: "leaves", Usage: "number of leaf switches `L`; required", Required: true, DefaultText: "none"},
					&cli.IntFlag{Name: "hosts", Usage: "number of hosts `H` in total; required", Required: true, DefaultText: "none"},
					outFlag,
				},
				Action: func(c *cli.Context) error {
					return writeGenerated(c, func() (*topo.Topology, error) {
						return topo.LeafSpine(c.Int("spines"), c.Int("leaves"), c.Int("hosts"))
					})
				},
			},
			{
				Name:  "testbed",
				Usage: "write the paper's testbed: switches s1, s2, s3 in a triangle with 8 workers and a PS",
				Description: "s1 holds w1, w2 and the PS, s2 holds w3, w4, w7, s3 holds w5, w6, w8; 100Gbps links.\n\n" +
					"Example:\n  grid topo testbed -o testbed.yaml",
				Flags: []cli.Flag{outFlag},
				Action: func(c *cli.Context) error {
					return writeGenerated(c, func() (*topo.Topology, error) { return topo.Testbed(), nil })
				},
			},
			{
				Name:  "fig1",
				Usage: "write the paper's Fig. 1 motivating example (3Gbps links, 9Gbps PS ingress and capacities)",
				Description: "s1 holds w1-w4, s2 holds w5, w6, s3 holds w7, w8 and the PS; links L1 = s1-s3, L2 = s1-s2,\n" +
					"L3 = s2-s3. The solver's known-answer tests use it.\n\nExample:\n  grid topo fig1 -o paper-fig1.yaml",
				Flags: []cli.Flag{outFlag},
				Action: func(c *cli.Context) error {
					return writeGenerated(c, func() (*topo.Topology, error) { return topo.PaperFig1(), nil })
				},
			},
			{
				Name:      "show",
				Usage:     "check a topology file, print a summary and optionally draw it",
				ArgsUsage: "FILE",
				Description: "Reads and validates FILE (errors name the line and field), prints counts by kind, tier and\n" +
					"role, programmable switches, capacities, the PS and link bandwidths. --svg draws the topology\n" +
					"as an image, --dot writes Graphviz input, --addresses prints the addressing plan.\n\n" +
					"Example:\n  grid topo show topologies/testbed.yaml --svg testbed.svg",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "dot", Usage: "write Graphviz DOT to `FILE`"},
					&cli.StringFlag{Name: "svg", Usage: "write an SVG drawing to `FILE`"},
					&cli.BoolFlag{Name: "addresses", Usage: "print every host interface's address, gateway and MACs"},
				},
				Action: showTopology,
			},
		},
	})
}

func writeGenerated(c *cli.Context, generate func() (*topo.Topology, error)) error {
	if c.NArg() > 0 {
		return fmt.Errorf("topo %s: unexpected argument %q (use -o FILE to choose the output)", c.Command.Name, c.Args().First())
	}
	t, err := generate()
	if err != nil {
		return flagError(c, err)
	}
	data, err := topo.Marshal(t)
	if err != nil {
		return err
	}
	if path := c.String("output"); path != "" {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("write topology: %w", err)
		}
		return nil
	}
	_, err = c.App.Writer.Write(data)
	return err
}

// flagError names the flag behind a generator's parameter error: the
// generators name their parameters as the flags are named ("k",
// "hosts-per-edge"), so "fat-tree: k: must be even ..." reads
// "topo fattree: --k 3: must be even ...".
func flagError(c *cli.Context, err error) error {
	var te *topo.Error
	if !errors.As(err, &te) || te.Line != 0 {
		return err
	}
	for _, f := range c.Command.Flags {
		if f.Names()[0] == te.Field {
			return fmt.Errorf("topo %s: --%s %v: %s", c.Command.Name, te.Field, c.Value(te.Field), te.Msg)
		}
	}
	return err
}

func showTopology(c *cli.Context) error {
	args, err := positionalArgs(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return fmt.Errorf("topo show: give exactly one topology FILE, not %d arguments (see 'grid topo show --help')", len(args))
	}
	t, err := topo.Load(args[0])
	if err != nil {
		return err
	}
	fmt.Fprint(c.App.Writer, t.Summary())
	if c.Bool("addresses") {
		if err := printAddresses(c.App.Writer, t); err != nil {
			return err
		}
	}
	for _, out := range []struct {
		flag string
		data func() []byte
	}{{"dot", t.DOT}, {"svg", t.SVG}} {
		if path := c.String(out.flag); path != "" {
			if err := os.WriteFile(path, out.data(), 0o644); err != nil {
				return fmt.Errorf("write --%s: %w", out.flag, err)
			}
			fmt.Fprintf(c.App.Writer, "wrote %s\n", path)
		}
	}
	return nil
}

func printAddresses(w io.Writer, t *topo.Topology) error {
	plan, err := t.Plan()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tIFACE\tADDRESS\tMAC\tGATEWAY\tGATEWAY MAC\tSWITCH PORT")
	for _, hi := range plan.Hosts {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%v\t%v\t%v\t%s\n", hi.Host, hi.Name, hi.IP, hi.MAC, hi.Gateway, hi.GatewayMAC, t.EndpointString(hi.Peer))
	}
	return tw.Flush()
}
