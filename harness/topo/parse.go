package topo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is a problem in a topology, located as precisely as the input allows:
// "topologies/x.yaml:12: links[3].endpoints: unknown node "s9"". Source and
// Line are empty for topologies built in code; Field is a path into the file
// format (indices count from 0). For a generator's parameters Source names
// the generator and Field the parameter ("fat-tree: k: must be even ...").
type Error struct {
	Source string
	Line   int
	Field  string
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" || e.Line > 0 {
		src := e.Source
		if src == "" {
			src = "<input>"
		}
		b.WriteString(src)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// The fields the decoder accepts, in the order Marshal writes them.
// topologies/schema.json must list exactly these; a test compares them.
var (
	topologyFields = []string{"name", "description", "nodes", "links"}
	nodeFields     = []string{"name", "kind", "id", "role", "ingress", "tier", "programmable", "capacity"}
	linkFields     = []string{"endpoints", "bandwidth", "delay", "loss", "mtu"}
)

// MaxFileSize bounds a topology file. Decoding YAML takes about forty
// times the file's size in memory, so a runaway file (a generator loop, a
// log written by mistake) is refused before it is decoded. The largest
// topology the model numbers, some 16000 hosts, takes about 4 MB (a k=32
// fat-tree with 8192 hosts takes 2 MB).
const MaxFileSize = 8 << 20

// Load reads and validates a topology file. A file larger than MaxFileSize
// is refused after reading at most that much, naming the line and field
// where it crosses the limit.
func Load(path string) (*Topology, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read topology: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read topology: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge(path, data[:MaxFileSize])
	}
	return Parse(data, path)
}

// tooLarge locates where a file crosses MaxFileSize: the line and the
// field, a top-level key and the index of its list item then.
func tooLarge(path string, head []byte) error {
	line, key, item, itemIndent := 1, "", -1, -1
	for len(head) > 0 {
		text, rest, _ := bytes.Cut(head, []byte("\n"))
		trimmed := bytes.TrimLeft(text, " ")
		indent := len(text) - len(trimmed)
		switch {
		case indent == 0 && len(trimmed) > 0 && trimmed[0] != '#' && trimmed[0] != '-' && bytes.Contains(trimmed, []byte(":")):
			key, _, _ = strings.Cut(string(trimmed), ":")
			item, itemIndent = -1, -1
		case bytes.HasPrefix(trimmed, []byte("- ")) || bytes.Equal(trimmed, []byte("-")):
			if itemIndent < 0 {
				itemIndent = indent
			}
			if indent == itemIndent {
				item++
			}
		}
		if len(rest) == 0 {
			break
		}
		head = rest
		line++
	}
	field := key
	if item >= 0 {
		field = fmt.Sprintf("%s[%d]", key, item)
	}
	return &Error{Source: path, Line: line, Field: field,
		Msg: fmt.Sprintf("the file goes on past %d MiB, the most a topology file may hold (the largest topology grid numbers takes about 4 MB)", MaxFileSize>>20)}
}

// Parse decodes a topology in the YAML format of topologies/schema.json and
// validates it. source names the input in error messages (usually the file
// path) and, when the file has no name field, gives the topology its name.
// Nodes without an id get the smallest ID of their kind not used by another
// node, in file order.
func Parse(data []byte, source string) (*Topology, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Source: source, Line: 1, Msg: "empty file: a topology needs nodes and links"}
		}
		return nil, yamlError(source, err)
	}
	if len(doc.Content) == 0 {
		return nil, &Error{Source: source, Line: 1, Msg: "empty file: a topology needs nodes and links"}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(source, err)
		}
		return nil, &Error{Source: source, Line: extra.Line, Msg: "a second YAML document: a file holds one topology"}
	}
	d := &decoder{source: source, t: &Topology{Source: source}}
	if err := d.topology(doc.Content[0]); err != nil {
		return nil, err
	}
	if err := d.t.Validate(); err != nil {
		return nil, err
	}
	return d.t, nil
}

// yamlLineRE picks the line out of yaml.v3's syntax errors ("yaml: line 3: ...").
var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlParserProblems are the problems yaml.v3's parser (not its scanner)
// reports; for these it prints the line counted from 0 (decode.go, fail()
// adds 1 only for scanner errors), so yamlError adds the missing 1.
var yamlParserProblems = map[string]bool{
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

func yamlError(source string, err error) error {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		if yamlParserProblems[m[2]] {
			line++
		}
		return &Error{Source: source, Line: line, Msg: "YAML syntax: " + m[2]}
	}
	return &Error{Source: source, Msg: fmt.Sprintf("YAML syntax: %v", strings.TrimPrefix(err.Error(), "yaml: "))}
}

type decoder struct {
	source string
	t      *Topology
	// portForms records how each endpoint's port was written ("p" or "eth"),
	// checked against the node's kind once all nodes are known.
	portForms [][2]string
	// explicitID marks nodes whose file entry has an id.
	explicitID map[*Node]bool
}

