package aggregator

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/gradproto"
)

// twoSwitchPlan is GRID's off-path case on two switches. S0 has the PS
// (port 0), workers 0 and 1 (ports 1, 2) and a link to S1 (port 3); S1 has
// workers 2 and 3 (ports 1, 2) and the link (port 3). Workers 0, 2 and 3
// aggregate at S1 (node 2), so worker 0's fragments leave the shortest path
// to the PS: S0 sends them to S1 by grad_route and S1's partial sums come
// back through S0. Worker 1 sends directly to the PS (node 1000).
func twoSwitchPlan(job uint16) (*gradproto.Plan, [2]gradproto.SwitchConfig, map[gradproto.Attach]gradproto.Attach, []gradproto.Attach) {
	const s1Node, psNode = 2, 1000
	psIP := netip.AddrFrom4([4]byte{10, 0, 0, 100})
	plan := &gradproto.Plan{Job: job, PSNode: psNode, PSIP: psIP, Gateway: gradproto.SwitchPortMAC(0), Values: 32}
	at := []gradproto.Attach{{Switch: 0, Port: 1}, {Switch: 0, Port: 2}, {Switch: 1, Port: 1}, {Switch: 1, Port: 2}}
	slots := []struct {
		node uint16
		slot uint8
	}{{s1Node, 0}, {psNode, 0}, {s1Node, 1}, {s1Node, 2}}
	for i := range at {
		plan.Members = append(plan.Members, gradproto.Member{
			IP: netip.AddrFrom4([4]byte{10, 0, 1, byte(i + 1)}), MAC: gradproto.HostMAC(i + 1), Node: slots[i].node, Slot: slots[i].slot})
	}
	mac := func(sw, port int) gradproto.MAC { return gradproto.SwitchPortMAC(sw*100 + port) }
	var cfg [2]gradproto.SwitchConfig
	for sw := 0; sw < 2; sw++ {
		c := &cfg[sw]
		for p := 0; p <= 3; p++ {
			c.Ports = append(c.Ports, gradproto.PortMAC{Port: uint16(p), MAC: mac(sw, p)})
		}
		// Towards the other switch: its link port's MAC is the next hop.
		peer := gradproto.Route{Port: 3, NextHop: mac(1-sw, 3)}
		ps := peer
		if sw == 0 {
			ps = gradproto.Route{Port: 0, NextHop: gradproto.HostMAC(0)}
		}
		ps.Prefix = netip.PrefixFrom(psIP, 32)
		c.Routes = append(c.Routes, ps)
		group := gradproto.ResultGroup{Job: job, Group: 10}
		if sw == 1 {
			group.InPort = 3 // results reach S1 from S0
		}
		if sw == 0 {
			group.Ports = append(group.Ports, 3) // the result tree continues to S1
		}
		for i, m := range plan.Members {
			r := peer
			if at[i].Switch == sw {
				r = gradproto.Route{Port: at[i].Port, NextHop: m.MAC}
				group.Ports = append(group.Ports, at[i].Port)
				c.ResultHosts = append(c.ResultHosts, gradproto.ResultHost{Job: job, Port: at[i].Port, MAC: m.MAC, IP: m.IP})
			}
			r.Prefix = netip.PrefixFrom(m.IP, 32)
			c.Routes = append(c.Routes, r)
		}
		c.ResultGroups = []gradproto.ResultGroup{group}
	}
	cfg[0].GradRoutes = []gradproto.GradRoute{{Job: job, Node: s1Node, Src: plan.Members[0].IP, Port: 3, NextHop: mac(1, 3)}}
	cfg[1].Aggregations = []gradproto.Aggregation{{Job: job, Node: s1Node, FanIn: 3}}
	links := map[gradproto.Attach]gradproto.Attach{{Switch: 0, Port: 3}: {Switch: 1, Port: 3}}
	return plan, cfg, links, at
}

// TestOffPathAggregationAcrossTwoSwitchesSurvivesAnySingleLoss runs a job
// over two engine switches configured by Entries from a two-switch plan,
// losing each transmission in turn, with every output compared with the
// reference model.
func TestOffPathAggregationAcrossTwoSwitchesSurvivesAnySingleLoss(t *testing.T) {
	const job = 4
	prog := compileForEngine(t, Build{})
	plan, cfgs, links, at := twoSwitchPlan(job)
	grads := gradproto.RandomGradients(rand.New(rand.NewPCG(5, 6)), len(plan.Members), 2, 32, false)
	for lose := 0; ; lose++ {
		var engines [2]*EngineFabric
		var models [2]*gradproto.Switch
		net := &gradproto.Network{Links: links, Jobs: []*gradproto.Job{{Plan: plan, PS: gradproto.Attach{Switch: 0, Port: 0}, Workers: at, Grads: grads}}}
		net.Clock = gradproto.NewClock()
		for sw, cfg := range cfgs {
			engines[sw], models[sw] = newPair(t, prog, cfg, Build{}, net.Clock)
			net.Switches = append(net.Switches, &lockstep{eng: engines[sw], model: models[sw]})
		}
		rep, err := net.Run(gradproto.RunOptions{Seed: uint64(lose), Lose: lose, MaxRounds: 60})
		name := fmt.Sprintf("losing transmission %d (%s)", lose, rep.Lost)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for sw := range engines {
			compareState(t, fmt.Sprintf("%s, switch %d", name, sw), engines[sw], models[sw], job, 3)
			requireNoActiveUnit(t, fmt.Sprintf("%s, switch %d", name, sw), models[sw])
		}
		if lose == 0 {
			// Only S1 aggregates; S0 carried worker 0's fragments towards it.
			if models[0].Stats[job] != nil {
				t.Fatalf("S0 aggregated: %v", models[0].Stats[job])
			}
			if st := models[1].Stats[job]; st == nil || st[gradproto.EvEmitted] == 0 {
				t.Fatalf("S1 sent no partial sums: %v", st)
			}
			h, err := engines[0].Switch.FindEntry(TableGradRoute, []engine.Match{engine.Exact([]byte{0, job}), engine.Exact([]byte{0, 2}), engine.Exact(plan.Members[0].IP.AsSlice())}, 0)
			if err != nil {
				t.Fatal(err)
			}
			c, err := engines[0].Switch.ReadDirectCounter(TableGradRoute, h)
			if err != nil {
				t.Fatal(err)
			}
			if c.Packets == 0 {
				t.Fatal("no fragment took S0's grad_route entry towards S1")
			}
		}
		if rep.Lost == "" {
			break
		}
	}
}
