// Package midend lowers a checked P4_16 v1model program (package
// frontend/ast) to the flat model of bmv2: header instances and one scalars
// metadata header instead of nested structs and locals, action bodies as
// straight-line primitive lists (with _jump/_jump_if_zero for if-statements),
// control bodies as a graph of tables and conditionals, sub-controls,
// sub-parsers, functions and action-to-action calls inlined, and externs
// turned into register/counter/meter arrays, calculations and checksums.
//
// The result (Program) is still independent of the JSON encoding: package
// backend assigns the numeric IDs and writes bmv2 JSON, package p4info
// derives the P4Runtime P4Info. Whatever this package cannot lower is
// reported as `file:line:col: unsupported: ...`, never compiled wrongly.
package midend

import (
	"math/big"

	"github.com/grid-ina/grid/harness/bmv2json"
	"github.com/grid-ina/grid/harness/p4c/frontend/ast"
)

// Program is a lowered v1model program.
type Program struct {
	// Source is the file name of the main P4 file (bmv2's "program").
	Source       string
	HeaderTypes  []*HeaderType
	Headers      []*Header
	Stacks       []*Stack
	UnionTypes   []*UnionType
	Unions       []*Union
	UnionStacks  []*UnionStack
	Errors       []bmv2json.NamedValue
	Enums        []bmv2json.Enum
	FieldLists   []*FieldList
	Parser       *Parser
	Deparser     *Deparser
	Ingress      *Pipeline
	Egress       *Pipeline
	Actions      []*Action
	Registers    []*Register
	Counters     []*Counter
	Meters       []*Meter
	Calculations []*Calculation
	Checksums    []*Checksum
	// CalledActions are actions invoked directly from apply blocks (inlined
	// in bmv2); p4c still lists them in P4Info.
	CalledActions []*Action
	// SerEnums are the serializable enums, for P4Info's type_info.
	SerEnums []*SerEnum
	// ControllerHeaders are the @controller_header headers, for P4Info.
	ControllerHeaders []*ControllerHeader
	// LearnLists are the digests (bmv2 learn lists), one per digested type.
	LearnLists []*LearnList
	// ValueSets are the parser value sets.
	ValueSets []*ValueSet
	// ActionProfiles are the action profiles and selectors.
	ActionProfiles []*ActionProfile
	// Warnings are what the lowering accepted but p4c warns about.
	Warnings []Warning
}

// Warning is a diagnostic that does not fail the compilation.
type Warning struct {
	Pos ast.Pos
	Msg string
}

// HeaderType is the layout of a header or of a metadata instance.
type HeaderType struct {
	Name   string
	Fields []bmv2json.HeaderField
	// types are the P4 types of Fields (without padding); flat maps the
	// dotted path of a field nested in a struct inside a header to its
	// flattened name.
	types []ast.Type
	flat  map[string]string
	// MaxLength is the maximum length in bytes of a header with a varbit
	// field (0 for fixed-length headers).
	MaxLength int
}

// Header is a header or metadata instance.
type Header struct {
	Name     string
	Type     *HeaderType
	Metadata bool
}

// Stack is a header stack; Elems are its element instances in order.
type Stack struct {
	Name  string
	Type  *HeaderType
	Elems []*Header
}

// UnionType is a header_union type: its members' names and header types
// in declaration order.
type UnionType struct {
	Name    string
	Members []UnionMember
}

// UnionMember is one member of a header union type.
type UnionMember struct {
	Name string
	Type *HeaderType
}

// Union is a header union instance; Members are its member header
// instances, in the order of its type's members.
type Union struct {
	Name    string
	Type    *UnionType
	Members []*Header
}

// UnionStack is a stack of header unions.
type UnionStack struct {
	Name  string
	Type  *UnionType
	Elems []*Union
}

// FieldList is a list of fields preserved by clone/resubmit/recirculate.
type FieldList struct {
	ID       int // bmv2 field list id (the @field_list index + 1 scheme of p4c)
	Name     string
	Elements []*bmv2json.Value
}

// Parser is the lowered parser.
type Parser struct {
	Init   string
	States []*ParseState
}

// ParseState is one lowered parser state.
type ParseState struct {
	Name string
	Ops  []bmv2json.Primitive
	// Key is the transition key (fields or lookaheads); KeyWidths gives the
	// width of each component in bits.
	Key         []*bmv2json.Value
	KeyWidths   []int
	Transitions []*Transition
}

// Transition is one select case: Value/Mask are hex strings covering the
// whole key (each component padded to whole bytes), empty for default.
// Next is "" for accept and for reject: like p4c's bmv2 back end, a
// rejected packet continues to ingress (v1model has no drop on reject).
type Transition struct {
	Default bool
	// ValueSet, when set, matches the values the control plane put in
	// that parser value set (a "parse_vset" transition).
	ValueSet string
	Value    string
	Mask     string // "" when there is no mask
	Next     string // "" means accept
}

// Deparser is the emit order.
type Deparser struct {
	Name  string
	Pos   ast.Pos
	Order []string
}

// Param is an action parameter supplied by the control plane.
type Param struct {
	Name  string
	Width int
	Annos ast.Annotations
	// Enum names the serializable enum type of the parameter, if any.
	Enum string
}

// Action is a bmv2 action. Synthesized actions (straight-line code of apply
// blocks, p4c's tbl_act actions) are Hidden from P4Info.
type Action struct {
	Name   string
	Params []Param
	Prims  []bmv2json.Primitive
	Pos    ast.Pos
	Annos  ast.Annotations
	Hidden bool
	// ID is the bmv2 action id, set by the backend numbering (the index in
	// Program.Actions).
	ID int
}

