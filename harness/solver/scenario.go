package solver

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// Scenario is one of the paper's large-scale simulation settings (Sec. 6.3).
type Scenario struct {
	Name string
	// Fabric is "fattree" (topo.FatTree(8, 6): 80 switches, 192 servers) or
	// "leafspine" (topo.LeafSpine(30, 30, 500): 60 switches, 500 servers).
	Fabric string
	// Programmable is "tor" (edge or leaf switches) or "random20" (a random 20% of all switches).
	Programmable string
}

// PaperScenarios are the four settings of the paper's Figs. 11-16.
func PaperScenarios() []Scenario {
	return []Scenario{
		{"fattree-tor", "fattree", "tor"},
		{"fattree-random20", "fattree", "random20"},
		{"leafspine-leaf", "leafspine", "tor"},
		{"leafspine-random20", "leafspine", "random20"},
	}
}

// Capacity range of programmable switches in the paper's simulation.
const (
	MinSimCapacity = 100 * topo.Gbps
	MaxSimCapacity = 3200 * topo.Gbps
)

// Build makes the scenario's topology and one job with the given number of
// workers: programmable switches chosen by the scenario and given capacities
// uniform in [MinSimCapacity, MaxSimCapacity], the generator's PS (the last
// host) and workers drawn at random from the other hosts, all seeded.
func (s Scenario) Build(workers int, seed uint64) (*topo.Topology, []workload.Job, error) {
	var t *topo.Topology
	var err error
	switch s.Fabric {
	case "fattree":
		t, err = topo.FatTree(8, 6)
	case "leafspine":
		t, err = topo.LeafSpine(30, 30, 500)
	default:
		return nil, nil, fmt.Errorf("scenario %s: unknown fabric %q (fattree or leafspine)", s.Name, s.Fabric)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	rng := rand.New(rand.NewPCG(seed, 0xc0ffee))
	switches := t.Switches()
	for _, sw := range switches {
		sw.Programmable, sw.Capacity = false, 0
	}
	var prog []*topo.Node
	switch s.Programmable {
	case "tor":
		for _, sw := range switches {
			if sw.Tier == topo.TierEdge || sw.Tier == topo.TierLeaf {
				prog = append(prog, sw)
			}
		}
	case "random20":
		perm := rng.Perm(len(switches))
		for _, i := range perm[:(len(switches)+4)/5] {
			prog = append(prog, switches[i])
		}
	default:
		return nil, nil, fmt.Errorf("scenario %s: unknown programmable set %q (tor or random20)", s.Name, s.Programmable)
	}
	for _, sw := range prog {
		sw.Programmable = true
		sw.Capacity = MinSimCapacity + topo.Bandwidth(rng.Float64())*(MaxSimCapacity-MinSimCapacity)
	}
	ps := t.PSs()
	if len(ps) != 1 {
		return nil, nil, fmt.Errorf("scenario %s: generator made %d PS hosts, want 1", s.Name, len(ps))
	}
	var hosts []string
	for _, h := range t.Hosts() {
		if h.Name != ps[0].Name {
			hosts = append(hosts, h.Name)
		}
	}
	if workers < 1 || workers > len(hosts) {
		return nil, nil, fmt.Errorf("scenario %s: %d workers asked, the fabric has %d hosts besides the PS", s.Name, workers, len(hosts))
	}
	perm := rng.Perm(len(hosts))
	chosen := make([]string, workers)
	for i := range chosen {
		chosen[i] = hosts[perm[i]]
	}
	slices.Sort(chosen)
	return t, []workload.Job{{Name: "job1", PS: ps[0].Name, Workers: chosen}}, nil
}

// MaxWorkers is the largest worker count the scenario's fabric allows.
func (s Scenario) MaxWorkers() int {
	if s.Fabric == "leafspine" {
		return 499
	}
	return 191
}
