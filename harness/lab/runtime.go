package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/netip"
	"os"
	"regexp"
	"sort"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"

	"github.com/grid-ina/grid/harness/p4rt/client"
)

// RuntimeConfig is a runtime_json file (p4lang/tutorials' format): the
// program to load and the entries to write.
type RuntimeConfig struct {
	Path         string
	Target       string         `json:"target"`
	P4Info       string         `json:"p4info"`
	BMv2JSON     string         `json:"bmv2_json"`
	TableEntries []RuntimeEntry `json:"table_entries"`
	Multicast    []RuntimeGroup `json:"multicast_group_entries"`
	Clones       []RuntimeClone `json:"clone_session_entries"`
}

// RuntimeEntry is one of "table_entries". Match values are a value
// (exact), [value, prefix length] (lpm), [value, mask] (ternary) or [low,
// high] (range); values are numbers or strings holding an IPv4, IPv6 or
// MAC address.
type RuntimeEntry struct {
	Table         string                     `json:"table"`
	Match         map[string]json.RawMessage `json:"match"`
	DefaultAction bool                       `json:"default_action"`
	ActionName    string                     `json:"action_name"`
	ActionParams  map[string]json.RawMessage `json:"action_params"`
	Priority      int32                      `json:"priority"`
}

// RuntimeGroup is one of "multicast_group_entries".
type RuntimeGroup struct {
	ID       uint32           `json:"multicast_group_id"`
	Replicas []RuntimeReplica `json:"replicas"`
}

// RuntimeClone is one of "clone_session_entries".
type RuntimeClone struct {
	ID                uint32           `json:"clone_session_id"`
	Replicas          []RuntimeReplica `json:"replicas"`
	PacketLengthBytes int32            `json:"packet_length_bytes"`
}

// RuntimeReplica is a replica of a group or clone session.
type RuntimeReplica struct {
	EgressPort uint32 `json:"egress_port"`
	Instance   uint32 `json:"instance"`
}

// LoadRuntimeConfig reads a runtime_json file.
func LoadRuntimeConfig(path string) (*RuntimeConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rc := &RuntimeConfig{Path: path}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(rc); err != nil {
		return nil, fmt.Errorf("%s: line %d: %w", path, lineOf(data, dec.InputOffset()), err)
	}
	switch {
	case rc.Target != "" && rc.Target != "bmv2":
		return nil, fmt.Errorf("%s: target: %q is not bmv2", path, rc.Target)
	case rc.P4Info == "":
		return nil, fmt.Errorf("%s: p4info: missing (the P4Info file the entries refer to)", path)
	case rc.BMv2JSON == "":
		return nil, fmt.Errorf("%s: bmv2_json: missing (the program to load)", path)
	}
	return rc, nil
}

// Apply loads the program (SetForwardingPipelineConfig) and writes every
// entry, group and clone session, describing each on log as the tutorials'
// controller does. Paths in the file are relative to dir. Errors name the
// file and the entry.
func (rc *RuntimeConfig) Apply(ctx context.Context, c *client.Client, dir string, log io.Writer) error {
	resolve := func(p string) string {
		if len(p) > 0 && p[0] == '/' {
			return p
		}
		return dir + "/" + p
	}
	info, err := client.LoadP4Info(resolve(rc.P4Info))
	if err != nil {
		return fmt.Errorf("%s: p4info: %w", rc.Path, err)
	}
	program, err := os.ReadFile(resolve(rc.BMv2JSON))
	if err != nil {
		return fmt.Errorf("%s: bmv2_json: %w", rc.Path, err)
	}
	fmt.Fprintf(log, "Setting pipeline config (%s)...\n", rc.BMv2JSON)
	if err := c.SetPipeline(ctx, info, program); err != nil {
		return fmt.Errorf("%s: set the pipeline: %w", rc.Path, err)
	}
	fmt.Fprintf(log, "Inserting %d table entries...\n", len(rc.TableEntries))
	for i, e := range rc.TableEntries {
		field := fmt.Sprintf("%s: table_entries[%d]", rc.Path, i)
		if err := e.write(ctx, c, info, log); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
	}
	for i, g := range rc.Multicast {
		fmt.Fprintf(log, "Group %d => %v\n", g.ID, g.Replicas)
		if err := c.InsertMulticastGroup(ctx, g.ID, replicas(g.Replicas)); err != nil {
			return fmt.Errorf("%s: multicast_group_entries[%d]: %w", rc.Path, i, err)
		}
	}
	for i, cs := range rc.Clones {
		fmt.Fprintf(log, "Clone Session %d => %v\n", cs.ID, cs.Replicas)
		err := c.InsertCloneSession(ctx, client.CloneSession{ID: cs.ID, Replicas: replicas(cs.Replicas), TruncateLength: cs.PacketLengthBytes})
		if err != nil {
			return fmt.Errorf("%s: clone_session_entries[%d]: %w", rc.Path, i, err)
		}
	}
	return nil
}

func replicas(rs []RuntimeReplica) []client.Replica {
	out := make([]client.Replica, len(rs))
	for i, r := range rs {
		out[i] = client.Replica{Port: r.EgressPort, Instance: r.Instance}
	}
	return out
}

