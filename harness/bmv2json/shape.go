package bmv2json

// ShapeForBmv2 rewrites every expression the way bmv2 reads it where it
// sits (CheckBmv2Shapes says why each matters): a compiler may wrap an
// expression as a primitive parameter or not without knowing where it
// ends up, and bmv2 crashes or refuses the program when the wrapping is
// the other one. The embedded compiler's back end runs it on its output.
//   - A primitive's parameter of type "expression" wraps a typed node, so
//     an operation directly under it gets a second wrapper (an assignment
//     to a field of a header stack element at a run-time index).
//   - The parameters of a parser "verify" are operands, so a wrapped
//     expression loses its outer wrapper.
//   - A parser "set" from anything but a field, hexstr, lookahead or
//     expression (a stack's last element, "stack_field") reads it through
//     an expression.
//   - An action parameter inside an expression is "local", not
//     "runtime_data".
func (p *Program) ShapeForBmv2() {
	for i := range p.Actions {
		shapePrimitives(p.Actions[i].Primitives)
	}
	for i := range p.Parsers {
		for j := range p.Parsers[i].ParseStates {
			for _, op := range p.Parsers[i].ParseStates[j].ParserOps {
				shapeParserOp(op)
			}
		}
	}
}

func shapePrimitives(prims []Primitive) {
	for _, pr := range prims {
		for k, v := range pr.Parameters {
			pr.Parameters[k] = asParam(v)
		}
	}
}

func shapeParserOp(op Primitive) {
	switch op.Op {
	case "set", "extract_VL":
		if len(op.Parameters) < 2 {
			return
		}
		src := op.Parameters[1]
		switch src.Type {
		case "field", "hexstr", "lookahead":
		case "expression":
			op.Parameters[1] = asParam(src)
		default:
			op.Parameters[1] = Wrap(src)
		}
	case "verify":
		for k, v := range op.Parameters {
			op.Parameters[k] = asOperand(v)
		}
	case "primitive":
		for _, v := range op.Parameters {
			if v != nil && v.Kind == KindPrim {
				shapePrimitives([]Primitive{*v.Prim})
			}
		}
	}
}

// asParam is v as a primitive parameter: an operation gets its wrapper,
// and action parameters inside it are locals.
func asParam(v *Value) *Value {
	if v == nil || v.Type != "expression" {
		return v
	}
	if v.Kind == KindOp {
		v = Wrap(v)
	}
	if v.Kind == KindInner {
		return &Value{Type: v.Type, Kind: KindInner, Inner: localParams(v.Inner)}
	}
	return v
}

// localParams is the operand v with every action parameter in it as
// {"type":"local"}; nodes are copied where they change, as the compiler
// shares them.
func localParams(v *Value) *Value {
	switch {
	case v == nil:
		return nil
	case v.Type == "runtime_data":
		return &Value{Type: "local", Kind: v.Kind, Int: v.Int}
	case v.Type == "expression" && v.Kind == KindOp:
		o := *v.Op
		o.Left, o.Right, o.Cond = localParams(o.Left), localParams(o.Right), localParams(o.Cond)
		return &Value{Type: v.Type, Kind: KindOp, Op: &o}
	}
	return v
}

// asOperand is v as an operand: wrappers around an expression go.
func asOperand(v *Value) *Value {
	for v != nil && v.Type == "expression" && v.Kind == KindInner && v.Inner != nil && v.Inner.Type == "expression" {
		v = v.Inner
	}
	return v
}
