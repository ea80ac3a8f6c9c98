// Package bmv2json models the JSON format that p4c's bmv2 back end
// (p4c-bm2-ss) emits and bmv2's simple_switch loads, for the v1model
// architecture. The engine unmarshals it; the embedded compiler marshals it.
// Unmarshal followed by Marshal preserves the content of p4c's output (member
// order aside), which the tests check against real p4c JSON.
//
// Reference: bmv2's docs/JSON_format.md (format version 2.x) and p4c's
// backends/bmv2.
package bmv2json

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Program is a whole bmv2 JSON file.
type Program struct {
	HeaderTypes       []HeaderType       `json:"header_types"`
	Headers           []Header           `json:"headers"`
	HeaderStacks      []HeaderStack      `json:"header_stacks"`
	HeaderUnionTypes  []HeaderUnionType  `json:"header_union_types"`
	HeaderUnions      []HeaderUnion      `json:"header_unions"`
	HeaderUnionStacks []HeaderUnionStack `json:"header_union_stacks"`
	FieldLists        []FieldList        `json:"field_lists"`
	Errors            []NamedValue       `json:"errors"`
	Enums             []Enum             `json:"enums"`
	Parsers           []Parser           `json:"parsers"`
	ParseVsets        []ParseVset        `json:"parse_vsets"`
	Deparsers         []Deparser         `json:"deparsers"`
	MeterArrays       []MeterArray       `json:"meter_arrays"`
	CounterArrays     []CounterArray     `json:"counter_arrays"`
	RegisterArrays    []RegisterArray    `json:"register_arrays"`
	Calculations      []Calculation      `json:"calculations"`
	LearnLists        []FieldList        `json:"learn_lists"`
	Actions           []Action           `json:"actions"`
	Pipelines         []Pipeline         `json:"pipelines"`
	Checksums         []Checksum         `json:"checksums"`
	ForceArith        [][]string         `json:"force_arith"`
	ExternInstances   []ExternInstance   `json:"extern_instances"`
	FieldAliases      []FieldAlias       `json:"field_aliases"`
	Program           string             `json:"program,omitempty"`
	Meta              Meta               `json:"__meta__"`
}

// Meta is "__meta__": format version [major, minor] and the producing compiler.
type Meta struct {
	Version  []int  `json:"version"`
	Compiler string `json:"compiler,omitempty"`
}

// SourceInfo locates an object in the P4 source.
type SourceInfo struct {
	Filename       string `json:"filename"`
	Line           int    `json:"line"`
	Column         int    `json:"column"`
	SourceFragment string `json:"source_fragment"`
}

// HeaderType is a header (or metadata struct) layout. Varbit headers carry
// MaxLength, the maximum header length in bytes.
type HeaderType struct {
	Name      string        `json:"name"`
	ID        int           `json:"id"`
	Fields    []HeaderField `json:"fields"`
	MaxLength *int          `json:"max_length,omitempty"`
}

// HeaderField is the tuple [name, bitwidth, signed] (optionally with a 4th
// member, saturating); a varbit field has bitwidth "*" and is written
// [name, "*"].
type HeaderField struct {
	Name       string
	Bitwidth   int
	Varbit     bool
	Signed     bool
	Saturating bool
	// SignedAsNumber records that the signed flag was written as 0 or 1, as
	// p4c does for fields of bool type.
	SignedAsNumber bool
	// Arity is the number of tuple members read (2, 3 or 4); 0 means "choose":
	// 2 for varbit fields, 3 otherwise, 4 when Saturating.
	Arity int
}

// MarshalJSON writes the tuple form.
func (f HeaderField) MarshalJSON() ([]byte, error) {
	arity := f.Arity
	if arity == 0 {
		arity = 3
		if f.Varbit {
			arity = 2
		}
		if f.Saturating {
			arity = 4
		}
	}
	t := []any{f.Name}
	if f.Varbit {
		t = append(t, "*")
	} else {
		t = append(t, f.Bitwidth)
	}
	if arity >= 3 {
		switch {
		case !f.SignedAsNumber:
			t = append(t, f.Signed)
		case f.Signed:
			t = append(t, 1)
		default:
			t = append(t, 0)
		}
	}
	if arity >= 4 {
		t = append(t, f.Saturating)
	}
	return json.Marshal(t)
}

