package workloadtest

import (
	"testing"

	"github.com/grid-ina/grid/harness/topo"
)

func TestRandomFabricsHaveJobsOnDistinctHostsAndProgrammableSwitches(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		tp, jobs := RandomFabric(t, seed, 1)
		if len(jobs) == 0 {
			t.Fatalf("seed %d: no job", seed)
		}
		programmable := 0
		for _, s := range tp.Switches() {
			if s.Programmable {
				programmable++
			}
		}
		if programmable == 0 {
			t.Errorf("seed %d: no programmable switch", seed)
		}
		seen := map[string]bool{}
		for _, j := range jobs {
			for _, h := range append([]string{j.PS}, j.Workers...) {
				if n := tp.Node(h); n == nil || n.Kind != topo.KindHost || seen[h] {
					t.Errorf("seed %d: job %s: host %s unknown or used twice", seed, j.Name, h)
				}
				seen[h] = true
			}
		}
		again, _ := RandomFabric(t, seed, 1)
		if len(again.Nodes) != len(tp.Nodes) {
			t.Errorf("seed %d: a second fabric of the same seed differs", seed)
		}
	}
}
