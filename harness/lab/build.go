package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/grid-ina/grid/harness/p4c/p4info"
	"github.com/grid-ina/grid/harness/p4test"
)

// Program is a compiled program of the exercise.
type Program struct {
	Source string
	JSON   string // build/NAME.json
	P4Info *p4configv1.P4Info
}

// Compile compiles every program of the exercise into build/ as the
// tutorials' Makefile does (NAME.json, NAME.p4.p4info.txtpb), and also
// writes the P4Info under each other name a runtime_json of the topology
// gives it in build/ (older courses name it NAME.p4.p4info.txt or
// NAME.p4info). It returns the programs by JSON path.
func (ex *Exercise) Compile() (map[string]*Program, error) {
	return ex.CompileWith(CompilerGrid)
}

// Compilers of a lab's programs.
const (
	CompilerGrid = "grid" // grid's embedded compiler
	CompilerP4c  = "p4c"  // p4c-bm2-ss on PATH, as the tutorials' Makefile runs it
)

// CompileWith is Compile with the given compiler.
func (ex *Exercise) CompileWith(compiler string) (map[string]*Program, error) {
	compile := func(src string) (p4test.Program, error) { return p4test.CompileEmbedded(src, p4test.CompileOptions{}) }
	switch compiler {
	case "", CompilerGrid:
	case CompilerP4c:
		compile = func(src string) (p4test.Program, error) {
			return p4test.CompileWithP4c(context.Background(), src, p4test.CompileOptions{})
		}
	default:
		return nil, fmt.Errorf("compiler %q: want grid or p4c", compiler)
	}
	wanted, err := ex.p4infoPaths()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(ex.Dir, "build"), 0o755); err != nil {
		return nil, err
	}
	progs := map[string]*Program{}
	for _, src := range ex.Sources {
		res, err := compile(src)
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(filepath.Base(src), ".p4")
		p := &Program{Source: src, JSON: ex.buildPath(src, ".json"), P4Info: res.P4Info}
		if err := os.WriteFile(p.JSON, res.JSON, 0o644); err != nil {
			return nil, err
		}
		infos := []string{ex.buildPath(src, ".p4.p4info.txtpb")}
		for _, w := range wanted {
			if strings.HasPrefix(filepath.Base(w), name+".") && filepath.Dir(w) == filepath.Join(ex.Dir, "build") {
				infos = append(infos, w)
			}
		}
		for _, path := range infos {
			if err := writeP4Info(path, res.P4Info); err != nil {
				return nil, err
			}
		}
		progs[p.JSON] = p
	}
	return progs, nil
}

// p4infoPaths are the P4Info files the topology's runtime_json files name.
func (ex *Exercise) p4infoPaths() ([]string, error) {
	var paths []string
	for _, sw := range ex.Topology.Switches {
		if sw.RuntimeJSON == "" {
			continue
		}
		rc, err := LoadRuntimeConfig(ex.Path(sw.RuntimeJSON))
		if err != nil {
			return nil, err
		}
		paths = append(paths, ex.Path(rc.P4Info))
	}
	return paths, nil
}

// writeP4Info writes info in the format the file's suffix says.
func writeP4Info(path string, info *p4configv1.P4Info) error {
	var data []byte
	var err error
	switch filepath.Ext(path) {
	case ".json":
		data, err = protojson.MarshalOptions{Multiline: true}.Marshal(info)
	case ".bin", ".binpb", ".pb":
		data, err = p4info.MarshalBinary(info)
	default:
		data, err = p4info.MarshalText(info)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, data, 0o644)
}
