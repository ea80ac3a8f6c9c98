package p4test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"

	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/p4rt/client"
)

// Program is a compiled P4 program as a P4Runtime controller loads it with
// SetForwardingPipelineConfig: bmv2 JSON (the device config of
// simple_switch_grpc) and its P4Info.
type Program struct {
	JSON   []byte
	P4Info *p4configv1.P4Info
}

// CompileOptions are the preprocessor options of a compilation.
type CompileOptions struct {
	IncludeDirs []string          // -I
	Defines     map[string]string // -D NAME=VALUE
}

// CompileEmbedded compiles a P4 file with grid's embedded compiler.
func CompileEmbedded(path string, opts CompileOptions) (Program, error) {
	res, err := p4c.Compile(path, p4c.Options{IncludeDirs: opts.IncludeDirs, Defines: opts.Defines})
	if err != nil {
		return Program{}, err
	}
	return Program{JSON: res.JSON, P4Info: res.P4Info}, nil
}

// P4cCompiler is the reference compiler's bmv2 back end.
const P4cCompiler = "p4c-bm2-ss"

// CompileWithP4c compiles a P4 file with the reference compiler,
// p4c-bm2-ss (on PATH), as the bmv2 target needs it:
//
//	p4c-bm2-ss --p4v 16 -I DIR -D NAME=VALUE -o prog.json --p4runtime-files prog.p4info.bin PROG.p4
//
// The P4Info is binary protobuf: p4c picks the format by the file's suffix,
// and of the text suffixes p4c before 2024 knows only .txt and later
// versions deprecate it for .txtpb, while every version writes .bin; and
// binary protobuf, unlike text, still parses when a newer p4c writes fields
// our P4Runtime release does not know. The files go to a temporary
// directory that is removed afterwards.
func CompileWithP4c(ctx context.Context, path string, opts CompileOptions) (Program, error) {
	bin, err := exec.LookPath(P4cCompiler)
	if err != nil {
		return Program{}, fmt.Errorf("compile %s: %w (install p4c, e.g. p4lang's p4lang-p4c package, or use the Vagrant VM: p4/README.md, Real bmv2)", path, err)
	}
	dir, err := os.MkdirTemp("", "gridp4c-")
	if err != nil {
		return Program{}, err
	}
	defer os.RemoveAll(dir)
	jsonPath, infoPath := filepath.Join(dir, "prog.json"), filepath.Join(dir, "prog.p4info.bin")
	args := []string{"--p4v", "16"}
	for _, d := range opts.IncludeDirs {
		args = append(args, "-I", d)
	}
	for _, name := range slices.Sorted(maps.Keys(opts.Defines)) {
		args = append(args, "-D", name+"="+opts.Defines[name])
	}
	args = append(args, "-o", jsonPath, "--p4runtime-files", infoPath, path)
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		return Program{}, fmt.Errorf("%s %s: %w\n%s", P4cCompiler, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	js, err := os.ReadFile(jsonPath)
	if err != nil {
		return Program{}, fmt.Errorf("%s wrote no bmv2 JSON: %w", P4cCompiler, err)
	}
	info, err := client.LoadP4Info(infoPath)
	if err != nil {
		return Program{}, fmt.Errorf("%s's P4Info of %s: %w", P4cCompiler, path, err)
	}
	return Program{JSON: js, P4Info: info}, nil
}