func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) error {
	return &Error{Source: d.source, Line: n.Line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

type keyValue struct{ key, value *yaml.Node }

// fields returns the entries of a mapping, rejecting unknown and repeated keys.
func (d *decoder) fields(n *yaml.Node, path string, allowed []string) ([]keyValue, error) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return nil, d.errorf(n, path, "expected a mapping with fields %s", strings.Join(allowed, ", "))
	}
	var out []keyValue
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		field := joinPath(path, k.Value)
		if k.Kind != yaml.ScalarNode || !slices.Contains(allowed, k.Value) {
			return nil, d.errorf(k, field, "unknown field %q (known fields: %s)", k.Value, strings.Join(allowed, ", "))
		}
		if first, ok := seen[k.Value]; ok {
			return nil, d.errorf(k, field, "field given twice (first at line %d)", first)
		}
		seen[k.Value] = k.Line
		out = append(out, keyValue{k, v})
	}
	return out, nil
}

func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func (d *decoder) scalar(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", d.errorf(n, field, "expected a single value")
	}
	return n.Value, nil
}

func (d *decoder) integer(n *yaml.Node, field string) (int, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, d.errorf(n, field, "expected a whole number, got %q", n.Value)
	}
	v, err := strconv.ParseInt(n.Value, 0, 32)
	if err != nil {
		return 0, d.errorf(n, field, "expected a whole number, got %q", n.Value)
	}
	return int(v), nil
}

func (d *decoder) boolean(n *yaml.Node, field string) (bool, error) {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		return false, d.errorf(n, field, "expected true or false, got %q", n.Value)
	}
	return b, nil
}

func (d *decoder) bandwidth(n *yaml.Node, field string) (Bandwidth, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, d.errorf(n, field, "expected a rate such as 100Gbps")
	}
	b, err := ParseBandwidth(n.Value)
	if err != nil {
		return 0, d.errorf(n, field, "%v", err)
	}
	return b, nil
}

func (d *decoder) topology(root *yaml.Node) error {
	kvs, err := d.fields(root, "", topologyFields)
	if err != nil {
		return err
	}
	var nodes, links *yaml.Node
	for _, kv := range kvs {
		switch kv.key.Value {
		case "name":
			if d.t.Name, err = d.scalar(kv.value, "name"); err != nil {
				return err
			}
		case "description":
			if d.t.Description, err = d.scalar(kv.value, "description"); err != nil {
				return err
			}
		case "nodes":
			nodes = kv.value
		case "links":
			links = kv.value
		}
	}
	if d.t.Name == "" && d.source != "" {
		d.t.Name = strings.TrimSuffix(filepath.Base(d.source), filepath.Ext(d.source))
	}
	if nodes == nil {
		return d.errorf(root, "nodes", "missing: a topology lists its hosts and switches under nodes")
	}
	if links == nil {
		return d.errorf(root, "links", "missing: a topology lists its links under links")
	}
	if err := d.nodes(nodes); err != nil {
		return err
	}
	if err := d.links(links); err != nil {
		return err
	}
	if err := d.checkPortForms(); err != nil {
		return err
	}
	d.assignIDs()
	return nil
}

func (d *decoder) sequence(n *yaml.Node, field string) ([]*yaml.Node, error) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return nil, d.errorf(n, field, "expected a list")
	}
	return n.Content, nil
}

func (d *decoder) nodes(seq *yaml.Node) error {
	items, err := d.sequence(seq, "nodes")
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return d.errorf(seq, "nodes", "the topology has no nodes")
	}
	d.explicitID = map[*Node]bool{}
	for i, item := range items {
		path := fmt.Sprintf("nodes[%d]", i)
		kvs, err := d.fields(item, path, nodeFields)
		if err != nil {
			return err
		}
		n := &Node{Line: resolve(item).Line}
		for _, kv := range kvs {
			field := joinPath(path, kv.key.Value)
			var s string
			switch kv.key.Value {
			case "name":
				n.Name, err = d.scalar(kv.value, field)
			case "kind":
				s, err = d.scalar(kv.value, field)
				n.Kind = Kind(s)
			case "id":
				n.ID, err = d.integer(kv.value, field)
				d.explicitID[n] = true
			case "role":
				s, err = d.scalar(kv.value, field)
				n.Role = Role(s)
				if err == nil && n.Role == RoleHost {
					err = d.errorf(kv.value, field, "empty role: omit the field for a host with no part in training")
				}
			case "ingress":
				n.Ingress, err = d.bandwidth(kv.value, field)
			case "tier":
				s, err = d.scalar(kv.value, field)
				n.Tier = Tier(s)
			case "programmable":
				n.Programmable, err = d.boolean(kv.value, field)
			case "capacity":
				n.Capacity, err = d.bandwidth(kv.value, field)
			}
			if err != nil {
				return err
			}
		}
		if n.Name == "" {
			return d.errorf(item, joinPath(path, "name"), "missing: every node needs a name")
		}
		if n.Kind == "" {
			return d.errorf(item, joinPath(path, "kind"), "missing: node %q needs kind host or switch", n.Name)
		}
		d.t.Nodes = append(d.t.Nodes, n)
	}
	return nil
}

