package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/topo"
)

// runGrid runs the CLI in-process and returns what it printed.
func runGrid(t *testing.T, args ...string) (string, error) {
	t.Helper()
	app := newApp()
	var out bytes.Buffer
	app.Writer, app.ErrWriter = &out, &out
	err := app.Run(append([]string{"grid"}, args...))
	return out.String(), err
}

func TestTopoFattreeWritesAFileThatLoads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k4.yaml")
	if _, err := runGrid(t, "topo", "fattree", "--k", "4", "-o", path); err != nil {
		t.Fatal(err)
	}
	tp, err := topo.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Switches()) != 20 || len(tp.Hosts()) != 16 {
		t.Errorf("k=4 file has %d switches and %d hosts", len(tp.Switches()), len(tp.Hosts()))
	}
}

func TestTopoFattreeRejectsOddK(t *testing.T) {
	_, err := runGrid(t, "topo", "fattree", "--k", "3")
	if err == nil || !strings.Contains(err.Error(), "k must be even and at least 2, got 3") {
		t.Errorf("error = %v", err)
	}
}

func TestTopoLeafspineAndTestbedMatchShippedFiles(t *testing.T) {
	for file, args := range map[string][]string{
		"leafspine-60.yaml": {"topo", "leafspine", "--spines", "30", "--leaves", "30", "--hosts", "500"},
		"testbed.yaml":      {"topo", "testbed"},
		"paper-fig1.yaml":   {"topo", "fig1"},
		"fattree-k8.yaml":   {"topo", "fattree", "--k", "8", "--hosts-per-edge", "6"},
	} {
		out, err := runGrid(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "..", "topologies", file))
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("grid %s differs from topologies/%s", strings.Join(args, " "), file)
		}
	}
}

func TestTopoShowAcceptsFlagsAfterTheFile(t *testing.T) {
	dir := t.TempDir()
	svg, dot := filepath.Join(dir, "t.svg"), filepath.Join(dir, "t.dot")
	out, err := runGrid(t, "topo", "show", filepath.Join("..", "..", "..", "topologies", "testbed.yaml"), "--svg", svg, "--dot="+dot, "--addresses")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"topology testbed", "PS:           ps on s1:p3", "10.0.9.1/24", "wrote " + svg, "wrote " + dot} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{svg, dot} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

func TestTopoShowReportsFileLineAndField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("nodes:\n  - {name: s1, kind: switch}\n  - {name: h1, kind: host}\nlinks:\n  - {endpoints: [\"s1:p1\", \"h9:eth0\"]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runGrid(t, "topo", "show", path)
	if err == nil || err.Error() != path+`:5: links[0].endpoints: unknown node "h9"` {
		t.Errorf("error = %v", err)
	}
}
