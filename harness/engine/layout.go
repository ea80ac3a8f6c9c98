package engine

import (
	"fmt"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// maxSlots bounds the per-packet header state in 64-bit words.
const maxSlots = 1 << 20

// maxFieldBits bounds field widths (and varbit headers): wider fields
// exist in no real program and would only make a malformed file expensive.
const maxFieldBits = 1 << 16

// field is a resolved header field. Its value lives in pkt.f[slot:slot+words]
// as little-endian 64-bit words holding the field's bits (two's complement
// for signed fields, sign-extended only when read).
type field struct {
	name   string // "hdr.f"
	hdr    int    // header instance index
	slot   int
	width  int // bits; for varbit fields the maximum
	words  int
	signed bool
	varbit bool
	// isValid marks the pseudo-field "$valid$" of a header: reads give the
	// header's validity and writes are load errors.
	isValid bool
}

// header is a header or metadata instance.
type header struct {
	name     string
	typeName string
	metadata bool
	fields   []int // indices into Program.fields, in declaration order
	validFld int   // index of the "$valid$" pseudo-field
	fixedBit int   // bits of the non-varbit fields
	varbit   int   // index into fields of the varbit field, or -1
	maxBytes int   // max_length for varbit headers
	union    int   // header union it belongs to, or -1
	stack    int   // header stack it is an element of, or -1
	// simple lists, when every field is fixed-width and at most 64 bits,
	// each field's slot, bit offset in the header and width: extract and
	// deparse then walk it without looking fields up.
	simple []fieldPos
	// words, when set, says every field of a simple header is a whole
	// byte-aligned word of that many bytes (1, 2, 4 or 8), as in a header
	// of values: extract and deparse then move them in one loop.
	words int
	// chunks, for a simple header without words, is how the parser
	// reads it and the deparser writes it: 8 bytes (a chunk) at a time,
	// each taken apart into or put together from the fields (or parts of
	// fields) in it, in registers. chunkBytes is 8 times their number.
	chunks     []chunkPart
	chunkBytes int
	// loads, for a simple header without words whose every field lies
	// within the 8 bytes from its first byte, is how the parser reads
	// it: each field from one 8-byte load at its first byte, taken apart
	// by two shifts (fieldLoad), which costs fewer instructions than a
	// chunk's parts. loadBytes is what those loads read: the header's
	// bytes and up to 7 after them; a packet that ends sooner is read
	// by chunks.
	loads     []fieldLoad
	loadBytes int
	// lazyBit is the header's bit in pkt.lazy when the parser extracts
	// it lazily (lazy.go), else 0.
	lazyBit uint64
}

// chunkPart is a field's part of an 8-byte chunk of its header: the field,
// masked to its width, shifted left by shl and then right by shr (one of
// them 0), is its bits in the chunk as a big-endian number, and the chunk
// shifted left by shr and then right by shl, masked, the field's bits in
// it. partFirst and partLast begin and end the chunk; partCont marks the
// second part of a field that began in the chunk before. It is one word
// (see newChunkPart), which the loops over a header's parts take apart in
// registers.
type chunkPart uint64

const (
	partFirst chunkPart = 1 << 18
	partLast  chunkPart = 1 << 19
	partCont  chunkPart = 1 << 20
)

// newChunkPart packs a part: shl in bits 0-5, shr in 6-11, 64 - width in
// 12-17, the flags, and the slot in the top 32 bits.
func newChunkPart(slot, width int, shl, shr uint) chunkPart {
	return chunkPart(slot)<<32 | chunkPart(64-width)<<12 | chunkPart(shr)<<6 | chunkPart(shl)
}

func (p chunkPart) slot() uint32         { return uint32(p >> 32) }
func (p chunkPart) shl() uint            { return uint(p) & 63 }
func (p chunkPart) shr() uint            { return uint(p>>6) & 63 }
func (p chunkPart) mask() uint64         { return ^uint64(0) >> (uint(p>>12) & 63) }
func (p chunkPart) has(f chunkPart) bool { return p&f != 0 }

// headerChunks cuts a simple header's fields into the 8-byte chunks of the
// header they lie in.
func headerChunks(simple []fieldPos) []chunkPart {
	var parts []chunkPart
	end := 0
	for _, fp := range simple {
		end = fp.off + fp.width
	}
	for c := 0; 64*c < end; c++ {
		lo, hi := 64*c, 64*c+64
		for _, fp := range simple {
			if fp.off >= hi || fp.off+fp.width <= lo || fp.width == 0 {
				continue
			}
			// The field's last bit lands at the chunk's bit 64(c+1) -
			// (off+width), counted from the least significant end.
			var part chunkPart
			if s := hi - (fp.off + fp.width); s >= 0 {
				part = newChunkPart(fp.slot, fp.width, uint(s), 0)
			} else {
				part = newChunkPart(fp.slot, fp.width, 0, uint(-s))
			}
			if len(parts) == 0 || parts[len(parts)-1].has(partLast) {
				part |= partFirst
			}
			if fp.off < lo {
				part |= partCont
			}
			parts = append(parts, part)
		}
		if len(parts) > 0 {
			parts[len(parts)-1] |= partLast
		}
	}
	return parts
}

// fieldLoad reads a field of a simple header (header.loads): the 8 bytes
// from the field's first byte, as a big-endian number, shifted left by the
// field's bit offset in that byte and then right by 64 - its width. It is
// one word: the slot in the top 32 bits, the byte offset in bits 16-31,
// the left shift in bits 8-10 and the right shift in bits 0-5.
type fieldLoad uint64

func (l fieldLoad) slot() uint32 { return uint32(l >> 32) }
func (l fieldLoad) off() int     { return int(l>>16) & 0xffff }
func (l fieldLoad) shl() uint    { return uint(l>>8) & 7 }
func (l fieldLoad) shr() uint    { return uint(l) & 63 }

// fieldLoads plans a simple header's reads by fieldLoad, and returns the
// bytes they read; none when a field does not lie within the 8 bytes from
// its first byte or lies too far into the header for a fieldLoad.
func fieldLoads(simple []fieldPos) ([]fieldLoad, int) {
	loads := make([]fieldLoad, 0, len(simple))
	n := 0
	for _, fp := range simple {
		off, shl := fp.off/8, fp.off%8
		if shl+fp.width > 64 || off > 0xffff {
			return nil, 0
		}
		loads = append(loads, fieldLoad(fp.slot)<<32|fieldLoad(off)<<16|fieldLoad(shl)<<8|fieldLoad(64-fp.width))
		n = max(n, off+8)
	}
	return loads, n
}

type fieldPos struct {
	slot, off, width int
	// bytes is the field's width in bytes when it is a byte-aligned
	// word of 1, 2, 4 or 8 bytes (read and written directly); 0 otherwise.
	bytes int
}

// wordBytes is the width in bytes of a byte-aligned field of width bits
// at bit offset off that is a whole 1, 2, 4 or 8-byte word, else 0.
func wordBytes(off, width int) int {
	switch {
	case off%8 != 0:
		return 0
	case width == 8, width == 16, width == 32, width == 64:
		return width / 8
	}
	return 0
}

type stack struct {
	name    string
	headers []int
}

type union struct {
	name    string
	headers []int
	members []string // member names, in the order of headers
}

type unionStack struct {
	name   string
	unions []int
}

// layout resolves the program's headers, stacks and unions to slots.
func (p *Program) buildLayout(j *bmv2json.Program) error {
	types := map[string]*bmv2json.HeaderType{}
	for i := range j.HeaderTypes {
		types[j.HeaderTypes[i].Name] = &j.HeaderTypes[i]
	}
	p.headerByName = map[string]int{}
	p.fieldByName = map[string]int{}
	slot := 0
	for _, h := range j.Headers {
		ht, ok := types[h.HeaderType]
		if !ok {
			return fmt.Errorf("header %q: unknown header type %q", h.Name, h.HeaderType)
		}
		if _, dup := p.headerByName[h.Name]; dup {
			return fmt.Errorf("header %q declared twice", h.Name)
		}
		hi := len(p.headers)
		hd := header{name: h.Name, typeName: h.HeaderType, metadata: h.Metadata, varbit: -1, union: -1, stack: -1}
		if ht.MaxLength != nil {
			hd.maxBytes = *ht.MaxLength
			if hd.maxBytes <= 0 || hd.maxBytes > maxFieldBits/8 {
				return fmt.Errorf("header type %q: max_length %d outside 1..%d", ht.Name, hd.maxBytes, maxFieldBits/8)
			}
		}
		for _, f := range ht.Fields {
			w := f.Bitwidth
			if f.Varbit {
				if hd.varbit >= 0 {
					return fmt.Errorf("header type %q: more than one varbit field", ht.Name)
				}
				if ht.MaxLength == nil {
					return fmt.Errorf("header type %q: varbit field %q without max_length", ht.Name, f.Name)
				}
				hd.varbit = len(hd.fields)
				w = 0 // set below, once the fixed part is known
			} else if w <= 0 || w > maxFieldBits {
				return fmt.Errorf("header type %q: field %q has bitwidth %d (supported: 1..%d)", ht.Name, f.Name, w, maxFieldBits)
			} else {
				hd.fixedBit += w
			}
			fi := len(p.fields)
			p.fields = append(p.fields, field{name: h.Name + "." + f.Name, hdr: hi, width: w, signed: f.Signed, varbit: f.Varbit})
			hd.fields = append(hd.fields, fi)
			p.fieldByName[h.Name+"."+f.Name] = fi
		}
		if hd.varbit >= 0 {
			maxBits := hd.maxBytes*8 - hd.fixedBit
			if maxBits <= 0 {
				return fmt.Errorf("header type %q: max_length %d leaves no room for the varbit field", ht.Name, hd.maxBytes)
			}
			p.fields[hd.fields[hd.varbit]].width = maxBits
		}
		if !h.Metadata && hd.fixedBit%8 != 0 && hd.varbit < 0 {
			return fmt.Errorf("header %q: %d bits is not a whole number of bytes", h.Name, hd.fixedBit)
		}
		hd.validFld = len(p.fields)
		p.fields = append(p.fields, field{name: h.Name + ".$valid$", hdr: hi, width: 1, isValid: true})
		p.fieldByName[h.Name+".$valid$"] = hd.validFld
		for _, fi := range hd.fields {
			f := &p.fields[fi]
			f.slot = slot
			f.words = (f.width + 63) / 64
			slot += f.words
		}
		if hd.varbit < 0 {
			off := 0
			for _, fi := range hd.fields {
				f := &p.fields[fi]
				if f.words != 1 {
					hd.simple = nil
					break
				}
				hd.simple = append(hd.simple, fieldPos{slot: f.slot, off: off, width: f.width, bytes: wordBytes(off, f.width)})
				off += f.width
			}
			if len(hd.simple) > 0 {
				hd.words = hd.simple[0].bytes
				for _, fp := range hd.simple {
					if fp.bytes != hd.words {
						hd.words = 0
					}
				}
				if hd.words == 0 {
					hd.chunks = headerChunks(hd.simple)
					hd.chunkBytes = (hd.fixedBit + 63) / 64 * 8
					hd.loads, hd.loadBytes = fieldLoads(hd.simple)
				}
			}
		}
		if slot > maxSlots {
			return fmt.Errorf("header %q: the headers exceed %d words of state per packet", h.Name, maxSlots)
		}
		p.headerByName[h.Name] = hi
		p.headers = append(p.headers, hd)
	}
	p.slots = slot

	p.stackByName = map[string]int{}
	for _, s := range j.HeaderStacks {
		st := stack{name: s.Name}
		for _, id := range s.HeaderIDs {
			hi, err := p.headerByID(j, id)
			if err != nil {
				return fmt.Errorf("header stack %q: %w", s.Name, err)
			}
			p.headers[hi].stack = len(p.stacks)
			st.headers = append(st.headers, hi)
		}
		if len(st.headers) == 0 {
			return fmt.Errorf("header stack %q has no elements", s.Name)
		}
		p.stackByName[s.Name] = len(p.stacks)
		p.stacks = append(p.stacks, st)
	}
	unionTypes := map[string]*bmv2json.HeaderUnionType{}
	for i := range j.HeaderUnionTypes {
		unionTypes[j.HeaderUnionTypes[i].Name] = &j.HeaderUnionTypes[i]
	}
	p.unionByName = map[string]int{}
	for _, u := range j.HeaderUnions {
		un := union{name: u.Name}
		ut, ok := unionTypes[u.UnionType]
		if !ok || len(ut.Headers) != len(u.HeaderIDs) {
			return fmt.Errorf("header union %q: union type %q missing or of another size", u.Name, u.UnionType)
		}
		for _, m := range ut.Headers {
			if len(m) != 2 {
				return fmt.Errorf("header union type %q: member %v is not [name, type]", ut.Name, m)
			}
			un.members = append(un.members, m[0])
		}
		for _, id := range u.HeaderIDs {
			hi, err := p.headerByID(j, id)
			if err != nil {
				return fmt.Errorf("header union %q: %w", u.Name, err)
			}
			p.headers[hi].union = len(p.unions)
			un.headers = append(un.headers, hi)
		}
		p.unionByName[u.Name] = len(p.unions)
		p.unions = append(p.unions, un)
	}
	p.unionStackByName = map[string]int{}
	for _, s := range j.HeaderUnionStacks {
		us := unionStack{name: s.Name}
		for _, id := range s.HeaderUnionIDs {
			ui := -1
			for k, u := range j.HeaderUnions {
				if u.ID == id {
					ui = k
				}
			}
			if ui < 0 {
				return fmt.Errorf("header union stack %q: no header union with id %d", s.Name, id)
			}
			us.unions = append(us.unions, ui)
		}
		p.unionStackByName[s.Name] = len(p.unionStacks)
		p.unionStacks = append(p.unionStacks, us)
	}
	return nil
}

func (p *Program) headerByID(j *bmv2json.Program, id int) (int, error) {
	for _, h := range j.Headers {
		if h.ID == id {
			return p.headerByName[h.Name], nil
		}
	}
	return 0, fmt.Errorf("no header with id %d", id)
}

// lookupField resolves [header, field] to a field index.
func (p *Program) lookupField(hdr, name string) (int, error) {
	if fi, ok := p.fieldByName[hdr+"."+name]; ok {
		return fi, nil
	}
	if _, ok := p.headerByName[hdr]; !ok {
		return 0, fmt.Errorf("unknown header %q", hdr)
	}
	return 0, fmt.Errorf("header %q has no field %q", hdr, name)
}

// stdFields are the standard_metadata fields the switch itself reads and
// writes; -1 where the program does not declare one.
type stdFields struct {
	ingressPort, egressSpec, egressPort, instanceType, packetLength int
	mcastGrp, egressRid, checksumError, parserError, priority       int
	ingressTS, egressTS, enqTS                                      int
	enqQdepth, deqQdepth, deqTimedelta, qid                         int
}

func (p *Program) resolveStdFields(j *bmv2json.Program) error {
	aliases := map[string][]string{}
	for _, a := range j.FieldAliases {
		aliases[a.Alias] = a.Target
	}
	find := func(name string) int {
		if t, ok := aliases["intrinsic_metadata."+name]; ok && len(t) == 2 {
			if fi, err := p.lookupField(t[0], t[1]); err == nil {
				return fi
			}
		}
		if fi, err := p.lookupField("standard_metadata", name); err == nil {
			return fi
		}
		return -1
	}
	s := &p.std
	s.ingressPort = find("ingress_port")
	s.egressSpec = find("egress_spec")
	s.egressPort = find("egress_port")
	s.instanceType = find("instance_type")
	s.packetLength = find("packet_length")
	s.mcastGrp = find("mcast_grp")
	s.egressRid = find("egress_rid")
	s.checksumError = find("checksum_error")
	s.parserError = find("parser_error")
	s.priority = find("priority")
	s.ingressTS = find("ingress_global_timestamp")
	s.egressTS = find("egress_global_timestamp")
	s.enqTS = find("enq_timestamp")
	s.enqQdepth = find("enq_qdepth")
	s.deqQdepth = find("deq_qdepth")
	s.deqTimedelta = find("deq_timedelta")
	s.qid = find("qid")
	for alias, fi := range map[string]*int{"enq_timestamp": &s.enqTS, "enq_qdepth": &s.enqQdepth,
		"deq_qdepth": &s.deqQdepth, "deq_timedelta": &s.deqTimedelta, "qid": &s.qid} {
		if t, ok := aliases["queueing_metadata."+alias]; ok && len(t) == 2 {
			if f, err := p.lookupField(t[0], t[1]); err == nil {
				*fi = f
			}
		}
	}
	for name, fi := range map[string]int{"ingress_port": s.ingressPort, "egress_spec": s.egressSpec,
		"egress_port": s.egressPort, "instance_type": s.instanceType, "packet_length": s.packetLength} {
		if fi < 0 {
			return fmt.Errorf("standard_metadata.%s is missing: simple_switch requires it", name)
		}
	}
	if hi, ok := p.headerByName["standard_metadata"]; ok {
		p.stdHeader = hi
	} else {
		p.stdHeader = -1
	}
	return nil
}
