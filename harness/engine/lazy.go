package engine

import (
	"math/bits"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// Lazy extraction: the parser marks a header valid and clean (clean.go)
// without reading its fields when nothing may read them before the
// deparser, which copies a clean header's bytes. A switch forwarding a
// fragment then never reads its 32 values. What may read or write a
// header's fields (a table's key, a condition, an action, a field list or
// digest) reads them out of the packet's bytes first (materialize).
//
// A header is extracted lazily (header.lazyBit) when it is a simple
// header that no parser operation, select key or checksum names apart
// from its own extraction, and is neither a stack element nor a union
// member: its fields are then read only in the controls and after them.
// Everything a control runs knows, as a mask of such headers, which it may
// name in any form (node.needs, tableDecl.needs, action.needs; a
// calculation names the headers of its inputs): pkt.lazy holds the headers
// extracted and not yet read, and each step reads those it needs first.
// A pending header is always clean: what may write it reads it first.

// planLazy picks the headers the parser extracts lazily (at most 64).
func (p *Program) planLazy(j *bmv2json.Program) {
	named := make([]bool, len(p.headers))
	mark := func(hi int) { named[hi] = true }
	for _, jp := range j.Parsers {
		for _, st := range jp.ParseStates {
			for _, op := range st.ParserOps {
				ps := op.Parameters
				if (op.Op == "extract" || op.Op == "extract_VL") && len(ps) > 0 {
					ps = ps[1:] // the target; a length may read fields
				}
				if p.walkHeaders(ps, true, mark) {
					return
				}
			}
			if p.walkHeaders(st.TransitionKey, true, mark) {
				return
			}
		}
	}
	for _, cj := range j.Checksums {
		vs := []*bmv2json.Value{cj.IfCond, bmv2json.Named("calculation", cj.Calculation)}
		if len(cj.Target) == 2 {
			vs = append(vs, bmv2json.Field(cj.Target[0], cj.Target[1]))
		}
		if p.walkHeaders(vs, true, mark) {
			return
		}
	}
	for hi := range p.headers {
		h := &p.headers[hi]
		if named[hi] || h.metadata || h.simple == nil || h.stack >= 0 || h.union >= 0 || len(p.lazyHeaders) == 64 {
			continue
		}
		h.lazyBit = 1 << len(p.lazyHeaders)
		p.lazyHeaders = append(p.lazyHeaders, hi)
	}
}

// lazyMask is the mask of the lazily extracted headers vs may name.
func (p *Program) lazyMask(vs ...*bmv2json.Value) uint64 {
	var m uint64
	if p.walkHeaders(vs, true, func(hi int) { m |= p.headers[hi].lazyBit }) {
		return ^uint64(0)
	}
	return m
}

// fieldMask is the lazy bit of field fi's header.
func (p *Program) fieldMask(fi int) uint64 { return p.headers[p.fields[fi].hdr].lazyBit }

// inputHeaders calls mark for each header whose fields c reads.
func (c *calculation) inputHeaders(p *Program, mark func(hi int)) {
	for _, in := range c.inputs {
		switch {
		case in.field >= 0:
			mark(p.fields[in.field].hdr)
		case in.header >= 0:
			mark(in.header)
		}
	}
}

// calcMask is the mask of the lazily extracted headers c reads.
func (p *Program) calcMask(c *calculation) uint64 {
	var m uint64
	c.inputHeaders(p, func(hi int) { m |= p.headers[hi].lazyBit })
	return m
}

// materialize reads the fields of the pending headers of mask m out of
// the packet's bytes.
func (k *pkt) materialize(m uint64) {
	m &= k.lazy
	k.lazy &^= m
	for ; m != 0; m &= m - 1 {
		hi := k.prog.lazyHeaders[bits.TrailingZeros64(m)]
		k.extractSimple(&k.prog.headers[hi], k.buf[k.src[hi]-1:])
	}
}
