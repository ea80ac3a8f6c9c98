package engine

import "github.com/grid-ina/grid/harness/bmv2json"

// A header the parser extracted and nothing has written since still holds
// the bytes it was parsed from, so the deparser copies those bytes instead
// of writing the header field by field: a switch that forwards a packet
// rewrites a few headers (Ethernet, IPv4) and passes the others, often the
// longer ones, as they came.
//
// pkt.src[h] is 1 + the offset in pkt.buf of header h's bytes while h is
// clean, 0 once anything may have written its fields or validity (or when
// it was never extracted). Whatever may write a header touches it: an
// action touches, whenever it runs, every header its primitives may write
// name in any form (a field, a header, every element of a stack or union
// named), which over-approximates what it writes; so do the parser's
// other ops, the checksum updates, a table's direct meter and
// the fields copied into a resubmitted, recirculated or cloned packet.
// k.buf is never written once a packet has been received.

// clean marks header hi as holding the bytes at offset off of k.buf.
func (k *pkt) clean(hi, off int) {
	if k.prog.headers[hi].varbit < 0 {
		k.src[hi] = int32(off) + 1
	}
}

// touch marks headers as possibly written.
func (k *pkt) touch(headers []int) {
	for _, hi := range headers {
		k.src[hi] = 0
	}
}

// mayWrite are the parameters of an action's primitive that may name what
// it writes: the destination of an assignment or a register read, none of
// a primitive that only reads, all of the others.
func mayWrite(pr *bmv2json.Primitive) []*bmv2json.Value {
	switch pr.Op {
	case "assign", "modify_field", "assign_VL", "register_read":
		return pr.Parameters[:min(len(pr.Parameters), 1)]
	case "register_write", "count", "log_msg", "assert", "assume":
		return nil
	}
	return pr.Parameters
}

// touchedHeaders are the headers (not metadata) that vs name, in any
// form; all headers if one of vs holds JSON the engine does not take
// apart.
func (p *Program) touchedHeaders(vs []*bmv2json.Value) []int {
	seen := make([]bool, len(p.headers))
	all := p.walkHeaders(vs, false, func(hi, _ int) { seen[hi] = true })
	var out []int
	for hi, h := range p.headers {
		if !h.metadata && (seen[hi] || all) {
			out = append(out, hi)
		}
	}
	return out
}

// walkHeaders calls mark for every header instance vs name in any form (a
// field, a header, every element of a stack or union named) and, with
// calcs, for the headers whose fields a named calculation reads; fi is
// the field named, or -1 when any of the header's fields may be meant. It
// returns true, having marked nothing for it, when one of vs holds what it
// does not take apart: then any header may be meant.
func (p *Program) walkHeaders(vs []*bmv2json.Value, calcs bool, mark func(hi, fi int)) (all bool) {
	markAll := func(headers []int) {
		for _, hi := range headers {
			mark(hi, -1)
		}
	}
	var walk func(v *bmv2json.Value)
	walk = func(v *bmv2json.Value) {
		if v == nil {
			return
		}
		switch v.Kind {
		case bmv2json.KindInner:
			walk(v.Inner)
		case bmv2json.KindOp:
			walk(v.Op.Left)
			walk(v.Op.Right)
			walk(v.Op.Cond)
		case bmv2json.KindPrim:
			for _, pv := range v.Prim.Parameters {
				walk(pv)
			}
		case bmv2json.KindRaw:
			all = true
		}
		name := v.Str
		if len(v.Names) > 0 {
			name = v.Names[0]
		}
		switch v.Type {
		case "field":
			if hi, ok := p.headerByName[name]; ok {
				fi := -1
				if len(v.Names) == 2 {
					if f, ok := p.fieldByName[name+"."+v.Names[1]]; ok {
						fi = f
					}
				}
				mark(hi, fi)
			}
		case "header", "regular":
			if hi, ok := p.headerByName[name]; ok {
				mark(hi, -1)
			}
		case "header_stack", "stack", "stack_field":
			if si, ok := p.stackByName[name]; ok {
				markAll(p.stacks[si].headers)
			}
		case "header_union":
			if ui, ok := p.unionByName[name]; ok {
				markAll(p.unions[ui].headers)
			}
		case "header_union_stack", "union_stack":
			if si, ok := p.unionStackByName[name]; ok {
				for _, ui := range p.unionStacks[si].unions {
					markAll(p.unions[ui].headers)
				}
			}
		case "calculation":
			if !calcs {
				break
			}
			if c, ok := p.calcs[name]; ok {
				c.inputHeaders(p, mark)
			} else {
				all = true
			}
		}
	}
	for _, v := range vs {
		walk(v)
	}
	return all
}
