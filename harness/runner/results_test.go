package runner

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/controller"
	"github.com/grid-ina/grid/harness/endpoint"
	"github.com/grid-ina/grid/harness/monitor"
	"github.com/grid-ina/grid/harness/results"
	"github.com/grid-ina/grid/harness/topo"
)

func TestExperimentBecomesAResultsFolderWithRefusedPlansKept(t *testing.T) {
	began := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	report := func(role string) *endpoint.Report {
		return &endpoint.Report{Role: role, Job: 1, Fragments: 4, Completed: 4, Verified: true, Checked: 4,
			Start: began.Add(time.Second), Done: began.Add(2 * time.Second), End: began.Add(2 * time.Second)}
	}
	links := []monitor.LinkInfo{{Index: 0, A: "s1:p1", B: "w1:eth0", NodeA: "s1", NodeB: "w1"}}
	exp := &Experiment{Run: "r", Topology: topo.Testbed(), Fragments: 4, Values: 32, Began: began, Ended: began.Add(3 * time.Second),
		Outcomes: []*Outcome{
			{Algorithm: "atp", Refused: "workers split over two nodes"},
			{Algorithm: "grid-paths", Began: began.Add(time.Second), Ended: began.Add(2 * time.Second), Links: links,
				Jobs:     []JobOutcome{{Name: "job1", ID: 1, PS: report(endpoint.RolePS), Workers: []*endpoint.Report{report(endpoint.RoleWorker)}}},
				Traffic:  []results.LinkSample{{Time: began.Add(time.Second), Link: 0}, {Time: began.Add(2 * time.Second), Link: 0, AB: results.Count{Bytes: 190, Packets: 1}}},
				Switches: []controller.Counters{{Switch: "s1", Ports: []controller.PortCounter{{Port: 1}}, Jobs: map[uint16]controller.JobStats{1: {4, 3, 1}}}}},
		}}
	r := exp.Results("r-1", map[string][]byte{"plan.json": []byte("{}\n")})
	if r.Hosts != 9 || r.Switches != 3 || len(r.Links) != 1 || len(r.Algorithms) != 2 || r.Algorithms[0].Refused == "" || len(r.Algorithms[1].Switches) != 1 {
		t.Fatalf("got %+v", r)
	}
	if got := r.Algorithms[1].Traffic[1].AB; got.Bytes != 190 || got.Packets != 1 {
		t.Errorf("second sample's record counts %+v, want 190 bytes in 1 packet", got)
	}
	if got := r.Algorithms[1].Switches[0].Jobs[1]; len(r.Events) != len(got) || got[0] != 4 || got[2] != 1 {
		t.Errorf("switch counters as records: events %v counts %v, want 4 received, 1 emitted", r.Events, got)
	}
	dir, err := results.Write(t.TempDir(), r)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"summary.json", "traffic.csv", "jobs.csv", "aggregation.csv", "plan.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}
