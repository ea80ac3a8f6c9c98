package topo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Marshal writes the topology in the file format Parse reads, one node and one
// link per line (flow mappings, like containerlab's endpoints), every node
// with its id so the addressing plan survives edits to the node order.
func Marshal(t *Topology) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("marshal topology: %w", err)
	}
	var b bytes.Buffer
	b.WriteString("# grid topology; format: topologies/schema.json, explained in topologies/README.md\n")
	if t.Name != "" {
		fmt.Fprintf(&b, "name: %s\n", quote(t.Name))
	}
	if t.Description != "" {
		fmt.Fprintf(&b, "description: %s\n", quote(t.Description))
	}
	b.WriteString("nodes:\n")
	for _, n := range t.Nodes {
		f := []string{"name: " + quote(n.Name), "kind: " + string(n.Kind), fmt.Sprintf("id: %d", n.ID)}
		if n.Role != RoleHost {
			f = append(f, "role: "+string(n.Role))
		}
		if n.Ingress > 0 {
			f = append(f, "ingress: "+n.Ingress.String())
		}
		if n.Tier != "" {
			f = append(f, "tier: "+string(n.Tier))
		}
		if n.Programmable {
			f = append(f, "programmable: true")
		}
		if n.Capacity > 0 {
			f = append(f, "capacity: "+n.Capacity.String())
		}
		fmt.Fprintf(&b, "  - {%s}\n", strings.Join(f, ", "))
	}
	b.WriteString("links:\n")
	for _, l := range t.Links {
		f := []string{fmt.Sprintf("endpoints: [%q, %q]", t.EndpointString(l.A), t.EndpointString(l.B))}
		if l.Bandwidth > 0 {
			f = append(f, "bandwidth: "+l.Bandwidth.String())
		}
		if l.Delay > 0 {
			f = append(f, "delay: "+l.Delay.String())
		}
		if l.Loss > 0 {
			f = append(f, "loss: "+quote(formatLoss(l.Loss)))
		}
		if l.MTU > 0 {
			f = append(f, fmt.Sprintf("mtu: %d", l.MTU))
		}
		fmt.Fprintf(&b, "  - {%s}\n", strings.Join(f, ", "))
	}
	return b.Bytes(), nil
}

// quote leaves plain words as they are and writes anything else as a
// double-quoted scalar (a JSON string is a valid YAML one).
func quote(s string) string {
	if nameRE.MatchString(s) && !yamlKeyword(s) {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		// Encoding a string cannot fail; keep the value readable regardless.
		return fmt.Sprintf("%q", s)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// yamlKeyword reports words YAML would read as something other than a string.
func yamlKeyword(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "y", "n":
		return true
	}
	return false
}
