package backend

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// encoder writes bmv2 JSON directly. encoding/json re-validates the output
// of every nested MarshalJSON call, which makes deep expression trees cost
// quadratic time; writing the value trees by hand keeps Marshal linear.
// Parts without expression trees still go through encoding/json.
type encoder struct {
	b   []byte
	err error
}

func (e *encoder) raw(s string) { e.b = append(e.b, s...) }

// str writes a JSON string; plain printable ASCII is copied, anything
// else goes through encoding/json's escaping.
func (e *encoder) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b, _ := json.Marshal(s)
			e.b = append(e.b, b...)
			return
		}
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"')
}

// json appends v marshalled by encoding/json.
func (e *encoder) json(v any) {
	if e.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.err = err
		return
	}
	e.b = append(e.b, b...)
}

// key writes `"name":` preceded by a comma unless first.
func (e *encoder) key(name string, first bool) {
	if !first {
		e.b = append(e.b, ',')
	}
	e.str(name)
	e.b = append(e.b, ':')
}

func (e *encoder) value(v *bmv2json.Value) {
	if v == nil {
		e.raw("null")
		return
	}
	if v.Type == "" {
		e.payload(v)
		return
	}
	e.raw(`{"type":`)
	e.str(v.Type)
	e.raw(`,"value":`)
	e.payload(v)
	e.b = append(e.b, '}')
}

func (e *encoder) payload(v *bmv2json.Value) {
	switch v.Kind {
	case bmv2json.KindNull:
		e.raw("null")
	case bmv2json.KindString:
		e.str(v.Str)
	case bmv2json.KindNames:
		e.b = append(e.b, '[')
		for i, n := range v.Names {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(n)
		}
		e.b = append(e.b, ']')
	case bmv2json.KindInts:
		e.b = append(e.b, '[')
		for i, n := range v.Ints {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = strconv.AppendInt(e.b, int64(n), 10)
		}
		e.b = append(e.b, ']')
	case bmv2json.KindInt:
		e.b = strconv.AppendInt(e.b, int64(v.Int), 10)
	case bmv2json.KindBool:
		e.b = strconv.AppendBool(e.b, v.Bool)
	case bmv2json.KindInner:
		e.value(v.Inner)
	case bmv2json.KindOp:
		e.raw(`{"op":`)
		e.str(v.Op.Op)
		e.raw(`,"left":`)
		e.value(v.Op.Left)
		e.raw(`,"right":`)
		e.value(v.Op.Right)
		if v.Op.Cond != nil {
			e.raw(`,"cond":`)
			e.value(v.Op.Cond)
		}
		e.b = append(e.b, '}')
	case bmv2json.KindPrim:
		e.primitive(v.Prim)
	case bmv2json.KindRaw:
		e.b = append(e.b, v.Raw...)
	default:
		e.err = fmt.Errorf("bmv2 value of type %q has unknown kind %d", v.Type, v.Kind)
	}
}

func (e *encoder) values(vs []*bmv2json.Value) {
	e.b = append(e.b, '[')
	for i, v := range vs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.value(v)
	}
	e.b = append(e.b, ']')
}

func (e *encoder) primitive(p *bmv2json.Primitive) {
	e.raw(`{"op":`)
	e.str(p.Op)
	e.raw(`,"parameters":`)
	e.values(p.Parameters)
	if p.SourceInfo != nil {
		e.key("source_info", false)
		e.json(p.SourceInfo)
	}
	e.b = append(e.b, '}')
}

func (e *encoder) primitives(ps []bmv2json.Primitive) {
	e.b = append(e.b, '[')
	for i := range ps {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.primitive(&ps[i])
	}
	e.b = append(e.b, ']')
}

// nameID opens an object with its "name" and "id" members.
func (e *encoder) nameID(name string, id int) {
	e.raw(`{"name":`)
	e.str(name)
	e.raw(`,"id":`)
	e.b = strconv.AppendInt(e.b, int64(id), 10)
}

// list writes a JSON array of n elements produced by item.
func (e *encoder) list(n int, item func(i int)) {
	e.b = append(e.b, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		item(i)
	}
	e.b = append(e.b, ']')
}

