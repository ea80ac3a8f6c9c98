package endpointhost

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/grid-ina/grid/harness/dataplane/nstest"
	"github.com/grid-ina/grid/harness/endpoint"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/p4test/targettest"
)

func TestMain(m *testing.M) { targettest.Main(m) }

// jobSpec writes a job of workers workers and fragments fragments whose
// PS aggregates everyone and answers each worker directly (no switch), at
// addresses addr(0) (PS), addr(1)... (workers); it returns the file.
func jobSpec(t testing.TB, dir string, workers, fragments int, addr func(int) string) string {
	t.Helper()
	s := &endpoint.Spec{
		Job:       endpoint.Job{ID: 3, PSNode: 1000, PSIP: addr(0), Values: 32},
		Fragments: fragments, Seed: 5, Window: endpoint.Window{Initial: 4, Max: 32},
		Timeout: endpoint.Duration(50 * time.Millisecond), Deadline: endpoint.Duration(20 * time.Second),
		Results: endpoint.ResultsUnicast, Start: endpoint.StartSignal,
	}
	for i := range workers {
		s.Job.Members = append(s.Job.Members, endpoint.Member{IP: addr(i + 1), Node: 1000, Slot: i})
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "job3.json")
	b, err := jsonOf(s)
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// hostSpec is the job's PS and workers, each in namespaces[i] ("" when
// namespaces is shorter), their files in dir.
func hostSpec(dir, job string, workers int, namespaces []string) *Spec {
	s := &Spec{}
	for i := -1; i < workers; i++ {
		e := Endpoint{Name: "job3-ps", Spec: job, Role: endpoint.RolePS}
		if i >= 0 {
			e = Endpoint{Name: fmt.Sprintf("job3-worker%d", i), Spec: job, Role: endpoint.RoleWorker, Index: i}
		}
		if i+1 < len(namespaces) {
			e.Namespace = namespaces[i+1]
		}
		e.Report, e.Log = filepath.Join(dir, e.Name+".report.json"), filepath.Join(dir, e.Name+".log")
		s.Endpoints = append(s.Endpoints, e)
	}
	return s
}

func TestHostRunsAJobAndEveryEndpointKeepsItsReportAndLog(t *testing.T) {
	dir := t.TempDir()
	x, y := 1+rand.IntN(250), 1+rand.IntN(250)
	job := jobSpec(t, dir, 3, 200, func(n int) string { return fmt.Sprintf("127.%d.%d.%d", x, y, 10+n) })
	h, err := Open(context.Background(), hostSpec(dir, job, 3, nil))
	if err != nil {
		t.Fatal(err)
	}
	if h.Len() != 4 {
		t.Fatalf("%d endpoints, want 4", h.Len())
	}
	start := make(chan struct{})
	close(start)
	unverified, err := h.Run(context.Background(), start)
	if err != nil || len(unverified) > 0 {
		t.Fatalf("run: %v; unverified %v", err, unverified)
	}
	for _, name := range []string{"job3-ps", "job3-worker0", "job3-worker1", "job3-worker2"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".report.json"))
		if err != nil || !strings.Contains(string(b), `"verified": true`) || !strings.Contains(string(b), `"completed": 200`) {
			t.Errorf("%s's report: %v\n%s", name, err, b)
		}
		log, err := os.ReadFile(filepath.Join(dir, name+".log"))
		if err != nil || !strings.Contains(string(log), "200/200 fragments") || !strings.Contains(string(log), "all sums exact") {
			t.Errorf("%s's log has no summary: %v\n%s", name, err, log)
		}
	}
}

// Each endpoint's address exists only in its own namespace: the host can
// bind them all only by opening each socket inside its namespace.
func TestHostOpensEachSocketInItsHostsNamespace(t *testing.T) {
	dir := t.TempDir()
	const workers = 3
	addr := func(n int) string { return fmt.Sprintf("10.213.%d.1", n) }
	namespaces := hostNamespaces(t, workers+1, addr)
	job := jobSpec(t, dir, workers, 10, addr)
	if _, err := Open(context.Background(), hostSpec(dir, job, workers, nil)); err == nil || !strings.Contains(err.Error(), "job3-ps") {
		t.Fatalf("without namespaces: %v, want the PS's address refused here", err)
	}
	h, err := Open(context.Background(), hostSpec(dir, job, workers, namespaces))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for i, ep := range h.eps {
		if got := ep.conn.LocalAddr().(*net.UDPAddr).IP.String(); got != addr(i) {
			t.Errorf("%s bound %s, want %s", ep.Name, got, addr(i))
		}
	}
}

func TestSpecNamesTheFirstBadEndpointField(t *testing.T) {
	good := Endpoint{Name: "job1-ps", Spec: "job1.json", Role: endpoint.RolePS, Report: "r.json", Log: "l.log"}
	for _, tc := range []struct {
		edit func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Endpoints = nil }, "endpoints: none"},
		{func(s *Spec) { s.Endpoints[0].Name = "" }, "endpoints[0].name: missing"},
		{func(s *Spec) { s.Endpoints[0].Role = "switch" }, `endpoints[0] (job1-ps).role: "switch"`},
		{func(s *Spec) { s.Endpoints[0].Report = "" }, "endpoints[0] (job1-ps).report: missing"},
		{func(s *Spec) { s.Endpoints = append(s.Endpoints, good) }, "endpoints[1].name: job1-ps is endpoints[0]'s too"},
		{func(s *Spec) {
			e := good
			e.Name = "job1-worker0"
			s.Endpoints = append(s.Endpoints, e)
		}, "endpoints[1] (job1-worker0).report: r.json is endpoints[0]'s too"},
	} {
		s := &Spec{Endpoints: []Endpoint{good}}
		tc.edit(s)
		if err := s.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "endpoints.json")
	os.WriteFile(path, []byte(`{"endpoints": [{"name": "x"}]}`), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "(x).spec: missing") {
		t.Errorf("Load: %v, want the file and the field", err)
	}
}

func jsonOf(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }

// hostNamespaces makes n network namespaces, namespace i with address
// addr(i) on its loopback interface, and returns their paths.
func hostNamespaces(t testing.TB, n int, addr func(int) string) []string {
	t.Helper()
	paths := make([]string, n)
	for i := range n {
		ns := nstest.New(t)
		lo, err := ns.Netlink().LinkByName("lo")
		if err == nil {
			err = ns.Netlink().AddrAdd(lo, &netlink.Addr{IPNet: &net.IPNet{IP: net.ParseIP(addr(i)), Mask: net.CIDRMask(32, 32)}})
		}
		if err != nil {
			t.Fatal(err)
		}
		paths[i] = filepath.Join(fabric.NetnsDir, ns.Name())
	}
	return paths
}
