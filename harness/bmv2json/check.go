package bmv2json

import (
	"fmt"
)

// bmv2 reads a typed node {"type":"expression","value":V} two ways, and
// which one depends on where the node sits (bmv2's P4Objects):
//
//   - as an operand (a conditional's "expression", a checksum's "if_cond",
//     the parameters of a parser "verify", the operands of an operation),
//     V is the operation itself, {"op","left","right"}. A second wrapper
//     there ({"type":"expression","value":{"type":"expression",...}})
//     leaves bmv2 with an operation without an opcode: simple_switch
//     crashes (SIGSEGV in Expression::eval) on the first packet that
//     evaluates it.
//   - as a parameter of a primitive (an action's primitives, a parser
//     "primitive", the source of a parser "set", the length of
//     "extract_VL"), bmv2 builds the expression from V, which must be a
//     typed node itself: {"type":"expression","value":{"type":"expression",
//     "value":{"op",...}}} or {"type":"expression","value":{"type":"field",
//     ...}}. An operation directly under the parameter is refused when the
//     program loads ("Invalid 'type' in expression: ''").
//
// A parser "set" takes only a field, hexstr, lookahead or expression
// source: bmv2 refuses any other ("unsupported source type"). Inside an
// expression an action parameter is {"type":"local"}; "runtime_data" is
// for a primitive's own parameter only.

// CheckBmv2Shapes reports the first node of p that bmv2 (simple_switch
// 1.15) would refuse when loading the program or crash on when running
// it, naming the JSON field ("actions[3] (name) primitives[0]
// parameters[0]: ..."); nil when there is none. The engine runs it when it
// loads a program, so JSON that only the engine tolerates is refused.
func (p *Program) CheckBmv2Shapes() error {
	for i := range p.Actions {
		a := &p.Actions[i]
		if err := checkPrimitives(fmt.Sprintf("actions[%d] (%s)", i, a.Name), a.Primitives); err != nil {
			return err
		}
	}
	for i := range p.Parsers {
		for j := range p.Parsers[i].ParseStates {
			st := &p.Parsers[i].ParseStates[j]
			at := fmt.Sprintf("parsers[%d].parse_states[%d] (%s)", i, j, st.Name)
			for k, op := range st.ParserOps {
				if err := checkParserOp(fmt.Sprintf("%s parser_ops[%d] (%s)", at, k, op.Op), op); err != nil {
					return err
				}
			}
		}
	}
	for i := range p.Deparsers {
		if err := checkPrimitives(fmt.Sprintf("deparsers[%d] (%s)", i, p.Deparsers[i].Name), p.Deparsers[i].Primitives); err != nil {
			return err
		}
	}
	for i := range p.Pipelines {
		for j, t := range p.Pipelines[i].Tables {
			for k, key := range t.Key {
				if !bmv2MatchTypes[key.MatchType] {
					return fmt.Errorf("pipelines[%d].tables[%d] (%s) key[%d] (%s) match_type: %q: bmv2 refuses the program (\"Invalid match type\"; simple_switch_grpc then runs without it, refusing every table entry); p4c writes an optional key as \"ternary\"", i, j, t.Name, k, key.Name, key.MatchType)
				}
			}
		}
		for j, c := range p.Pipelines[i].Conditionals {
			if err := checkOperand(fmt.Sprintf("pipelines[%d].conditionals[%d] (%s) expression", i, j, c.Name), c.Expression); err != nil {
				return err
			}
		}
	}
	for i, c := range p.Checksums {
		if err := checkOperand(fmt.Sprintf("checksums[%d] (%s) if_cond", i, c.Name), c.IfCond); err != nil {
			return err
		}
	}
	return nil
}

func checkPrimitives(at string, prims []Primitive) error {
	for j, pr := range prims {
		for k, v := range pr.Parameters {
			if err := checkParam(fmt.Sprintf("%s primitives[%d] (%s) parameters[%d]", at, j, pr.Op, k), v); err != nil {
				return err
			}
		}
	}
	return nil
}

// bmv2MatchTypes are the table key match types bmv2 loads.
var bmv2MatchTypes = map[string]bool{"exact": true, "lpm": true, "ternary": true, "range": true, "valid": true}

// parserSetSources are the source types bmv2's parser "set" accepts.
var parserSetSources = map[string]bool{"field": true, "hexstr": true, "lookahead": true, "expression": true}

func checkParserOp(at string, op Primitive) error {
	param := func(k int) (*Value, string) {
		if k < len(op.Parameters) {
			return op.Parameters[k], fmt.Sprintf("%s parameters[%d]", at, k)
		}
		return nil, ""
	}
	switch op.Op {
	case "set":
		src, where := param(1)
		if src == nil {
			return nil
		}
		if !parserSetSources[src.Type] {
			return fmt.Errorf("%s: a parser set from a %q node: bmv2 takes a field, hexstr, lookahead or expression source only and refuses the program (wrap it: {\"type\":\"expression\",\"value\":%s})", where, src.Type, src)
		}
		return checkParam(where, src)
	case "extract_VL":
		n, where := param(1)
		return checkParam(where, n)
	case "verify":
		for k := range op.Parameters {
			v, where := param(k)
			if err := checkOperand(where, v); err != nil {
				return err
			}
		}
	case "primitive":
		for k, v := range op.Parameters {
			if v != nil && v.Kind == KindPrim {
				if err := checkPrimitives(fmt.Sprintf("%s parameters[%d]", at, k), []Primitive{*v.Prim}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkParam checks a parameter of a primitive, which bmv2 unwraps once.
func checkParam(at string, v *Value) error {
	if v == nil || v.Type != "expression" {
		return nil
	}
	switch v.Kind {
	case KindInner:
		return checkOperand(at+" value", v.Inner)
	case KindOp:
		return fmt.Errorf("%s: the operation %q sits directly under the parameter: bmv2 builds a primitive's expression parameter from its \"value\", which must be a typed node ({\"type\":\"expression\",\"value\":{\"op\":...}}), and refuses the program (\"Invalid 'type' in expression\")", at, v.Op.Op)
	}
	return fmt.Errorf("%s: an expression parameter whose value is neither a typed node nor an operation: %s", at, v)
}

// checkOperand checks an expression operand, whose "value" bmv2 reads as
// the operation itself.
func checkOperand(at string, v *Value) error {
	if v != nil && v.Type == "runtime_data" {
		return fmt.Errorf("%s: an action parameter inside an expression as \"runtime_data\": bmv2 refuses the program (\"Invalid 'type' in expression: 'runtime_data'\"; simple_switch_grpc then runs without it, refusing every table entry); p4c writes {\"type\":\"local\",\"value\":%d}", at, v.Int)
	}
	if v == nil || v.Type != "expression" {
		return nil
	}
	switch v.Kind {
	case KindOp:
		o := v.Op
		for _, side := range []struct {
			name string
			v    *Value
		}{{"left", o.Left}, {"right", o.Right}, {"cond", o.Cond}} {
			if err := checkOperand(fmt.Sprintf("%s %s (of %q)", at, side.name, o.Op), side.v); err != nil {
				return err
			}
		}
		return nil
	case KindInner:
		return fmt.Errorf("%s: an expression wrapped twice ({\"type\":\"expression\",\"value\":{\"type\":...}}) where bmv2 reads \"value\" as the operation itself: simple_switch crashes (SIGSEGV) on the first packet that evaluates it; p4c writes {\"type\":\"expression\",\"value\":{\"op\":...}} here", at)
	}
	return fmt.Errorf("%s: an expression whose value is not an operation: %s", at, v)
}
