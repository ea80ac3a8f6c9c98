package results

import (
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/monitor"
	"github.com/grid-ina/grid/harness/topo"
)

// TestTrafficOfARealRunIsWrittenExactly samples a real fabric run while a
// host sends known frames, and checks the written traffic.csv carries
// exactly those bytes on that link and nothing elsewhere.
func TestTrafficOfARealRunIsWrittenExactly(t *testing.T) {
	if err := fabric.CanBuild(); err != nil {
		t.Skipf("cannot build network namespaces here (CI runs the tests as root): %v", err)
	}
	tp, err := topo.Parse([]byte(`name: pair
nodes:
  - {name: s1, kind: switch}
  - {name: h1, kind: host}
  - {name: h2, kind: host}
links:
  - {endpoints: ["s1:p1", "h1:eth0"]}
  - {endpoints: ["s1:p2", "h2:eth0"]}
`), "pair.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 3)
	rand.Read(b)
	run := "gr" + hex.EncodeToString(b)
	t.Cleanup(func() { fabric.Clean(run) })
	st, err := fabric.Up(context.Background(), tp, fabric.Options{Name: run})
	if err != nil {
		t.Fatal(err)
	}
	m, err := monitor.New(st, monitor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	began := time.Now()
	fd, err := st.Node("h1").OpenPort(0)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 200)
	frame[0], frame[12], frame[13] = 0x02, 0x88, 0xb5
	for range 20 {
		if _, err := unix.Write(fd, frame); err != nil {
			t.Fatal(err)
		}
	}
	unix.Close(fd)
	if err := m.Sample(); err != nil {
		t.Fatal(err)
	}
	e := &Experiment{Name: run, Run: run, Topology: "pair", Began: began, Ended: time.Now(), Links: m.Links(),
		Algorithms: []AlgorithmRun{{Algorithm: "none", Began: began, Ended: time.Now(), Traffic: m.LinkSamples()}}}
	dir, err := Write(t.TempDir(), e)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "traffic.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Header, then two samples of two links; the last two rows are the second sample.
	if len(rows) != 5 {
		t.Fatalf("traffic.csv has %d rows, want 5:\n%v", len(rows), rows)
	}
	want := map[string][]string{
		"s1:p1": {"none", "s1:p1", "h1:eth0", "0", "0", "4000", "20"},
		"s1:p2": {"none", "s1:p2", "h2:eth0", "0", "0", "0", "0"},
	}
	for _, r := range rows[3:] {
		got := append([]string{r[0]}, r[3:]...)
		if w := want[r[3]]; len(w) == 0 || !slices.Equal(got, w) {
			t.Errorf("traffic.csv row %v, want %v", r, w)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "traffic-none.png")); err != nil {
		t.Errorf("no traffic plot: %v", err)
	}
}