// UnmarshalJSON reads the tuple form.
func (f *HeaderField) UnmarshalJSON(data []byte) error {
	var t []json.RawMessage
	if err := json.Unmarshal(data, &t); err != nil {
		return fmt.Errorf("header field: %w", err)
	}
	if len(t) < 2 || len(t) > 4 {
		return fmt.Errorf("header field %s: want 2 to 4 members, got %d", data, len(t))
	}
	*f = HeaderField{Arity: len(t)}
	if err := json.Unmarshal(t[0], &f.Name); err != nil {
		return fmt.Errorf("header field name: %w", err)
	}
	if string(t[1]) == `"*"` {
		f.Varbit = true
	} else if err := json.Unmarshal(t[1], &f.Bitwidth); err != nil {
		return fmt.Errorf("header field %q bitwidth: %w", f.Name, err)
	}
	if len(t) >= 3 {
		switch string(t[2]) {
		case "0", "1":
			f.SignedAsNumber, f.Signed = true, string(t[2]) == "1"
		default:
			if err := json.Unmarshal(t[2], &f.Signed); err != nil {
				return fmt.Errorf("header field %q signed: %w", f.Name, err)
			}
		}
	}
	if len(t) == 4 {
		if err := json.Unmarshal(t[3], &f.Saturating); err != nil {
			return fmt.Errorf("header field %q saturating: %w", f.Name, err)
		}
	}
	return nil
}

// Header is a header or metadata instance.
type Header struct {
	Name       string `json:"name"`
	ID         int    `json:"id"`
	HeaderType string `json:"header_type"`
	Metadata   bool   `json:"metadata"`
	PiOmit     bool   `json:"pi_omit"`
}

// HeaderStack is a header stack; HeaderIDs are its element instances in order.
type HeaderStack struct {
	Name       string `json:"name"`
	ID         int    `json:"id"`
	HeaderType string `json:"header_type"`
	Size       int    `json:"size"`
	HeaderIDs  []int  `json:"header_ids"`
}

// HeaderUnionType lists a union's members as [name, header type] pairs.
type HeaderUnionType struct {
	Name    string     `json:"name"`
	ID      int        `json:"id"`
	Headers [][]string `json:"headers"`
}

// HeaderUnion is a header union instance; HeaderIDs are its member instances.
type HeaderUnion struct {
	Name      string `json:"name"`
	ID        int    `json:"id"`
	UnionType string `json:"union_type"`
	HeaderIDs []int  `json:"header_ids"`
	PiOmit    bool   `json:"pi_omit"`
}

// HeaderUnionStack is a stack of header unions.
type HeaderUnionStack struct {
	Name           string `json:"name"`
	ID             int    `json:"id"`
	UnionType      string `json:"union_type"`
	Size           int    `json:"size"`
	HeaderUnionIDs []int  `json:"header_union_ids"`
}

// FieldList is a list of fields (and constants) used by resubmit,
// recirculate and clone (preserved metadata) and by learn lists.
type FieldList struct {
	ID         int         `json:"id"`
	Name       string      `json:"name"`
	SourceInfo *SourceInfo `json:"source_info,omitempty"`
	Elements   []*Value    `json:"elements"`
}

// NamedValue is the tuple [name, value]: an error code or an enum member.
type NamedValue struct {
	Name  string
	Value int
}

// MarshalJSON writes [name, value].
func (n NamedValue) MarshalJSON() ([]byte, error) { return json.Marshal([]any{n.Name, n.Value}) }

