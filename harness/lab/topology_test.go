package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTopologyKeepsFileOrderAndReadsLinksAsTheTutorialsDo(t *testing.T) {
	tp, err := LoadTopology("testdata/twoswitch/topo/topology.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Switches) != 2 || tp.Switches[0].Name != "s1" || tp.Switches[1].CLIInput != "topo/s2-commands.txt" {
		t.Errorf("switches %+v", tp.Switches)
	}
	if h := tp.Hosts[1]; h.Name != "h2" || h.IP.String() != "10.0.2.2/24" || h.MAC.String() != "08:00:00:00:02:22" || len(h.Commands) != 2 {
		t.Errorf("h2 %+v", h)
	}
	l := tp.Links[1]
	if l.A != (Endpoint{"s1", 2}) || l.B != (Endpoint{"s2", 2}) || l.Latency != 5*time.Millisecond || l.Bandwidth != 100 {
		t.Errorf("link %+v", l)
	}
	if tp.Links[0].A != (Endpoint{"h1", -1}) {
		t.Errorf("a host end is the host alone: %+v", tp.Links[0].A)
	}
}

func TestTopologyErrorsNameTheLineAndTheField(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{"hosts": {"h1": {"ip": "10.0.1.1", "mac": "08:00:00:00:01:11"}}, "switches": {}, "links": []}`,
			`line 1: hosts.h1.ip: "10.0.1.1" is not an IPv4 address with its prefix`},
		{"{\"hosts\": {},\n \"switches\": {\"s1\": {\"runtime_jsn\": \"x\"}}, \"links\": []}",
			`line 2: switches.s1: json: unknown field "runtime_jsn"`},
		{`{"hosts": {"h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11"}}, "switches": {"s1": {}}, "links": [["h1", "s2-p1"]]}`,
			"links[0]: s2-p1 is neither a host nor a switch of the file"},
		{`{"hosts": {}, "switches": {"s1": {}}, "links": [["s1-p1", "s1-p1"]]}`, "links[0]: port s1-p1 is already used by links[0]"},
		{`{"hosts": {}, "switches": {"s1": {}, "s2": {}}, "links": [["s1-p1", "s2-p1", "fast"]]}`, `latency "fast"`},
		{`{"hosts": {}, "switches": {}}`, `no "links"`},
		{`{"hosts": {"h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11"}}, "switches": {}, "links": []}`, "hosts.h1: no link"},
	} {
		path := filepath.Join(t.TempDir(), "topology.json")
		os.WriteFile(path, []byte(tc.json), 0o644)
		_, err := LoadTopology(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s:\ngot  %v\nwant %s: ...%s", tc.json, err, path, tc.want)
		}
	}
}

func TestLoadTakesTheMakefilesTopoAndTheOnlyProgram(t *testing.T) {
	ex, err := Load("testdata/twoswitch")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(ex.Default) != "forward.p4" || !strings.HasSuffix(ex.Topology.Path, "topo/topology.json") {
		t.Errorf("default %s, topology %s", ex.Default, ex.Topology.Path)
	}
	if got := RunName("/x/My Exercise_1"); got != "lab-my-exercise-1" {
		t.Errorf("RunName: %q", got)
	}
}
