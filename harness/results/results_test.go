package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/plotutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func worker(job uint16, index int, host string, startMS, doneMS int, verified bool) *Endpoint {
	r := &Endpoint{Role: "worker", Job: job, Index: &index, Host: host, IP: "10.0.0." + host[1:],
		Fragments: 64, Completed: 64, Sent: 70, Resent: 6, Retries: 1, Controls: 2, Verified: verified,
		Start: at(startMS), Done: at(doneMS), End: at(doneMS + 1)}
	if !verified {
		r.Completed, r.Done = 60, time.Time{}
		r.Failure = fmt.Sprintf("job %d worker %d (%s): deadline exceeded (60 of 64 fragments complete)", job, index, r.IP)
	}
	last := r.Done
	if last.IsZero() {
		last = r.End
	}
	r.Seconds = last.Sub(r.Start).Seconds()
	r.GoodputBitsPerSec = float64(r.Completed) * 32 * 32 / r.Seconds
	return r
}

func ps(job uint16, startMS, endMS int) *Endpoint {
	return &Endpoint{Role: "ps", Job: job, Host: "h9", IP: "10.0.0.9", Fragments: 64, Completed: 64,
		Verified: true, Start: at(startMS), Done: at(endMS - 5), End: at(endMS), Seconds: float64(endMS-5-startMS) / 1000}
}

// traffic: workers h1 and h2 send to the PS h9 through s1; counters start
// high, as when the monitor ran before this algorithm did.
func traffic(startMS int, perSecond uint64) []LinkSample {
	var out []LinkSample
	for sec := 0; sec <= 2; sec++ {
		n := uint64(sec)
		tm := at(startMS + 1000*sec)
		out = append(out,
			LinkSample{Time: tm, Link: 0, AB: Count{Bytes: 500, Packets: 5}, BA: Count{Bytes: 1000 + n*perSecond, Packets: 10 + n*10}},
			LinkSample{Time: tm, Link: 1, AB: Count{}, BA: Count{Bytes: n * perSecond / 2, Packets: n * 5}},
			LinkSample{Time: tm, Link: 2, AB: Count{Bytes: n * perSecond, Packets: n * 10}, BA: Count{Bytes: n * 100, Packets: n}},
		)
	}
	return out
}

// events are the aggregator's event names (gradproto.Event), as the
// runner passes them.
var events = []string{"received", "absorbed", "emitted", "collision", "duplicate", "overflow", "capacity", "passed", "reclaimed"}

func experiment() *Experiment {
	return &Experiment{
		Name: "line-20261130T120000Z", Run: "line", Topology: "line", Hosts: 3, Switches: 1,
		Fragments: 64, Values: 32, Switch: "bmv2 simple_switch_grpc", Compiler: "p4c-bm2-ss", Began: t0, Ended: at(9000),
		Links: []Link{
			{A: "s1:p1", B: "h1:eth0", NodeA: "s1", NodeB: "h1"},
			{A: "s1:p2", B: "h2:eth0", NodeA: "s1", NodeB: "h2"},
			{A: "s1:p3", B: "h9:eth0", NodeA: "s1", NodeB: "h9"},
		},
		Events: events,
		Algorithms: []AlgorithmRun{
			{Algorithm: "grid-paths", Began: at(1000), Ended: at(3500),
				Jobs: []Job{{Name: "job1", ID: 1, PS: ps(1, 1000, 3500),
					Workers: []*Endpoint{worker(1, 0, "h1", 1100, 3100, true), worker(1, 1, "h2", 1200, 3300, true)}}},
				Traffic: traffic(1000, 40000),
				Switches: []SwitchCounters{{Switch: "s1",
					Ports: []PortCount{
						{Port: 1, Rx: Count{Packets: 20, Bytes: 80000}},
						{Port: 2, Rx: Count{Packets: 10, Bytes: 40000}},
						{Port: 3, Tx: Count{Packets: 20, Bytes: 80000}},
					},
					Jobs: map[uint16][]uint64{1: {128, 64, 64}},
				}}},
			{Algorithm: "atp", Refused: "ATP splits job1's workers across racks"},
			{Algorithm: "switchml", Began: at(5000), Ended: at(9000),
				Jobs: []Job{{Name: "job1", ID: 1, PS: ps(1, 5000, 9000),
					Workers: []*Endpoint{worker(1, 0, "h1", 5100, 8000, true), worker(1, 1, "h2", 5100, 8800, false)}}},
				Traffic: traffic(5000, 80000)},
		},
		Files: map[string][]byte{"plan.json": []byte("{}\n"), "comparison.txt": []byte("grid-paths wins\n")},
	}
}

func golden(t *testing.T, dir, name string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s:\n%s", name, path, got)
	}
}

