package workload

import (
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/topo"
)

func TestDefaultJobTakesThePSAndEveryWorkerOfTheTopology(t *testing.T) {
	jobs, err := Default(topo.PaperFig1())
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].PS != "ps" || len(jobs[0].Workers) != 8 || jobs[0].Workers[0] != "w1" {
		t.Fatalf("got %+v, want one job with PS ps and workers w1..w8", jobs)
	}
}

func TestParseReadsTwoJobsWithModelAndRateCap(t *testing.T) {
	src := "jobs:\n  - name: a\n    ps: ps\n    workers: [w1, w2]\n    model: VGG16\n    max_rate: 2Gbps\n  - name: b\n    ps: w8\n    workers: [w3]\n"
	jobs, err := Parse([]byte(src), "two.yaml", topo.PaperFig1())
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].Model != "vgg16" || jobs[0].MaxRate != 2*topo.Gbps || jobs[1].PS != "w8" || jobs[1].Line != 7 {
		t.Fatalf("got %+v", jobs)
	}
	if Models["vgg16"].GradientBytes() < 500_000_000 {
		t.Errorf("VGG16 gradient %d bytes, want over 500 MB", Models["vgg16"].GradientBytes())
	}
}

func TestParseBadJobsNameFileLineAndField(t *testing.T) {
	cases := []struct{ src, want string }{
		{"jobs:\n  - name: a\n    ps: ps\n    workers: [w1, w99]\n", `bad.yaml:4: jobs[0].workers[1]: unknown host "w99"`},
		{"jobs:\n  - name: a\n    ps: s1\n    workers: [w1]\n", `bad.yaml:3: jobs[0].ps: s1 is a switch`},
		{"jobs:\n  - name: a\n    ps: ps\n    workers: [w1]\n  - name: b\n    ps: ps\n    workers: [w1]\n", `bad.yaml:7: jobs[1].workers[0]: host w1 is already a worker of job a`},
		{"jobs:\n  - name: a\n    ps: ps\n    workers: [w1]\n    max_rate: 3\n", `bad.yaml:5: jobs[0].max_rate: bandwidth "3"`},
		{"jobs:\n  - name: a\n    ps: ps\n    workers: [w1]\n    colour: red\n", `bad.yaml:5: jobs[0].colour: unknown key`},
		{"jobs:\n  - name: a\n    workers: [w1]\n", `bad.yaml:2: jobs[0].ps: missing`},
		{"jobs:\n  - name: a\n    ps: ps\n    workers: [w1]\n    model: gpt9\n", `bad.yaml:5: jobs[0].model: unknown model "gpt9"`},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.src), "bad.yaml", topo.PaperFig1())
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("source\n%s\ngave %v, want prefix %q", c.src, err, c.want)
		}
	}
}

func TestParseRejectsAWorkerThatReachesItsPSOnlyThroughAHost(t *testing.T) {
	// w2 is dual-homed to s1 and s2; w3 on s2 could reach the PS on s1 only
	// by passing through w2, which forwards nothing.
	tp, err := topo.Parse([]byte(`name: bridge
nodes:
  - {name: s1, kind: switch, programmable: true, capacity: 10Gbps}
  - {name: s2, kind: switch, programmable: true, capacity: 10Gbps}
  - {name: w1, kind: host, role: worker}
  - {name: w2, kind: host, role: worker}
  - {name: w3, kind: host, role: worker}
  - {name: ps, kind: host, role: ps}
links:
  - {endpoints: ["s1:p1", "w1:eth0"], bandwidth: 10Gbps}
  - {endpoints: ["s1:p2", "w2:eth0"], bandwidth: 10Gbps}
  - {endpoints: ["s2:p1", "w3:eth0"], bandwidth: 10Gbps}
  - {endpoints: ["s1:p3", "ps:eth0"], bandwidth: 10Gbps}
  - {endpoints: ["s2:p2", "w2:eth1"], bandwidth: 10Gbps}
`), "bridge.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse([]byte("jobs:\n  - name: j1\n    ps: ps\n    workers: [w1, w2, w3]\n"), "jobs.yaml", tp)
	want := `jobs.yaml:4: jobs[0].workers[2]: worker w3 cannot reach its PS ps through switches`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	if _, err := Parse([]byte("jobs:\n  - name: j1\n    ps: ps\n    workers: [w1, w2]\n"), "jobs.yaml", tp); err != nil {
		t.Fatalf("w1 and w2 reach the PS through s1: %v", err)
	}
}
