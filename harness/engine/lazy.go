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
//
// ingress_global_timestamp is read from the clock the same way (tsBit),
// when the program reads it only in its controls: a packet that never
// reaches such a read (a switch forwarding a fragment it does not
// aggregate) costs no clock read. Its value is the time of its first
// read in the packet's ingress, or of the end of its ingress when only
// egress reads it (settleTS).

// tsBit is pkt.lazy's bit for ingress_global_timestamp.
const tsBit = 1 << 63

// planLazy picks the headers the parser extracts lazily (at most 63) and
// whether the ingress timestamp is read lazily.
func (p *Program) planLazy(j *bmv2json.Program) {
	named := make([]bool, len(p.headers))
	tsNamed := false
	mark := func(hi, fi int) {
		named[hi] = true
		tsNamed = tsNamed || p.namesTS(hi, fi)
	}
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
	p.lazyTS = !tsNamed && p.std.ingressTS >= 0
	for hi := range p.headers {
		h := &p.headers[hi]
		if named[hi] || h.metadata || h.simple == nil || h.stack >= 0 || h.union >= 0 || len(p.lazyHeaders) == 63 {
			continue
		}
		h.lazyBit = 1 << len(p.lazyHeaders)
		p.lazyHeaders = append(p.lazyHeaders, hi)
	}
}

// namesTS says whether field fi of header hi (any of its fields when fi
// is -1) may be ingress_global_timestamp.
func (p *Program) namesTS(hi, fi int) bool {
	return hi == p.stdHeader && (fi < 0 || fi == p.std.ingressTS)
}

// lazyMask is the mask of pkt.lazy's bits vs may name.
func (p *Program) lazyMask(vs ...*bmv2json.Value) uint64 {
	var m uint64
	if p.walkHeaders(vs, true, func(hi, fi int) { m |= p.fieldsMask(hi, fi) }) {
		return ^uint64(0)
	}
	return m
}

// fieldsMask is pkt.lazy's bit of field fi of header hi (any of its
// fields when fi is -1).
func (p *Program) fieldsMask(hi, fi int) uint64 {
	m := p.headers[hi].lazyBit
	if p.namesTS(hi, fi) {
		m |= tsBit
	}
	return m
}

// fieldMask is pkt.lazy's bit of field fi.
func (p *Program) fieldMask(fi int) uint64 { return p.fieldsMask(p.fields[fi].hdr, fi) }

// inputHeaders calls mark for each header (and field, or -1 for all of
// them) c reads.
func (c *calculation) inputHeaders(p *Program, mark func(hi, fi int)) {
	for _, in := range c.inputs {
		switch {
		case in.field >= 0:
			mark(p.fields[in.field].hdr, in.field)
		case in.header >= 0:
			mark(in.header, -1)
		}
	}
}

// calcMask is the mask of pkt.lazy's bits c reads.
func (p *Program) calcMask(c *calculation) uint64 {
	var m uint64
	c.inputHeaders(p, func(hi, fi int) { m |= p.fieldsMask(hi, fi) })
	return m
}

// settleTS reads the pending ingress timestamp when the egress pipeline
// may read it, as the packet leaves ingress: then it is never later than
// the enqueue and egress timestamps, and a packet's replicas share it.
func (k *pkt) settleTS() {
	if k.prog.egressNeeds&tsBit != 0 {
		k.materialize(tsBit)
	}
}

// materialize reads the fields of the pending headers of mask m out of
// the packet's bytes, and the clock if the timestamp is pending.
func (k *pkt) materialize(m uint64) {
	m &= k.lazy
	k.lazy &^= m
	if m&tsBit != 0 {
		k.setU(k.prog.std.ingressTS, k.sw.micros())
		m &^= tsBit
	}
	for ; m != 0; m &= m - 1 {
		hi := k.prog.lazyHeaders[bits.TrailingZeros64(m)]
		k.extractSimple(&k.prog.headers[hi], k.buf[k.src[hi]-1:])
	}
}