func TestWriteMatchesGoldenSummaryTrafficAndJobs(t *testing.T) {
	root := filepath.Join(t.TempDir(), "results")
	dir, err := Write(root, experiment())
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(root, "line-20261130T120000Z") {
		t.Errorf("folder %s", dir)
	}
	for _, name := range []string{"summary.json", "traffic.csv", "jobs.csv", "switches.csv", "aggregation.csv"} {
		golden(t, dir, name)
	}
	extra, err := os.ReadFile(filepath.Join(dir, "comparison.txt"))
	if err != nil || string(extra) != "grid-paths wins\n" {
		t.Errorf("comparison.txt = %q, %v", extra, err)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Errorf("results root holds %d entries, want only the folder (no temporary one)", len(entries))
	}
}

func TestPlotsAreDecodablePNGsOfPlausibleSize(t *testing.T) {
	dir, err := Write(t.TempDir(), experiment())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"completion.png", "ps-ingress-grid-paths.png", "ps-ingress-switchml.png", "traffic-grid-paths.png", "traffic-switchml.png"}
	got, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	if len(got) != len(want) {
		t.Errorf("plots %v, want %v (none for the refused atp)", got, want)
	}
	for _, name := range want {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		b := img.Bounds()
		if b.Dx() < 400 || b.Dy() < 250 || b.Dx() > 4000 || b.Dy() > 2000 {
			t.Errorf("%s is %dx%d pixels", name, b.Dx(), b.Dy())
		}
		colors := map[[4]uint32]bool{}
		for y := b.Min.Y; y < b.Max.Y; y += 3 {
			for x := b.Min.X; x < b.Max.X; x += 3 {
				r, g, bl, a := img.At(x, y).RGBA()
				colors[[4]uint32{r, g, bl, a}] = true
			}
		}
		if len(colors) < 4 {
			t.Errorf("%s has %d colours: nothing drawn", name, len(colors))
		}
	}
}

func TestAFailingWriteLeavesNoFolder(t *testing.T) {
	root := t.TempDir()
	e := experiment()
	e.Files["jobs.csv"] = []byte("the runner's own jobs.csv\n") // clashes with the writer's, which is written first
	_, err := Write(root, e)
	if err == nil || !strings.Contains(err.Error(), "jobs.csv") {
		t.Fatalf("Write with a clashing file: %v, want an error naming jobs.csv", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("a failed write left %d entries under the root (%s ...)", len(entries), entries[0].Name())
	}
}

func TestAnExistingFolderIsNeverOverwritten(t *testing.T) {
	root := t.TempDir()
	if _, err := Write(root, experiment()); err != nil {
		t.Fatal(err)
	}
	e := experiment()
	e.Files = map[string][]byte{"plan.json": []byte("changed")}
	if _, err := Write(root, e); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("second Write of the same name: %v, want an error saying it exists", err)
	}
	plan, _ := os.ReadFile(filepath.Join(root, e.Name, "plan.json"))
	if string(plan) != "{}\n" {
		t.Errorf("plan.json was overwritten: %q", plan)
	}
	if _, err := os.Stat(filepath.Join(root, ".tmp-"+e.Name)); err == nil {
		t.Error("temporary folder left behind")
	}
}

func TestAWriterFindingAnotherOnesTemporaryFolderStops(t *testing.T) {
	root := t.TempDir()
	e := experiment()
	if err := os.Mkdir(filepath.Join(root, ".tmp-"+e.Name), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(root, e); err == nil || !strings.Contains(err.Error(), "another writer") {
		t.Fatalf("Write beside another writer's folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, ".tmp-"+e.Name)); err != nil {
		t.Errorf("the other writer's folder was removed: %v", err)
	}
}

func TestBadExperimentsAreRefusedNamingTheFieldAndWriteNothing(t *testing.T) {
	cases := []struct {
		change func(*Experiment)
		want   string
	}{
		{func(e *Experiment) { e.Name = "../up" }, `name "../up"`},
		{func(e *Experiment) { e.Began = time.Time{} }, "began: not set"},
		{func(e *Experiment) { e.Algorithms[2].Algorithm = "grid-paths" }, `algorithms[2].algorithm "grid-paths" appears twice`},
		{func(e *Experiment) { e.Algorithms[0].Algorithm = "a/b" }, `algorithms[0].algorithm "a/b"`},
		{func(e *Experiment) { e.Algorithms[0].Jobs[0].PS = nil }, "algorithms[0] (grid-paths).jobs[0] (job1): no PS report"},
		{func(e *Experiment) { e.Algorithms[2].Jobs[0].Workers[1] = nil }, "algorithms[2] (switchml).jobs[0] (job1).workers[1]: no report"},
		{func(e *Experiment) { e.Algorithms[0].Traffic[4].Link = 3 }, "algorithms[0] (grid-paths).traffic[4].link 3: the experiment has 3 links"},
		{func(e *Experiment) { e.Files["../x"] = nil }, `files["../x"]`},
	}
	for _, c := range cases {
		root := t.TempDir()
		e := experiment()
		c.change(e)
		_, err := Write(root, e)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Write: %v, want an error containing %q", err, c.want)
		}
		if entries, _ := os.ReadDir(root); len(entries) != 0 {
			t.Errorf("refused experiment (%s) left %d entries", c.want, len(entries))
		}
	}
}

func TestJobCompletionRunsFromTheFirstWorkerStartToTheLastResult(t *testing.T) {
	e := experiment()
	c := e.Algorithms[0].Jobs[0].Completion()
	if !c.Start.Equal(at(1100)) || !c.End.Equal(at(3300)) || c.Seconds != 2.2 || !c.Verified {
		t.Errorf("completion %+v, want 1.1 s to 3.3 s, 2.2 s, verified", c)
	}
	// An unfinished worker counts until it stopped and fails the job.
	c = e.Algorithms[2].Jobs[0].Completion()
	if !c.Start.Equal(at(5100)) || !c.End.Equal(at(8801)) || c.Verified {
		t.Errorf("completion with an unfinished worker %+v, want 5.1 s to its end at 8.801 s, unverified", c)
	}
}

func TestDirsAreCopiedInRecursively(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "job1"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "job1", "ps.json"), []byte(`{"role":"ps"}`), 0o644)
	os.WriteFile(filepath.Join(src, "spec.json"), []byte(`{}`), 0o644)
	e := experiment()
	e.Dirs = map[string]string{"endpoints": src}
	dir, err := Write(t.TempDir(), e)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "endpoints", "job1", "ps.json"))
	if err != nil || string(got) != `{"role":"ps"}` {
		t.Errorf("endpoints/job1/ps.json = %q, %v", got, err)
	}
	summary, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if !strings.Contains(string(summary), `"endpoints/"`) {
		t.Errorf("summary.json does not list endpoints/")
	}
}