func (d *decoder) links(seq *yaml.Node) error {
	items, err := d.sequence(seq, "links")
	if err != nil {
		return err
	}
	for i, item := range items {
		path := fmt.Sprintf("links[%d]", i)
		kvs, err := d.fields(item, path, linkFields)
		if err != nil {
			return err
		}
		l := &Link{Line: resolve(item).Line}
		var forms [2]string
		haveEnds := false
		for _, kv := range kvs {
			field := joinPath(path, kv.key.Value)
			var s string
			switch kv.key.Value {
			case "endpoints":
				haveEnds = true
				err = d.endpoints(kv.value, field, l, &forms)
			case "bandwidth":
				l.Bandwidth, err = d.bandwidth(kv.value, field)
			case "delay":
				if s, err = d.scalar(kv.value, field); err == nil {
					if l.Delay, err = parseDelay(s); err != nil {
						err = d.errorf(kv.value, field, "%v", err)
					}
				}
			case "loss":
				if s, err = d.scalar(kv.value, field); err == nil {
					if l.Loss, err = parseLoss(s); err != nil {
						err = d.errorf(kv.value, field, "%v", err)
					}
				}
			case "mtu":
				l.MTU, err = d.integer(kv.value, field)
			}
			if err != nil {
				return err
			}
		}
		if !haveEnds {
			return d.errorf(item, joinPath(path, "endpoints"), `missing: a link needs endpoints: ["s1:p1", "h1:eth0"]`)
		}
		d.t.Links = append(d.t.Links, l)
		d.portForms = append(d.portForms, forms)
	}
	return nil
}

// endpointRE splits "s1:p3" and "h1:eth0".
var endpointRE = regexp.MustCompile(`^([^:\s]+):(p|eth)([0-9]+)$`)

func (d *decoder) endpoints(n *yaml.Node, field string, l *Link, forms *[2]string) error {
	items, err := d.sequence(n, field)
	if err != nil || len(items) != 2 {
		return d.errorf(n, field, `expected two endpoints: ["s1:p1", "h1:eth0"]`)
	}
	for i, item := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		s, err := d.scalar(item, f)
		if err != nil {
			return err
		}
		m := endpointRE.FindStringSubmatch(s)
		if m == nil {
			return d.errorf(item, f, "%q is not node:port (switch ports are p1, p2, ...; host interfaces eth0, eth1, ...)", s)
		}
		port, err := strconv.Atoi(m[3])
		if err != nil || len(m[3]) > 1 && m[3][0] == '0' {
			return d.errorf(item, f, "%q: bad port number %q", s, m[3])
		}
		e := Endpoint{Node: m[1], Port: port}
		if i == 0 {
			l.A = e
		} else {
			l.B = e
		}
		forms[i] = m[2]
	}
	return nil
}

// checkPortForms makes switches use pN and hosts ethN; unknown nodes are left
// to Validate, which reports them.
func (d *decoder) checkPortForms() error {
	kinds := map[string]Kind{}
	for _, n := range d.t.Nodes {
		if _, dup := kinds[n.Name]; !dup {
			kinds[n.Name] = n.Kind
		}
	}
	for i, l := range d.t.Links {
		for j, e := range [2]Endpoint{l.A, l.B} {
			form := d.portForms[i][j]
			field := fmt.Sprintf("links[%d].endpoints[%d]", i, j)
			switch kinds[e.Node] {
			case KindSwitch:
				if form != "p" {
					return &Error{Source: d.source, Line: l.Line, Field: field, Msg: fmt.Sprintf("%s is a switch: write its ports p1, p2, ... (got %s%d)", e.Node, form, e.Port)}
				}
			case KindHost:
				if form != "eth" {
					return &Error{Source: d.source, Line: l.Line, Field: field, Msg: fmt.Sprintf("%s is a host: write its interfaces eth0, eth1, ... (got %s%d)", e.Node, form, e.Port)}
				}
			}
		}
	}
	return nil
}

// assignIDs numbers the nodes that have no id with the smallest free ID of their kind.
func (d *decoder) assignIDs() {
	used := map[Kind]map[int]bool{KindHost: {}, KindSwitch: {}}
	for _, n := range d.t.Nodes {
		if d.explicitID[n] && used[n.Kind] != nil {
			used[n.Kind][n.ID] = true
		}
	}
	next := map[Kind]int{KindHost: 1, KindSwitch: 1}
	for _, n := range d.t.Nodes {
		if d.explicitID[n] || used[n.Kind] == nil {
			continue
		}
		for used[n.Kind][next[n.Kind]] {
			next[n.Kind]++
		}
		n.ID = next[n.Kind]
		used[n.Kind][n.ID] = true
	}
}