func (e *encoder) program(p *bmv2json.Program) {
	e.raw(`{`)
	e.key("header_types", true)
	e.json(p.HeaderTypes)
	e.key("headers", false)
	e.json(p.Headers)
	e.key("header_stacks", false)
	e.json(p.HeaderStacks)
	e.key("header_union_types", false)
	e.json(p.HeaderUnionTypes)
	e.key("header_unions", false)
	e.json(p.HeaderUnions)
	e.key("header_union_stacks", false)
	e.json(p.HeaderUnionStacks)
	e.key("field_lists", false)
	e.fieldLists(p.FieldLists)
	e.key("errors", false)
	e.json(p.Errors)
	e.key("enums", false)
	e.json(p.Enums)
	e.key("parsers", false)
	e.list(len(p.Parsers), func(i int) { e.parser(&p.Parsers[i]) })
	e.key("parse_vsets", false)
	e.json(p.ParseVsets)
	e.key("deparsers", false)
	e.list(len(p.Deparsers), func(i int) {
		d := &p.Deparsers[i]
		e.nameID(d.Name, d.ID)
		e.raw(`,"order":`)
		e.json(d.Order)
		e.raw(`,"primitives":`)
		e.primitives(d.Primitives)
		e.b = append(e.b, '}')
	})
	e.key("meter_arrays", false)
	e.json(p.MeterArrays)
	e.key("counter_arrays", false)
	e.json(p.CounterArrays)
	e.key("register_arrays", false)
	e.json(p.RegisterArrays)
	e.key("calculations", false)
	e.list(len(p.Calculations), func(i int) {
		c := &p.Calculations[i]
		e.nameID(c.Name, c.ID)
		e.raw(`,"algo":`)
		e.str(c.Algo)
		e.raw(`,"input":`)
		e.list(len(c.Input), func(j int) {
			in := &c.Input[j]
			e.raw(`{"type":`)
			e.str(in.Type)
			e.raw(`,"value":`)
			e.value(in.Value)
			if in.Bitwidth != nil {
				e.raw(`,"bitwidth":`)
				e.b = strconv.AppendInt(e.b, int64(*in.Bitwidth), 10)
			}
			e.b = append(e.b, '}')
		})
		e.b = append(e.b, '}')
	})
	e.key("learn_lists", false)
	e.fieldLists(p.LearnLists)
	e.key("actions", false)
	e.list(len(p.Actions), func(i int) {
		a := &p.Actions[i]
		e.nameID(a.Name, a.ID)
		e.raw(`,"runtime_data":`)
		e.json(a.RuntimeData)
		e.raw(`,"primitives":`)
		e.primitives(a.Primitives)
		e.b = append(e.b, '}')
	})
	e.key("pipelines", false)
	e.list(len(p.Pipelines), func(i int) {
		pl := &p.Pipelines[i]
		e.nameID(pl.Name, pl.ID)
		e.raw(`,"init_table":`)
		e.json(pl.InitTable)
		e.raw(`,"tables":`)
		e.json(pl.Tables)
		e.raw(`,"action_profiles":`)
		e.json(pl.ActionProfiles)
		e.raw(`,"conditionals":`)
		e.list(len(pl.Conditionals), func(j int) {
			c := &pl.Conditionals[j]
			e.nameID(c.Name, c.ID)
			e.raw(`,"expression":`)
			e.value(c.Expression)
			e.raw(`,"true_next":`)
			e.json(c.TrueNext)
			e.raw(`,"false_next":`)
			e.json(c.FalseNext)
			e.b = append(e.b, '}')
		})
		e.b = append(e.b, '}')
	})
	e.key("checksums", false)
	e.list(len(p.Checksums), func(i int) {
		c := &p.Checksums[i]
		e.nameID(c.Name, c.ID)
		e.raw(`,"target":`)
		e.json(c.Target)
		e.raw(`,"type":`)
		e.str(c.Type)
		e.raw(`,"calculation":`)
		e.str(c.Calculation)
		e.raw(`,"verify":`)
		e.b = strconv.AppendBool(e.b, c.Verify)
		e.raw(`,"update":`)
		e.b = strconv.AppendBool(e.b, c.Update)
		e.raw(`,"if_cond":`)
		e.value(c.IfCond)
		e.b = append(e.b, '}')
	})
	e.key("force_arith", false)
	e.json(p.ForceArith)
	e.key("extern_instances", false)
	e.json(p.ExternInstances)
	e.key("field_aliases", false)
	e.json(p.FieldAliases)
	if p.Program != "" {
		e.key("program", false)
		e.str(p.Program)
	}
	e.key("__meta__", false)
	e.json(p.Meta)
	e.raw("}\n")
}

func (e *encoder) fieldLists(fls []bmv2json.FieldList) {
	e.list(len(fls), func(i int) {
		fl := &fls[i]
		e.raw(`{"id":`)
		e.b = strconv.AppendInt(e.b, int64(fl.ID), 10)
		e.raw(`,"name":`)
		e.str(fl.Name)
		e.raw(`,"elements":`)
		e.values(fl.Elements)
		e.b = append(e.b, '}')
	})
}

func (e *encoder) parser(p *bmv2json.Parser) {
	e.nameID(p.Name, p.ID)
	e.raw(`,"init_state":`)
	e.str(p.InitState)
	e.raw(`,"parse_states":`)
	e.list(len(p.ParseStates), func(i int) {
		s := &p.ParseStates[i]
		e.nameID(s.Name, s.ID)
		e.raw(`,"parser_ops":`)
		e.primitives(s.ParserOps)
		e.raw(`,"transitions":`)
		e.json(s.Transitions)
		e.raw(`,"transition_key":`)
		e.values(s.TransitionKey)
		e.b = append(e.b, '}')
	})
	e.b = append(e.b, '}')
}
