package topo

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Summary describes the topology for people: counts by kind, tier and role,
// programmable switches and capacities, the parameter servers and the links'
// bandwidths, MTUs and delays.
func (t *Topology) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "topology %s", t.Name)
	if t.Source != "" {
		fmt.Fprintf(&b, " (%s)", t.Source)
	}
	b.WriteString("\n")
	if t.Description != "" {
		fmt.Fprintf(&b, "  %s\n", t.Description)
	}
	switches, hosts := t.Switches(), t.Hosts()
	fmt.Fprintf(&b, "nodes:        %d: %d switches, %d hosts\n", len(t.Nodes), len(switches), len(hosts))

	tiers := map[string]int{}
	var programmable []*Node
	capacities := map[string]int{}
	for _, s := range switches {
		tier := string(s.Tier)
		if tier == "" {
			tier = "without tier"
		}
		tiers[tier]++
		if s.Programmable {
			programmable = append(programmable, s)
			capacities[capacityString(s.Capacity)]++
		}
	}
	fmt.Fprintf(&b, "switches:     %s\n", countList(tiers, []string{"core", "spine", "agg", "edge", "leaf", "without tier"}, false))
	if len(programmable) == 0 {
		b.WriteString("programmable: none\n")
	} else {
		fmt.Fprintf(&b, "programmable: %d of %d (%s); capacity: %s\n", len(programmable), len(switches),
			nameList(programmable, 8), valueList(capacities))
	}

	roles := map[string]int{}
	for _, h := range hosts {
		switch h.Role {
		case RoleWorker:
			roles["worker"]++
		case RolePS:
			roles["PS"]++
		default:
			roles["without role"]++
		}
	}
	fmt.Fprintf(&b, "hosts:        %s\n", countList(roles, []string{"worker", "PS", "without role"}, true))
	for _, ps := range t.PSs() {
		var at []string
		for _, adj := range t.Neighbors(ps.Name) {
			at = append(at, t.EndpointString(adj.Peer))
		}
		ingress := capacityString(t.Ingress(ps.Name))
		if ps.Ingress == 0 {
			ingress += " (sum of its links)"
		}
		fmt.Fprintf(&b, "PS:           %s on %s, ingress %s\n", ps.Name, strings.Join(at, ", "), ingress)
	}

	bandwidths, mtus, delays, losses := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	trunks := 0
	for _, l := range t.Links {
		bandwidths[capacityString(l.Bandwidth)]++
		mtus[fmt.Sprint(l.EffectiveMTU())]++
		if l.Delay > 0 {
			delays[l.Delay.String()]++
		}
		if l.Loss > 0 {
			losses[formatLoss(l.Loss)]++
		}
		if t.Node(l.A.Node).Kind == KindSwitch && t.Node(l.B.Node).Kind == KindSwitch {
			trunks++
		}
	}
	fmt.Fprintf(&b, "links:        %d: %d between switches, %d to hosts\n", len(t.Links), trunks, len(t.Links)-trunks)
	fmt.Fprintf(&b, "bandwidth:    %s\n", valueList(bandwidths))
	fmt.Fprintf(&b, "MTU:          %s\n", valueList(mtus))
	for _, emulated := range []struct {
		what   string
		values map[string]int
	}{{"delay", delays}, {"loss", losses}} {
		n := 0
		for _, c := range emulated.values {
			n += c
		}
		if n > 0 {
			fmt.Fprintf(&b, "%-14s%s on %d of %d links\n", emulated.what+":", valueList(emulated.values), n, len(t.Links))
		}
	}
	return b.String()
}

// capacityString writes a rate where 0 means no limit.
func capacityString(b Bandwidth) string {
	if b == 0 {
		return "unlimited"
	}
	return b.String()
}

// countList writes "4 core, 8 edge" in the given key order, then any other
// keys sorted; pluralize adds an s to one-word keys counted more than once.
func countList(counts map[string]int, order []string, pluralize bool) string {
	keys := slices.Clone(order)
	var rest []string
	for k := range counts {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	keys = append(keys, rest...)
	var parts []string
	for _, k := range keys {
		if counts[k] > 0 {
			noun := k
			if pluralize && counts[k] > 1 && !strings.Contains(k, " ") {
				noun += "s"
			}
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], noun))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// valueList writes how often each value occurs: "100Gbps" when all agree,
// else "11 x 3Gbps, 1 x 9Gbps" (most frequent first).
func valueList(counts map[string]int) string {
	if len(counts) == 1 {
		for v := range counts {
			return v
		}
	}
	values := make([]string, 0, len(counts))
	for v := range counts {
		values = append(values, v)
	}
	sort.Slice(values, func(i, j int) bool {
		if counts[values[i]] != counts[values[j]] {
			return counts[values[i]] > counts[values[j]]
		}
		return values[i] < values[j]
	})
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprintf("%d x %s", counts[v], v)
	}
	return strings.Join(parts, ", ")
}

// nameList lists up to max node names, then how many more there are.
func nameList(nodes []*Node, max int) string {
	var names []string
	for i, n := range nodes {
		if i == max {
			names = append(names, fmt.Sprintf("and %d more", len(nodes)-max))
			break
		}
		names = append(names, n.Name)
	}
	return strings.Join(names, ", ")
}