func (e *RuntimeEntry) write(ctx context.Context, c *client.Client, info *p4configv1.P4Info, log io.Writer) error {
	table := findTable(info, e.Table)
	if table == nil {
		return fmt.Errorf("table: %q is not a table of the P4Info", e.Table)
	}
	action := findAction(info, e.ActionName)
	if action == nil {
		return fmt.Errorf("action_name: %q is not an action of the P4Info", e.ActionName)
	}
	args := make([][]byte, len(action.Params))
	for i, p := range action.Params {
		raw, ok := e.ActionParams[p.Name]
		if !ok {
			return fmt.Errorf("action_params: %s of %s missing", p.Name, e.ActionName)
		}
		v, err := jsonValue(raw, p.Bitwidth)
		if err != nil {
			return fmt.Errorf("action_params.%s: %w", p.Name, err)
		}
		args[i] = v
	}
	for name := range e.ActionParams {
		if !hasParam(action, name) {
			return fmt.Errorf("action_params: %s is not a parameter of %s", name, e.ActionName)
		}
	}
	var params []string
	for _, k := range sortedKeys(e.ActionParams) {
		params = append(params, fmt.Sprintf("%s=%s", k, e.ActionParams[k]))
	}
	fmt.Fprintf(log, "%s: %s => %s(%s)\n", e.Table, describeMatch(e.Match, e.DefaultAction), e.ActionName, strings.Join(params, ", "))
	if e.DefaultAction {
		return c.SetDefaultAction(ctx, e.Table, e.ActionName, args)
	}
	entry := client.TableEntry{Table: e.Table, Action: e.ActionName, Args: args, Priority: e.Priority}
	for name, raw := range e.Match {
		mf := findMatchField(table, name)
		if mf == nil {
			return fmt.Errorf("match: %q is not a match field of %s", name, e.Table)
		}
		m, err := jsonMatch(raw, mf)
		if err != nil {
			return fmt.Errorf("match.%s: %w", name, err)
		}
		entry.Match = append(entry.Match, m)
	}
	return c.InsertEntry(ctx, entry)
}

func describeMatch(m map[string]json.RawMessage, isDefault bool) string {
	if len(m) == 0 {
		if isDefault {
			return "(default action)"
		}
		return "(any)"
	}
	var b bytes.Buffer
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%s", k, m[k])
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jsonMatch converts a match value of the runtime JSON for field mf.
func jsonMatch(raw json.RawMessage, mf *p4configv1.MatchField) (client.Match, error) {
	m := client.Match{Field: mf.Name}
	var list []json.RawMessage
	isList := json.Unmarshal(raw, &list) == nil
	pair := func(what string) (a, b json.RawMessage, err error) {
		if !isList || len(list) != 2 {
			return nil, nil, fmt.Errorf("a %s field wants [%s]", mf.GetMatchType(), what)
		}
		return list[0], list[1], nil
	}
	var err error
	switch mf.GetMatchType() {
	case p4configv1.MatchField_LPM:
		a, b, perr := pair("value, prefix length")
		if perr != nil {
			return m, perr
		}
		if m.Value, err = jsonValue(a, mf.Bitwidth); err != nil {
			return m, err
		}
		if err := json.Unmarshal(b, &m.PrefixLen); err != nil || m.PrefixLen < 0 || m.PrefixLen > int(mf.Bitwidth) {
			return m, fmt.Errorf("prefix length %s: want 0 to %d", b, mf.Bitwidth)
		}
	case p4configv1.MatchField_TERNARY:
		a, b, perr := pair("value, mask")
		if perr != nil {
			return m, perr
		}
		if m.Value, err = jsonValue(a, mf.Bitwidth); err == nil {
			m.Mask, err = jsonValue(b, mf.Bitwidth)
		}
	case p4configv1.MatchField_RANGE:
		a, b, perr := pair("low, high")
		if perr != nil {
			return m, perr
		}
		if m.Value, err = jsonValue(a, mf.Bitwidth); err == nil {
			m.High, err = jsonValue(b, mf.Bitwidth)
		}
	default:
		m.Value, err = jsonValue(raw, mf.Bitwidth)
	}
	return m, err
}

var macRE = regexp.MustCompile(`^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$`)

// jsonValue encodes a value as the tutorials' convert.encode does: a MAC,
// IPv4 or IPv6 address string, any other string as its bytes, or a number;
// a one-element list is its element.
func jsonValue(raw json.RawMessage, width int32) ([]byte, error) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		if len(list) != 1 {
			return nil, fmt.Errorf("%s: want one value", raw)
		}
		raw = list[0]
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return stringValue(s)
	}
	n, ok := new(big.Int).SetString(string(bytes.TrimSpace(raw)), 10)
	if !ok {
		return nil, fmt.Errorf("%s: want a number or an address string", raw)
	}
	if n.Sign() < 0 {
		n.Add(n, new(big.Int).Lsh(big.NewInt(1), uint(width)))
	}
	if n.Sign() < 0 || n.BitLen() > int(width) {
		return nil, fmt.Errorf("%s does not fit in %d bits", raw, width)
	}
	return n.Bytes(), nil
}

func stringValue(s string) ([]byte, error) {
	if macRE.MatchString(s) {
		mac, err := net.ParseMAC(s)
		return mac, err
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.AsSlice(), nil
	}
	return []byte(s), nil
}

func findTable(info *p4configv1.P4Info, name string) *p4configv1.Table {
	for _, t := range info.Tables {
		if t.Preamble.Name == name || t.Preamble.Alias == name {
			return t
		}
	}
	return nil
}

func findAction(info *p4configv1.P4Info, name string) *p4configv1.Action {
	for _, a := range info.Actions {
		if a.Preamble.Name == name || a.Preamble.Alias == name {
			return a
		}
	}
	return nil
}

func findMatchField(t *p4configv1.Table, name string) *p4configv1.MatchField {
	for _, mf := range t.MatchFields {
		if mf.Name == name {
			return mf
		}
	}
	return nil
}

func hasParam(a *p4configv1.Action, name string) bool {
	for _, p := range a.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}