// UnmarshalJSON reads [name, value].
func (n *NamedValue) UnmarshalJSON(data []byte) error {
	var t []json.RawMessage
	if err := json.Unmarshal(data, &t); err != nil || len(t) != 2 {
		return fmt.Errorf("want [name, value], got %s", data)
	}
	if err := json.Unmarshal(t[0], &n.Name); err != nil {
		return fmt.Errorf("name in %s: %w", data, err)
	}
	if err := json.Unmarshal(t[1], &n.Value); err != nil {
		return fmt.Errorf("value in %s: %w", data, err)
	}
	return nil
}

// Enum is a serializable enum with its members.
type Enum struct {
	Name    string       `json:"name"`
	Entries []NamedValue `json:"entries"`
}

// FieldAlias is the tuple [alias, [header, field]].
type FieldAlias struct {
	Alias  string
	Target []string
}

// MarshalJSON writes [alias, [header, field]].
func (a FieldAlias) MarshalJSON() ([]byte, error) { return json.Marshal([]any{a.Alias, a.Target}) }

// UnmarshalJSON reads [alias, [header, field]].
func (a *FieldAlias) UnmarshalJSON(data []byte) error {
	var t []json.RawMessage
	if err := json.Unmarshal(data, &t); err != nil || len(t) != 2 {
		return fmt.Errorf("want [alias, target], got %s", data)
	}
	if err := json.Unmarshal(t[0], &a.Alias); err != nil {
		return fmt.Errorf("field alias: %w", err)
	}
	if err := json.Unmarshal(t[1], &a.Target); err != nil {
		return fmt.Errorf("field alias %q target: %w", a.Alias, err)
	}
	return nil
}

// Parser is a parser with its states.
type Parser struct {
	Name        string       `json:"name"`
	ID          int          `json:"id"`
	InitState   string       `json:"init_state"`
	ParseStates []ParseState `json:"parse_states"`
}

// ParseState is one parser state: ops run in order, then the transition key
// is built and matched against Transitions in order.
type ParseState struct {
	Name          string       `json:"name"`
	ID            int          `json:"id"`
	ParserOps     []Primitive  `json:"parser_ops"`
	Transitions   []Transition `json:"transitions"`
	TransitionKey []*Value     `json:"transition_key"`
}

// Transition is one select case. Type is "hexstr", "default" or
// "parse_vset"; Value and Mask are hex strings (Value names the vset for
// "parse_vset"); a null NextState means accept.
type Transition struct {
	Type      string  `json:"type,omitempty"`
	Value     *string `json:"value"`
	Mask      *string `json:"mask"`
	NextState *string `json:"next_state"`
}

// ParseVset is a parser value set.
type ParseVset struct {
	Name               string      `json:"name"`
	ID                 int         `json:"id"`
	SourceInfo         *SourceInfo `json:"source_info,omitempty"`
	CompressedBitwidth int         `json:"compressed_bitwidth"`
	MaxSize            int         `json:"max_size"`
}

// Deparser emits the valid headers of Order in order.
type Deparser struct {
	Name       string      `json:"name"`
	ID         int         `json:"id"`
	SourceInfo *SourceInfo `json:"source_info,omitempty"`
	Order      []string    `json:"order"`
	Primitives []Primitive `json:"primitives"`
}

// MeterArray is an indexed or direct meter. Type is "packets" or "bytes";
// RateCount is 2 for two-rate three-colour meters. Direct meters name their
// table in Binding and the field receiving the colour in ResultTarget.
type MeterArray struct {
	Name         string      `json:"name"`
	ID           int         `json:"id"`
	SourceInfo   *SourceInfo `json:"source_info,omitempty"`
	IsDirect     bool        `json:"is_direct"`
	Size         int         `json:"size"`
	RateCount    int         `json:"rate_count"`
	Type         string      `json:"type"`
	Binding      string      `json:"binding,omitempty"`
	ResultTarget []string    `json:"result_target,omitempty"`
}

