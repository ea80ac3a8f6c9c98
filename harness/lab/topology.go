package lab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"time"
)

// Topology is a course's topology.json, as p4lang/tutorials' run_exercise.py
// reads it: hosts with their address, MAC and shell commands, switches with
// how they are programmed, and links.
type Topology struct {
	Path     string
	Hosts    []Host   // in file order
	Switches []Switch // in file order: the Nth has device id N-1 and gRPC port base+N-1
	Links    []Link
}

// Host is one entry of "hosts".
type Host struct {
	Name     string
	IP       netip.Prefix // "ip": "10.0.1.1/24"
	MAC      net.HardwareAddr
	Commands []string // run in the host's namespace once the network is up
}

// Switch is one entry of "switches".
type Switch struct {
	Name string
	// Program is a bmv2 JSON the switch runs instead of the exercise's
	// default program ("program"), relative to the exercise.
	Program string
	// RuntimeJSON is the runtime configuration applied over P4Runtime
	// ("runtime_json"); CLIInput a file of simple_switch_CLI commands
	// ("cli_input"). Both relative to the exercise.
	RuntimeJSON string
	CLIInput    string
	// CPUPort and PriorityQueues are simple_switch_grpc's target options
	// (0: none given).
	CPUPort        int
	PriorityQueues int
}

// Link joins two nodes: a host ("h1") or a switch port ("s1-p2").
type Link struct {
	A, B Endpoint
	// Latency is one-way ("0ms", or a number of milliseconds); Bandwidth is
	// in Mbit/s as Mininet's TCLink takes it (0: unlimited).
	Latency   time.Duration
	Bandwidth float64
}

// Endpoint is a link end: a host (Port -1, its eth0) or a switch port.
type Endpoint struct {
	Node string
	Port int
}

func (e Endpoint) String() string {
	if e.Port < 0 {
		return e.Node
	}
	return fmt.Sprintf("%s-p%d", e.Node, e.Port)
}

// rawHost and rawSwitch are the JSON forms.
type rawHost struct {
	IP       string   `json:"ip"`
	MAC      string   `json:"mac"`
	Commands []string `json:"commands"`
}

type rawSwitch struct {
	Program        string `json:"program"`
	RuntimeJSON    string `json:"runtime_json"`
	CLIInput       string `json:"cli_input"`
	CPUPort        int    `json:"cpu_port"`
	PriorityQueues int    `json:"priority_queues"`
}

// LoadTopology reads and checks a topology.json. Errors name the file, the
// line and the field.
func LoadTopology(path string) (*Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := parseTopology(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t.Path = path
	return t, nil
}

func lineOf(data []byte, offset int64) int {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

func parseTopology(data []byte) (*Topology, error) {
	t := &Topology{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	fail := func(field, format string, args ...any) error {
		return fmt.Errorf("line %d: %s: %s", lineOf(data, dec.InputOffset()), field, fmt.Sprintf(format, args...))
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("line %d: want a JSON object with hosts, switches and links (%v)", lineOf(data, dec.InputOffset()), err)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineOf(data, dec.InputOffset()), err)
		}
		key := tok.(string)
		seen[key] = true
		switch key {
		case "hosts":
			err = eachMember(dec, data, "hosts", func(name string, raw json.RawMessage) error {
				var rh rawHost
				if err := strictUnmarshal(raw, &rh); err != nil {
					return fail("hosts."+name, "%v", err)
				}
				h := Host{Name: name, Commands: rh.Commands}
				if h.IP, err = netip.ParsePrefix(rh.IP); err != nil || !h.IP.Addr().Is4() {
					return fail("hosts."+name+".ip", "%q is not an IPv4 address with its prefix (10.0.1.1/24)", rh.IP)
				}
				if h.MAC, err = net.ParseMAC(rh.MAC); err != nil || len(h.MAC) != 6 {
					return fail("hosts."+name+".mac", "%q is not a MAC address (08:00:00:00:01:11)", rh.MAC)
				}
				t.Hosts = append(t.Hosts, h)
				return nil
			})
		case "switches":
			err = eachMember(dec, data, "switches", func(name string, raw json.RawMessage) error {
				var rs rawSwitch
				if err := strictUnmarshal(raw, &rs); err != nil {
					return fail("switches."+name, "%v", err)
				}
				if rs.CPUPort < 0 || rs.CPUPort > 511 {
					return fail("switches."+name+".cpu_port", "%d is not a v1model port (1 to 511)", rs.CPUPort)
				}
				if rs.PriorityQueues < 0 || rs.PriorityQueues > 8 {
					return fail("switches."+name+".priority_queues", "%d: want 1 to 8", rs.PriorityQueues)
				}
				t.Switches = append(t.Switches, Switch{Name: name, Program: rs.Program, RuntimeJSON: rs.RuntimeJSON,
					CLIInput: rs.CLIInput, CPUPort: rs.CPUPort, PriorityQueues: rs.PriorityQueues})
				return nil
			})
		case "links":
			var raw [][]any
			if err := dec.Decode(&raw); err != nil {
				return nil, fail("links", "want a list of [node1, node2, latency, bandwidth] lists: %v", err)
			}
			for i, l := range raw {
				link, err := parseLink(l)
				if err != nil {
					return nil, fail(fmt.Sprintf("links[%d]", i), "%v", err)
				}
				t.Links = append(t.Links, link)
			}
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip) // other keys are for other tools
		}
		if err != nil {
			return nil, err
		}
	}
	for _, key := range []string{"hosts", "switches", "links"} {
		if !seen[key] {
			return nil, fmt.Errorf("no %q", key)
		}
	}
	return t, t.check()
}

