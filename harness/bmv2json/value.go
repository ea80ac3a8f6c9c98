package bmv2json

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Kind says which payload of a Value is meaningful. The bmv2 format's
// "value" member is polymorphic; Kind records the JSON shape it had (or will
// have) so that Unmarshal followed by Marshal reproduces it exactly.
type Kind uint8

// Payload shapes of a Value.
const (
	KindNull   Kind = iota // JSON null (e.g. the value of a "payload" calculation input)
	KindString             // a JSON string: hexstr, header, stack, regular, calculation, ...
	KindNames              // a list of strings: field ["hdr","f"], stack_field, header_union field
	KindInts               // a list of integers: lookahead [offset, bitwidth]
	KindInt                // an integer: runtime_data index, local index, access_field offset
	KindBool               // a boolean: bool
	KindInner              // a nested typed value: parameters of type "expression" wrap one
	KindOp                 // an operation {"op","left","right"[,"cond"]}: the body of "expression"
	KindPrim               // a primitive call {"op","parameters"}: parser op "primitive"
	KindRaw                // any other JSON, kept verbatim
)

// Value is one node of the bmv2 format's typed values: {"type": T, "value": V}.
// When Type is empty the node is untyped and stands for its bare payload (the
// right operand of "access_field" is a bare integer, for instance).
//
// Typical nodes: {"type":"field","value":["h","f"]} (Names),
// {"type":"hexstr","value":"0x0a"} (Str), {"type":"runtime_data","value":0} (Int),
// {"type":"bool","value":true} (Bool), {"type":"expression","value":{"op":..}} (Op),
// and a primitive parameter {"type":"expression","value":{"type":"expression",..}} (Inner).
type Value struct {
	Type  string
	Kind  Kind
	Str   string
	Names []string
	Ints  []int
	Int   int
	Bool  bool
	Inner *Value
	Op    *Op
	Prim  *Primitive
	Raw   json.RawMessage
}

// Op is an expression operation. Unary operators ("not", "~", "d2b", "b2d",
// "valid") have a null Left; "?" has Cond.
type Op struct {
	Op    string `json:"op"`
	Left  *Value `json:"left"`
	Right *Value `json:"right"`
	Cond  *Value `json:"cond,omitempty"`
}

// Constructors for the common nodes, used by code that emits JSON.

// Field refers to header (or metadata) instance hdr, field f.
func Field(hdr, f string) *Value {
	return &Value{Type: "field", Kind: KindNames, Names: []string{hdr, f}}
}

// Hexstr is a constant written as a hexadecimal string ("0x0a", "-0x01").
func Hexstr(s string) *Value { return &Value{Type: "hexstr", Kind: KindString, Str: s} }

// Named is a node whose payload is a name: header, stack, regular, calculation, ...
func Named(typ, name string) *Value { return &Value{Type: typ, Kind: KindString, Str: name} }

// Param refers to the i-th parameter of the enclosing action.
func Param(i int) *Value { return &Value{Type: "runtime_data", Kind: KindInt, Int: i} }

// Bool is a boolean constant.
func Bool(b bool) *Value { return &Value{Type: "bool", Kind: KindBool, Bool: b} }

// Expr wraps an operation as {"type":"expression","value":{"op":...}}.
func Expr(op string, left, right *Value) *Value {
	return &Value{Type: "expression", Kind: KindOp, Op: &Op{Op: op, Left: left, Right: right}}
}

// Wrap makes a primitive parameter of type "expression" around an expression node.
func Wrap(v *Value) *Value { return &Value{Type: "expression", Kind: KindInner, Inner: v} }

// FieldRef returns the [header, field] pair of a field node.
func (v *Value) FieldRef() (hdr, field string, ok bool) {
	if v == nil || v.Kind != KindNames || len(v.Names) != 2 {
		return "", "", false
	}
	return v.Names[0], v.Names[1], true
}

// String renders the node compactly, for error messages.
func (v *Value) String() string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}

// MarshalJSON writes {"type":..,"value":..}, or the bare payload when Type is empty.
func (v *Value) MarshalJSON() ([]byte, error) {
	payload, err := v.marshalPayload()
	if err != nil {
		return nil, err
	}
	if v.Type == "" {
		return payload, nil
	}
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	b.WriteString(strconv.Quote(v.Type))
	b.WriteString(`,"value":`)
	b.Write(payload)
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (v *Value) marshalPayload() ([]byte, error) {
	switch v.Kind {
	case KindNull:
		return []byte("null"), nil
	case KindString:
		return json.Marshal(v.Str)
	case KindNames:
		if v.Names == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(v.Names)
	case KindInts:
		if v.Ints == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(v.Ints)
	case KindInt:
		return json.Marshal(v.Int)
	case KindBool:
		return json.Marshal(v.Bool)
	case KindInner:
		return json.Marshal(v.Inner)
	case KindOp:
		return json.Marshal(v.Op)
	case KindPrim:
		return json.Marshal(v.Prim)
	case KindRaw:
		return v.Raw, nil
	}
	return nil, fmt.Errorf("bmv2json: value of type %q has unknown kind %d", v.Type, v.Kind)
}

// UnmarshalJSON accepts a typed node or a bare payload.
func (v *Value) UnmarshalJSON(data []byte) error {
	*v = Value{}
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(data, &probe); err != nil {
			return err
		}
		if t, ok := probe["type"]; ok {
			if err := json.Unmarshal(t, &v.Type); err != nil {
				return fmt.Errorf("value type: %w", err)
			}
			inner, ok := probe["value"]
			if !ok || len(probe) != 2 {
				// Objects like calculation inputs carry more members; keep them whole.
				v.Type, v.Kind, v.Raw = "", KindRaw, append(json.RawMessage(nil), data...)
				return nil
			}
			if err := v.unmarshalPayload(inner); err != nil {
				return fmt.Errorf("value of type %q: %w", v.Type, err)
			}
			return nil
		}
	}
	return v.unmarshalPayload(data)
}

func (v *Value) unmarshalPayload(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return fmt.Errorf("empty value")
	}
	switch data[0] {
	case 'n':
		v.Kind = KindNull
		return nil
	case '"':
		v.Kind = KindString
		return json.Unmarshal(data, &v.Str)
	case 't', 'f':
		v.Kind = KindBool
		return json.Unmarshal(data, &v.Bool)
	case '[':
		var names []string
		if err := json.Unmarshal(data, &names); err == nil {
			v.Kind, v.Names = KindNames, names
			return nil
		}
		var ints []int
		if err := json.Unmarshal(data, &ints); err == nil {
			v.Kind, v.Ints = KindInts, ints
			return nil
		}
	case '{':
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(data, &probe); err != nil {
			return err
		}
		if _, ok := probe["type"]; ok {
			v.Kind, v.Inner = KindInner, &Value{}
			return json.Unmarshal(data, v.Inner)
		}
		if _, ok := probe["op"]; ok {
			if _, ok := probe["parameters"]; ok {
				v.Kind, v.Prim = KindPrim, &Primitive{}
				return json.Unmarshal(data, v.Prim)
			}
			v.Kind, v.Op = KindOp, &Op{}
			return json.Unmarshal(data, v.Op)
		}
	default:
		var n int
		if err := json.Unmarshal(data, &n); err == nil {
			v.Kind, v.Int = KindInt, n
			return nil
		}
	}
	v.Kind, v.Raw = KindRaw, append(json.RawMessage(nil), data...)
	return nil
}