// CounterArray is an indexed or direct counter (Binding names the table).
type CounterArray struct {
	Name       string      `json:"name"`
	ID         int         `json:"id"`
	SourceInfo *SourceInfo `json:"source_info,omitempty"`
	Size       int         `json:"size"`
	IsDirect   bool        `json:"is_direct"`
	Binding    string      `json:"binding,omitempty"`
}

// RegisterArray is a register of Size cells of Bitwidth bits.
type RegisterArray struct {
	Name       string      `json:"name"`
	ID         int         `json:"id"`
	SourceInfo *SourceInfo `json:"source_info,omitempty"`
	Size       int         `json:"size"`
	Bitwidth   int         `json:"bitwidth"`
}

// Calculation is a hash or checksum over a list of inputs.
type Calculation struct {
	Name       string      `json:"name"`
	ID         int         `json:"id"`
	SourceInfo *SourceInfo `json:"source_info,omitempty"`
	Algo       string      `json:"algo"`
	Input      []CalcInput `json:"input"`
}

// CalcInput is one calculation input: a field, a hexstr constant (with
// Bitwidth), a whole header, or the payload (null value).
type CalcInput struct {
	Type     string `json:"type"`
	Value    *Value `json:"value"`
	Bitwidth *int   `json:"bitwidth,omitempty"`
}

// RuntimeData is an action parameter.
type RuntimeData struct {
	Name     string `json:"name"`
	Bitwidth int    `json:"bitwidth"`
}

// Action is a compound action: primitives run in order.
type Action struct {
	Name        string        `json:"name"`
	ID          int           `json:"id"`
	RuntimeData []RuntimeData `json:"runtime_data"`
	Primitives  []Primitive   `json:"primitives"`
	SourceInfo  *SourceInfo   `json:"source_info,omitempty"`
}

// Primitive is a primitive call inside an action, a parser op or a deparser.
type Primitive struct {
	Op         string      `json:"op"`
	Parameters []*Value    `json:"parameters"`
	SourceInfo *SourceInfo `json:"source_info,omitempty"`
}

// Pipeline is a control (ingress or egress): a graph of tables and
// conditionals entered at InitTable (null for an empty control).
type Pipeline struct {
	Name           string          `json:"name"`
	ID             int             `json:"id"`
	SourceInfo     *SourceInfo     `json:"source_info,omitempty"`
	InitTable      *string         `json:"init_table"`
	Tables         []Table         `json:"tables"`
	ActionProfiles []ActionProfile `json:"action_profiles"`
	Conditionals   []Conditional   `json:"conditionals"`
}

// Table is a match-action table. MatchType is the table's overall kind
// ("exact", "lpm", "ternary", "range"); Type is "simple", "indirect" or
// "indirect_ws". NextTables maps action names (or "__HIT__"/"__MISS__") to
// the next node, null ending the pipeline.
type Table struct {
	Name            string             `json:"name"`
	ID              int                `json:"id"`
	SourceInfo      *SourceInfo        `json:"source_info,omitempty"`
	Key             []TableKey         `json:"key"`
	MatchType       string             `json:"match_type"`
	Type            string             `json:"type"`
	ActionProfile   string             `json:"action_profile,omitempty"`
	MaxSize         int                `json:"max_size"`
	WithCounters    bool               `json:"with_counters"`
	SupportTimeout  bool               `json:"support_timeout"`
	DirectMeters    *string            `json:"direct_meters"`
	ActionIDs       []int              `json:"action_ids"`
	Actions         []string           `json:"actions"`
	BaseDefaultNext *string            `json:"base_default_next"`
	NextTables      map[string]*string `json:"next_tables"`
	DefaultEntry    *DefaultEntry      `json:"default_entry,omitempty"`
	Entries         []TableEntry       `json:"entries,omitempty"`
}

// TableKey is one key element. Target is [header, field] (or [header,
// "$valid$"]); Mask, when set, is applied to the field before matching.
type TableKey struct {
	MatchType string   `json:"match_type"`
	Name      string   `json:"name"`
	Target    []string `json:"target"`
	Mask      *string  `json:"mask"`
}

