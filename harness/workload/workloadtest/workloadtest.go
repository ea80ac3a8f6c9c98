// Package workloadtest generates fabrics with training jobs for property
// tests of the solver and of the plans' deployment.
package workloadtest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/grid-ina/grid/harness/topo"
	"github.com/grid-ina/grid/harness/workload"
)

// RandomFabric is a fat-tree (k=4, even seeds) or a small leaf-spine (odd
// seeds) with a random programmable set and capacities, 10 Gbps links, and
// one to three jobs on random hosts. stream picks the random sequence, so
// each caller keeps its own instances for a seed.
func RandomFabric(t testing.TB, seed, stream uint64) (*topo.Topology, []workload.Job) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, stream))
	var tp *topo.Topology
	var err error
	if seed%2 == 0 {
		tp, err = topo.FatTree(4, 0)
	} else {
		tp, err = topo.LeafSpine(2+rng.IntN(3), 3+rng.IntN(3), 12+rng.IntN(8))
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range tp.Links {
		l.Bandwidth = 10 * topo.Gbps
	}
	torOnly := rng.IntN(2) == 0
	for i, s := range tp.Switches() {
		s.Programmable, s.Capacity = false, 0
		if torOnly && (s.Tier == topo.TierEdge || s.Tier == topo.TierLeaf) || !torOnly && (rng.IntN(3) == 0 || i == 0) {
			s.Programmable = true
			s.Capacity = topo.Bandwidth(10+310*rng.Float64()) * topo.Gbps
		}
	}
	var hosts []string
	for _, h := range tp.Hosts() {
		hosts = append(hosts, h.Name)
	}
	rng.Shuffle(len(hosts), func(i, j int) { hosts[i], hosts[j] = hosts[j], hosts[i] })
	var jobs []workload.Job
	next := 0
	for j := 0; j < 1+rng.IntN(3); j++ {
		n := 2 + rng.IntN(len(hosts)/4)
		if next+n+1 > len(hosts) {
			break
		}
		job := workload.Job{Name: fmt.Sprintf("job%d", j+1), PS: hosts[next]}
		job.Workers = append(job.Workers, hosts[next+1:next+1+n]...)
		next += n + 1
		jobs = append(jobs, job)
	}
	return tp, jobs
}
