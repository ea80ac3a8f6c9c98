package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/p4c/p4info"
)

func init() {
	register(&cli.Command{
		Name:      "p4c",
		Usage:     "compile a P4_16 v1model program to bmv2 JSON and P4Info (like p4c-bm2-ss --p4runtime-files)",
		ArgsUsage: "FILE.p4 [-o DIR | -o FILE.json] [-I DIR] [-D NAME[=VALUE]] [--p4runtime-files FILE,...]",
		Description: "p4c compiles FILE.p4 with grid's embedded compiler. With -o DIR (default: the current\n" +
			"directory) it writes NAME.json (bmv2 JSON for simple_switch and grid's engine), NAME.p4info.txtpb\n" +
			"and NAME.p4info.binpb (P4Runtime P4Info with p4c's IDs) into DIR. Errors are printed as\n" +
			"file:line:col: messages on stderr and the exit status is 1; constructs outside the supported\n" +
			"subset are reported as 'unsupported: ...'.\n\n" +
			"It also answers to p4c-bm2-ss's and p4c's command lines, as courses' Makefiles write them:\n" +
			"-o FILE.json writes the bmv2 JSON to that file (p4c-bm2-ss); --p4runtime-files F1,F2 writes the\n" +
			"P4Info to each file in the format its suffix says (.txt/.txtpb text, .json JSON, .bin/.binpb\n" +
			"binary), as does the older --p4runtime-file F --p4runtime-format text|json|binary; then only\n" +
			"the files asked for are written. --p4v 16, --std p4-16, --target bmv2 and --arch v1model are\n" +
			"accepted (other languages, targets and architectures are refused); -v, --Wdisable, --Wwarn and\n" +
			"--emit-externs are accepted and noted.\n\n" +
			"Examples:\n   grid p4c p4/aggregator/aggregator.p4 -o build/ -D GRID_VALUES_64=1\n" +
			"   grid p4c --p4v 16 --p4runtime-files build/basic.p4.p4info.txtpb -o build/basic.json basic.p4\n" +
			"   grid p4c --target bmv2 --arch v1model --p4runtime-files build/basic.p4info.txt -o build basic.p4",
		// p4c's options look like no urfave/cli flags (-DNAME, --p4v 16 before
		// the file, comma lists), so the command parses them itself.
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args, err := parseP4cArgs(c.Args().Slice())
			if errors.Is(err, errP4cHelp) {
				return cli.ShowSubcommandHelp(c)
			}
			if err != nil {
				return cli.Exit(fmt.Sprintf("grid p4c: %v (see grid p4c --help)", err), 1)
			}
			for _, n := range args.notes {
				fmt.Fprintf(c.App.ErrWriter, "grid p4c: %s ignored (p4c's option; grid's compiler has no use for it)\n", n)
			}
			res, err := p4c.Compile(args.source, p4c.Options{IncludeDirs: args.includes, Defines: args.defines})
			if err != nil {
				fmt.Fprintln(c.App.ErrWriter, strings.TrimRight(err.Error(), "\n"))
				return cli.Exit("", 1)
			}
			for _, w := range res.Warnings {
				fmt.Fprintln(c.App.ErrWriter, w)
			}
			paths, err := writeP4cOutputs(res, args)
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

var errP4cHelp = errors.New("help")

// p4cArgs is a grid p4c, p4c-bm2-ss or p4c command line.
type p4cArgs struct {
	source   string
	out      string // directory, or the JSON file when jsonFile
	jsonFile bool
	includes []string
	defines  map[string]string
	// p4info are the P4Info files asked for (--p4runtime-files), each with
	// its format.
	p4info []p4infoFile
	notes  []string
}

type p4infoFile struct {
	path, format string // format: text, json or binary
}

// p4infoFormats maps P4Info file suffixes to formats, as p4c reads them.
var p4infoFormats = map[string]string{".txt": "text", ".txtpb": "text", ".json": "json", ".bin": "binary", ".binpb": "binary"}

func parseP4cArgs(argv []string) (*p4cArgs, error) {
	a := &p4cArgs{out: ".", defines: map[string]string{}}
	var runtimeFile, runtimeFormat string
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		// value returns the option's value: after '=', joined (-DX, -Idir)
		// or the next argument.
		value := func(name string) (string, error) {
			if v, ok := strings.CutPrefix(arg, name+"="); ok {
				return v, nil
			}
			if len(name) == 2 && len(arg) > 2 && strings.HasPrefix(arg, name) {
				return arg[2:], nil
			}
			if i+1 >= len(argv) {
				return "", fmt.Errorf("%s wants a value", name)
			}
			i++
			return argv[i], nil
		}
		name, _, _ := strings.Cut(arg, "=")
		if len(name) > 2 && name[1] != '-' && name[0] == '-' {
			name = name[:2] // -DX, -Idir, -obuild
		}
		var v string
		var err error
		switch name {
		case "-h", "--help":
			return nil, errP4cHelp
		case "-o", "--out", "--output":
			if v, err = value(name); err == nil {
				a.out, a.jsonFile = v, strings.HasSuffix(v, ".json")
			}
		case "-I", "--include":
			if v, err = value(name); err == nil {
				a.includes = append(a.includes, v)
			}
		case "-D", "--define":
			if v, err = value(name); err == nil {
				n, val, ok := strings.Cut(v, "=")
				if !ok {
					val = "1"
				}
				a.defines[n] = val
			}
		case "--p4runtime-files":
			if v, err = value(name); err == nil {
				for _, f := range strings.Split(v, ",") {
					format, ok := p4infoFormats[filepath.Ext(f)]
					if !ok {
						return nil, fmt.Errorf("--p4runtime-files %s: %s: unknown P4Info format (want a .txt, .txtpb, .json, .bin or .binpb file)", v, f)
					}
					a.p4info = append(a.p4info, p4infoFile{f, format})
				}
			}
		case "--p4runtime-file":
			runtimeFile, err = value(name)
		case "--p4runtime-format":
			if runtimeFormat, err = value(name); err == nil && runtimeFormat != "text" && runtimeFormat != "json" && runtimeFormat != "binary" {
				return nil, fmt.Errorf("--p4runtime-format %s: want text, json or binary", runtimeFormat)
			}
		case "--p4v", "--std":
			if v, err = value(name); err == nil && v != "16" && v != "1.6" && v != "p4-16" && v != "p4_16" {
				return nil, fmt.Errorf("%s %s: grid's compiler takes P4_16 only", name, v)
			}
		case "--target", "-b":
			if v, err = value(name); err == nil && v != "bmv2" && !strings.HasPrefix(v, "bmv2-") {
				return nil, fmt.Errorf("%s %s: grid's compiler targets bmv2 only", name, v)
			}
		case "--arch":
			if v, err = value(name); err == nil && v != "v1model" {
				return nil, fmt.Errorf("--arch %s: grid's compiler has v1model only", v)
			}
		case "-v", "--emit-externs", "--Wdisable", "--Wwarn", "--Winfo", "--pp", "--toJSON":
			a.notes = append(a.notes, arg)
			if (name == "--pp" || name == "--toJSON") && !strings.Contains(arg, "=") {
				i++ // their value
			}
		default:
			if strings.HasPrefix(arg, "-") && arg != "-" {
				return nil, fmt.Errorf("unknown option %s", arg)
			}
			if a.source != "" {
				return nil, fmt.Errorf("want exactly one FILE.p4, not %s and %s", a.source, arg)
			}
			a.source = arg
		}
		if err != nil {
			return nil, err
		}
	}
	if a.source == "" {
		return nil, errors.New("want exactly one FILE.p4 argument")
	}
	if runtimeFile != "" {
		if runtimeFormat == "" {
			runtimeFormat = "binary" // p4c's default for --p4runtime-format
		}
		a.p4info = append(a.p4info, p4infoFile{runtimeFile, runtimeFormat})
	} else if runtimeFormat != "" {
		return nil, errors.New("--p4runtime-format without --p4runtime-file")
	}
	return a, nil
}

// writeP4cOutputs writes what the command line asks for and returns the
// paths written: grid's three files into a directory unless P4Info files
// or a JSON file are named, in which case those. On failure what was
// written is removed.
func writeP4cOutputs(res *p4c.Result, a *p4cArgs) (paths []string, err error) {
	if !a.jsonFile && len(a.p4info) == 0 {
		return res.WriteFiles(a.out)
	}
	defer func() {
		if err != nil {
			for _, p := range paths {
				os.Remove(p)
			}
			paths = nil
		}
	}()
	write := func(path string, data []byte) error {
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("create output directory: %w", err)
			}
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
		paths = append(paths, path)
		return nil
	}
	jsonPath := a.out
	if !a.jsonFile {
		jsonPath = filepath.Join(a.out, res.Name+".json")
	}
	if err := write(jsonPath, res.JSON); err != nil {
		return paths, err
	}
	for _, f := range a.p4info {
		var data []byte
		switch f.format {
		case "text":
			data, err = p4info.MarshalText(res.P4Info)
		case "json":
			data, err = protojson.MarshalOptions{Multiline: true}.Marshal(res.P4Info)
		default:
			data, err = p4info.MarshalBinary(res.P4Info)
		}
		if err != nil {
			return paths, fmt.Errorf("%s: %w", f.path, err)
		}
		if err := write(f.path, data); err != nil {
			return paths, err
		}
	}
	return paths, nil
}