// DefaultEntry is the action run on a miss. ActionConst forbids changing the
// action; ActionEntryConst forbids changing the entry at all.
type DefaultEntry struct {
	ActionID         int      `json:"action_id"`
	ActionConst      bool     `json:"action_const"`
	ActionData       []string `json:"action_data"`
	ActionEntryConst bool     `json:"action_entry_const"`
}

// TableEntry is a const entry of a table.
type TableEntry struct {
	SourceInfo  *SourceInfo `json:"source_info,omitempty"`
	MatchKey    []MatchKey  `json:"match_key"`
	ActionEntry ActionEntry `json:"action_entry"`
	Priority    int         `json:"priority"`
}

// MatchKey is one key of a const entry: Key (exact, lpm, ternary, optional),
// Mask (ternary), PrefixLength (lpm), Start/End (range). Values are hex strings.
type MatchKey struct {
	MatchType    string  `json:"match_type"`
	Key          *string `json:"key,omitempty"`
	Mask         *string `json:"mask,omitempty"`
	PrefixLength *int    `json:"prefix_length,omitempty"`
	Start        *string `json:"start,omitempty"`
	End          *string `json:"end,omitempty"`
}

// ActionEntry is the action of a const entry with its data as hex strings.
type ActionEntry struct {
	ActionID   int      `json:"action_id"`
	ActionData []string `json:"action_data"`
}

// ActionProfile is an action profile, with a selector for action selectors.
type ActionProfile struct {
	Name       string      `json:"name"`
	ID         int         `json:"id"`
	SourceInfo *SourceInfo `json:"source_info,omitempty"`
	MaxSize    int         `json:"max_size"`
	Selector   *Selector   `json:"selector,omitempty"`
}

// Selector picks a member of a group by hashing Input with Algo.
type Selector struct {
	Algo  string   `json:"algo"`
	Input []*Value `json:"input"`
}

// Conditional is an if node: a boolean Expression and the next nodes.
type Conditional struct {
	Name       string      `json:"name"`
	ID         int         `json:"id"`
	SourceInfo *SourceInfo `json:"source_info,omitempty"`
	Expression *Value      `json:"expression"`
	TrueNext   *string     `json:"true_next"`
	FalseNext  *string     `json:"false_next"`
}

// Checksum is a verify_checksum / update_checksum: Target receives (or is
// compared with) the Calculation when IfCond holds.
type Checksum struct {
	Name        string      `json:"name"`
	ID          int         `json:"id"`
	SourceInfo  *SourceInfo `json:"source_info,omitempty"`
	Target      []string    `json:"target"`
	Type        string      `json:"type"`
	Calculation string      `json:"calculation"`
	Verify      bool        `json:"verify"`
	Update      bool        `json:"update"`
	IfCond      *Value      `json:"if_cond"`
}

// ExternInstance is an instance of a generic extern.
type ExternInstance struct {
	Name            string            `json:"name"`
	ID              int               `json:"id"`
	Type            string            `json:"type"`
	AttributeValues []ExternAttribute `json:"attribute_values"`
}

// ExternAttribute is one attribute of an extern instance.
type ExternAttribute struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

// Parse decodes a bmv2 JSON document. Errors give the line and column of
// the offending input and, for a value of the wrong type, the member path.
func Parse(data []byte) (*Program, error) {
	var p Program
	if err := json.Unmarshal(data, &p); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			// Offset counts the offending byte itself
			line, col := position(data, max(syn.Offset-1, 0))
			return nil, fmt.Errorf("bmv2 JSON: line %d, column %d: %w", line, col, err)
		case errors.As(err, &typ):
			line, col := position(data, typ.Offset)
			return nil, fmt.Errorf("bmv2 JSON: line %d, column %d, member %q: %w", line, col, typ.Field, err)
		}
		return nil, fmt.Errorf("bmv2 JSON: %w", err)
	}
	return &p, nil
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