func TestADirectoryThatCannotBeCopiedLeavesNoFolder(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.json"), []byte(`{}`), 0o644)
	if err := os.Symlink("/etc/hostname", filepath.Join(src, "z-link")); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	e := experiment()
	e.Dirs = map[string]string{"endpoints": src}
	if _, err := Write(root, e); err == nil || !strings.Contains(err.Error(), "z-link: not a regular file") {
		t.Fatalf("Write copying a symlink: %v, want an error naming it", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("a failed copy left %d entries under the root", len(entries))
	}
	e.Dirs = map[string]string{"endpoints": filepath.Join(src, "missing")}
	if _, err := Write(root, e); err == nil || !strings.Contains(err.Error(), `dirs["endpoints"]`) {
		t.Errorf("Write with a missing directory: %v", err)
	}
}

// pixelsOf counts the pixels of the PNG at path that have colour c.
func pixelsOf(t *testing.T, path string, c color.Color) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	r0, g0, b0, _ := c.RGBA()
	n := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			if r, g, b, _ := img.At(x, y).RGBA(); r == r0 && g == g0 && b == b0 {
				n++
			}
		}
	}
	return n
}

func TestAnAlgorithmWhoseJobFailedIsDrawnInTheFailureColour(t *testing.T) {
	failure := plotutil.Color(0)
	wrong := experiment()
	// switchml's worker h2 finished, with a wrong sum.
	wrong.Algorithms[2].Jobs[0].Workers[1].Done = at(8800)
	dir, err := Write(t.TempDir(), wrong)
	if err != nil {
		t.Fatal(err)
	}
	if n := pixelsOf(t, filepath.Join(dir, "completion.png"), failure); n < 500 {
		t.Errorf("completion.png has %d pixels of the failure colour, want switchml's bar", n)
	}
	e := experiment()
	e.Algorithms = e.Algorithms[:2] // grid-paths verified, atp refused
	dir, err = Write(t.TempDir(), e)
	if err != nil {
		t.Fatal(err)
	}
	if n := pixelsOf(t, filepath.Join(dir, "completion.png"), failure); n != 0 {
		t.Errorf("completion.png of verified jobs has %d pixels of the failure colour", n)
	}
}

func TestAFailedExperimentIsMarkedWithItsReason(t *testing.T) {
	e := experiment()
	e.Status, e.Reason = StatusFailed, "grid-paths plan: worker w1 exited"
	e.Algorithms[0].Failed = e.Reason
	dir, err := Write(t.TempDir(), e)
	if err != nil {
		t.Fatal(err)
	}
	failure, err := os.ReadFile(filepath.Join(dir, "failure.txt"))
	if err != nil || string(failure) != "failed: grid-paths plan: worker w1 exited\n" {
		t.Errorf("failure.txt: %q, %v", failure, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Status != StatusFailed || s.Reason != e.Reason || s.Verified || s.Algorithms[0].Failed != e.Reason || s.Algorithms[0].Verified {
		t.Errorf("summary: status %q reason %q verified %v, first algorithm %+v", s.Status, s.Reason, s.Verified, s.Algorithms[0])
	}
	e.Name, e.Status = e.Name+"-2", "crashed"
	if _, err := Write(t.TempDir(), e); err == nil || !strings.Contains(err.Error(), `status "crashed"`) {
		t.Errorf("an unknown status: %v", err)
	}
}
