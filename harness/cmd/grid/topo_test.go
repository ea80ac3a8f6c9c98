package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/topo"
)

// shippedTopology is the path of a file in the repository's topologies/.
func shippedTopology(t testing.TB, file string) string {
	t.Helper()
	return filepath.Join(repo.RootOrFail(t), "topologies", file)
}

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

func TestTopoGeneratorsNameTheBadFlagAndWriteNothing(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fattree", "--k", "3"}, "topo fattree: --k 3: must be even and at least 2, got 3"},
		{[]string{"fattree", "--k", "0"}, "topo fattree: --k 0: must be even and at least 2, got 0"},
		{[]string{"fattree", "--k", "4", "--hosts-per-edge", "-1"}, "topo fattree: --hosts-per-edge -1: must be positive"},
		{[]string{"fattree", "--k", "200"}, "topo fattree: --k 200: k=200 with 100 hosts per edge switch has 2000000 hosts"},
		{[]string{"leafspine", "--spines", "0", "--leaves", "2", "--hosts", "3"}, "topo leafspine: --spines 0: must be at least 1, got 0"},
		{[]string{"leafspine", "--spines", "2", "--leaves", "2", "--hosts", "20000"}, "topo leafspine: --hosts 20000: 20000 hosts are more than"},
		{[]string{"leafspine", "--spines", "1", "--leaves", "1", "--hosts", "1"}, "topo leafspine: --hosts 1: must be at least 2, got 1: the last host is the PS"},
	} {
		out := filepath.Join(t.TempDir(), "t.yaml")
		_, err := runGrid(t, append(append([]string{"topo"}, c.args...), "-o", out)...)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("grid topo %s: error = %v, want it to start with %q", strings.Join(c.args, " "), err, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("grid topo %s wrote %s despite the error", strings.Join(c.args, " "), out)
		}
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
		want, err := os.ReadFile(shippedTopology(t, file))
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
	out, err := runGrid(t, "topo", "show", shippedTopology(t, "testbed.yaml"), "--svg", svg, "--dot="+dot, "--addresses")
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

func TestTopoNamesAnUnknownSubcommand(t *testing.T) {
	_, err := runGrid(t, "topo", "fatree", "--k", "4")
	if err == nil || !strings.HasPrefix(err.Error(), `topo: no subcommand "fatree" (fattree, leafspine,`) {
		t.Errorf("error = %v", err)
	}
	out, err := runGrid(t, "topo")
	if err != nil || !strings.Contains(out, "COMMANDS:") || !strings.Contains(out, "fattree ") {
		t.Errorf("grid topo without a subcommand: %v\n%s", err, out)
	}
}

// TestTopoShowRefusesRatesTheKernelCannotShape: the 1bps and
// 99999999999999Tbps passed 'grid topo show' and failed in 'grid up'.
func TestTopoShowRefusesRatesTheKernelCannotShape(t *testing.T) {
	for _, rate := range []string{"1bps", "99999999999999Tbps"} {
		file := filepath.Join(t.TempDir(), "rate.yaml")
		yaml := "name: rate\nnodes:\n  - {name: s1, kind: switch}\n  - {name: h1, kind: host}\nlinks:\n  - {endpoints: [\"s1:p1\", \"h1:eth0\"], bandwidth: " + rate + "}\n"
		if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		want := file + ":6: links[0].bandwidth: " + rate + " is outside the 1Kbps..100Tbps the kernel's tbf can shape"
		if _, err := runGrid(t, "topo", "show", file); err == nil || err.Error() != want {
			t.Errorf("bandwidth %s: %v, want %q", rate, err, want)
		}
	}
}
