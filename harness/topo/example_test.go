package topo_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/topo"
)

// readmeExample is the yaml block of topologies/README.md.
func readmeExample(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo.RootOrFail(t), "topologies", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "```yaml\n")
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("topologies/README.md has no yaml example")
	}
	return []byte(block)
}

func TestReadmeExampleParsesAndIsAddressedAsDocumented(t *testing.T) {
	tp, err := topo.Parse(readmeExample(t), "README.md")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := tp.Plan()
	if err != nil {
		t.Fatal(err)
	}
	w1, ok := plan.Interface("w1", 0)
	if !ok || w1.IP.String() != "10.0.1.1/24" || w1.Gateway.String() != "10.0.1.254" || w1.MAC.String() != "02:00:00:00:00:01" {
		t.Errorf("w1 eth0 = %+v", w1)
	}
	// w1 is on s1 (switch 1) port 1.
	if w1.GatewayMAC.String() != "02:01:00:01:00:01" {
		t.Errorf("w1 gateway MAC = %v", w1.GatewayMAC)
	}
	if got := tp.Ingress("ps"); got != 10*topo.Gbps {
		t.Errorf("ps ingress = %v", got)
	}
}

// Parse a topology, look at its parts and derive the addresses of a host.
func ExampleParse() {
	file := `
nodes:
  - {name: s1, kind: switch, programmable: true, capacity: 100Gbps}
  - {name: w1, kind: host, role: worker}
  - {name: ps, kind: host, role: ps}
links:
  - {endpoints: ["s1:p1", "w1:eth0"], bandwidth: 10Gbps}
  - {endpoints: ["s1:p2", "ps:eth0"], bandwidth: 10Gbps}
`
	t, err := topo.Parse([]byte(file), "star.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	plan, err := t.Plan()
	if err != nil {
		fmt.Println(err)
		return
	}
	ps, _ := plan.Interface("ps", 0)
	fmt.Println(t.Name, len(t.Workers()), "worker,", len(t.PSs()), "PS")
	fmt.Println("ps:", ps.IP, "via", ps.Gateway, ps.GatewayMAC)
	for _, adj := range t.Neighbors("s1") {
		fmt.Printf("s1:p%d -> %s %v\n", adj.Port, t.EndpointString(adj.Peer), adj.Link.Bandwidth)
	}
	// Output:
	// star 1 worker, 1 PS
	// ps: 10.0.2.1/24 via 10.0.2.254 02:01:00:01:00:02
	// s1:p1 -> w1:eth0 10Gbps
	// s1:p2 -> ps:eth0 10Gbps
}

// A bare number is not a bandwidth.
func ExampleParse_error() {
	_, err := topo.Parse([]byte(`
nodes:
  - {name: s1, kind: switch}
  - {name: h1, kind: host}
links:
  - {endpoints: ["s1:p1", "h1:eth0"], bandwidth: 10}
`), "topologies/x.yaml")
	fmt.Println(err)
	// Output:
	// topologies/x.yaml:6: links[0].bandwidth: bandwidth "10" without a unit: write e.g. 10Gbps (units: bps, Kbps, Mbps, Gbps, Tbps)
}