// Pipeline is a lowered control (ingress or egress).
type Pipeline struct {
	Name   string
	Pos    ast.Pos
	Init   *string
	Tables []*Table
	Conds  []*Cond
}

// KeyElem is one table key element.
type KeyElem struct {
	MatchType string // exact, lpm, ternary, range, optional
	Name      string // control-plane name (source text or @name)
	Target    []string
	Mask      string // "" when the whole field is matched
	Width     int
	// Opaque keys (error, plain enums) have no P4Runtime bitwidth.
	Opaque bool
	// Enum names the serializable enum type of the key, if any.
	Enum  string
	Annos ast.Annotations
}

// ActionUse is an action listed in a table with its P4Info scope.
type ActionUse struct {
	Action      *Action
	decl        *ast.ActionDecl
	DefaultOnly bool
	TableOnly   bool
	Annos       ast.Annotations
}

// Entry is a const table entry.
type Entry struct {
	Pos      ast.Pos
	Keys     []bmv2json.MatchKey
	Action   *Action
	Args     []string // hex strings
	Priority int
}

// Table is a lowered table. Next maps action names, or "__HIT__" and
// "__MISS__", to the name of the following node (nil ends the pipeline).
type Table struct {
	Name          string
	Pos           ast.Pos
	Annos         ast.Annotations
	Hidden        bool // synthesized: not in P4Info
	Keys          []KeyElem
	Actions       []ActionUse
	Default       *Action
	DefaultArgs   []string
	DefaultConst  bool
	Size          int
	Entries       []Entry
	EntriesConst  bool
	DirectCounter string
	DirectMeter   string
	// SupportTimeout makes entries age: the control plane learns of
	// entries not hit for their idle timeout.
	SupportTimeout bool
	// Profile is the action profile or selector of an indirect table.
	Profile *ActionProfile
	Next    map[string]*string
}

// LearnList is what digest() sends for one type: Elements are the
// temporaries each digest() call fills before generate_digest, Members
// their names and P4 types for P4Info (Struct is the struct's name, ""
// for a tuple).
type LearnList struct {
	ID       int
	Name     string
	Pos      ast.Pos
	Struct   string
	Members  []LearnMember
	Elements []*bmv2json.Value
}

// LearnMember is one digested field.
type LearnMember struct {
	Name string
	Type ast.Type
}

// ValueSet is a parser value set: Fields are the select components it
// matches (one for a bit string or enum, one per field of a struct).
type ValueSet struct {
	Name   string
	Pos    ast.Pos
	Annos  ast.Annotations
	Size   int
	Fields []ValueSetField
}

// ValueSetField is one matched component of a value set's elements.
type ValueSetField struct {
	Name  string // "" for a bit string element
	Width int
	Annos ast.Annotations
	Enum  string // the serializable enum's name, if the field is one
}

// Width is the bits of one value set element (bmv2's compressed_bitwidth).
func (v *ValueSet) Width() int {
	w := 0
	for _, f := range v.Fields {
		w += f.Width
	}
	return w
}

// ActionProfile is an action_profile or, with a Selector, an
// action_selector: tables using it hold members (and groups) instead of
// actions.
type ActionProfile struct {
	Name     string
	Pos      ast.Pos
	Annos    ast.Annotations
	Size     int
	Selector *Selector
	// Tables are the names of the tables using it.
	Tables []string
}

// Selector picks a group's member by hashing Input with Algo.
type Selector struct {
	Algo  string
	Input []*bmv2json.Value
}

// Cond is a conditional node.
type Cond struct {
	Name  string
	Pos   ast.Pos
	Expr  *bmv2json.Value
	True  *string
	False *string
}

// Register is a register array.
type Register struct {
	Name  string
	Pos   ast.Pos
	Annos ast.Annotations
	Size  int
	Width int
	Enum  string // the serializable enum its cells hold, if they hold one
}

// Counter is an indexed or direct counter.
type Counter struct {
	Name    string
	Pos     ast.Pos
	Annos   ast.Annotations
	Size    int
	Unit    string // packets, bytes, packets_and_bytes
	Direct  bool
	Binding string // table, for direct counters
}

// Meter is an indexed or direct meter.
type Meter struct {
	Name         string
	Pos          ast.Pos
	Annos        ast.Annotations
	Size         int
	Unit         string // packets or bytes
	Direct       bool
	Binding      string
	ResultTarget []string
}

// Calculation is a hash or checksum computation.
type Calculation struct {
	Name  string
	Pos   ast.Pos
	Algo  string
	Input []bmv2json.CalcInput
}

// Checksum is a verify/update checksum.
type Checksum struct {
	Name        string
	Pos         ast.Pos
	Target      []string
	Calculation string
	Verify      bool
	IfCond      *bmv2json.Value
}

// SerEnum is a serializable enum `enum bit<Width> Name { ... }`.
type SerEnum struct {
	Name    string
	Width   int
	Members []SerEnumMember
}

// SerEnumMember is one member of a serializable enum.
type SerEnumMember struct {
	Name  string
	Value *big.Int
}

// ControllerHeader is a @controller_header header type, for P4Info's
// controller_packet_metadata.
type ControllerHeader struct {
	Name   string
	Annos  ast.Annotations
	Fields []ControllerField
}

// ControllerField is a field of a controller header.
type ControllerField struct {
	Name  string
	Width int
	Annos ast.Annotations
	Enum  string // the serializable enum's name, if the field is one
}