// eachMember decodes the object that comes next, member by member in order.
func eachMember(dec *json.Decoder, data []byte, field string, f func(name string, raw json.RawMessage) error) error {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("line %d: %s: want an object of named entries", lineOf(data, dec.InputOffset()), field)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("line %d: %s: %w", lineOf(data, dec.InputOffset()), field, err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("line %d: %s: %w", lineOf(data, dec.InputOffset()), field, err)
		}
		if err := f(tok.(string), raw); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

func strictUnmarshal(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

var switchPortRE = regexp.MustCompile(`^([A-Za-z0-9_]+)-p([0-9]+)$`)

func parseLink(l []any) (Link, error) {
	if len(l) < 2 || len(l) > 4 {
		return Link{}, fmt.Errorf("want [node1, node2] with an optional latency and bandwidth, not %d items", len(l))
	}
	var link Link
	for i, end := range []*Endpoint{&link.A, &link.B} {
		s, ok := l[i].(string)
		if !ok {
			return Link{}, fmt.Errorf("node %d: want a name such as \"h1\" or \"s1-p2\", not %v", i+1, l[i])
		}
		if m := switchPortRE.FindStringSubmatch(s); m != nil {
			port, _ := strconv.Atoi(m[2])
			*end = Endpoint{Node: m[1], Port: port}
		} else {
			*end = Endpoint{Node: s, Port: -1}
		}
	}
	if len(l) > 2 {
		switch v := l[2].(type) {
		case string:
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return Link{}, fmt.Errorf("latency %q: want a duration such as \"2ms\"", v)
			}
			link.Latency = d
		case json.Number:
			ms, err := v.Float64()
			if err != nil || ms < 0 {
				return Link{}, fmt.Errorf("latency %v: want milliseconds", v)
			}
			link.Latency = time.Duration(ms * float64(time.Millisecond))
		default:
			return Link{}, fmt.Errorf("latency %v: want \"2ms\" or a number of milliseconds", l[2])
		}
	}
	if len(l) > 3 && l[3] != nil {
		n, ok := l[3].(json.Number)
		bw, err := n.Float64()
		if !ok || err != nil || bw < 0 {
			return Link{}, fmt.Errorf("bandwidth %v: want Mbit/s", l[3])
		}
		link.Bandwidth = bw
	}
	return link, nil
}

// check makes sure links join known nodes on free ports, each host has one
// link (its eth0), and names suit namespaces and interfaces.
func (t *Topology) check() error {
	kinds := map[string]string{}
	for _, h := range t.Hosts {
		kinds[h.Name] = "host"
	}
	for _, s := range t.Switches {
		if kinds[s.Name] != "" {
			return fmt.Errorf("switches.%s: also a host", s.Name)
		}
		kinds[s.Name] = "switch"
	}
	for name := range kinds {
		if !nodeNameRE.MatchString(name) {
			return fmt.Errorf("node %q: use letters, digits and '_' (at most 10), starting with a letter", name)
		}
	}
	used := map[Endpoint]int{}
	hostLinks := map[string]int{}
	for i, l := range t.Links {
		for _, e := range []Endpoint{l.A, l.B} {
			switch kinds[e.Node] {
			case "":
				return fmt.Errorf("links[%d]: %s is neither a host nor a switch of the file", i, e)
			case "host":
				if e.Port >= 0 {
					return fmt.Errorf("links[%d]: %s: a host is named alone (%q), it has one interface", i, e, e.Node)
				}
				hostLinks[e.Node]++
				if hostLinks[e.Node] > 1 {
					return fmt.Errorf("links[%d]: host %s has a second link; hosts have one (eth0)", i, e.Node)
				}
			case "switch":
				if e.Port < 1 || e.Port > 510 {
					return fmt.Errorf("links[%d]: %s: switch ports are 1 to 510 (name them s1-p1)", i, e)
				}
				if j, dup := used[e]; dup {
					return fmt.Errorf("links[%d]: port %s is already used by links[%d]", i, e, j)
				}
				used[e] = i
			}
		}
		if kinds[l.A.Node] == "host" && kinds[l.B.Node] == "host" {
			return fmt.Errorf("links[%d]: %s and %s are both hosts; hosts connect to switches", i, l.A, l.B)
		}
	}
	for _, h := range t.Hosts {
		if hostLinks[h.Name] == 0 {
			return fmt.Errorf("hosts.%s: no link", h.Name)
		}
	}
	return nil
}

// nodeNameRE keeps names short enough for NODE-ethPORT interface names.
var nodeNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,9}$`)
