package runner

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/monitor"
	"github.com/grid-ina/grid/harness/monitor/monitortest"
	"github.com/grid-ina/grid/harness/results"
)

// TestTrafficOfARealRunIsWrittenExactly samples a real fabric run while a
// host sends known frames, and checks that the monitor's samples, as
// records, become a traffic.csv carrying exactly those bytes on that link
// and nothing elsewhere.
func TestTrafficOfARealRunIsWrittenExactly(t *testing.T) {
	st := monitortest.Up(t, monitortest.Pair)
	m, err := monitor.New(st, monitor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	began := time.Now()
	h1 := monitortest.NewSender(t, st, "h1", 200)
	h1.SendN(t, 20)
	h1.Close()
	if err := m.Sample(); err != nil {
		t.Fatal(err)
	}
	e := &results.Experiment{Name: st.Run, Run: st.Run, Topology: "pair", Began: began, Ended: time.Now(), Links: LinkRecords(m.Links()),
		Algorithms: []results.AlgorithmRun{{Algorithm: "none", Began: began, Ended: time.Now(), Traffic: SampleRecords(m.LinkSamples())}}}
	dir, err := results.Write(t.TempDir(), e)
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
