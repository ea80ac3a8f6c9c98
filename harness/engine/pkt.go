package engine

import (
	"encoding/binary"
	"math/big"
	"unsafe"
)

// pkt is the state of one packet instance: its header vector (PHV), its
// bytes and the per-packet flags of simple_switch. It is reused from packet
// to packet, so processing allocates nothing once buffers have grown.
type pkt struct {
	prog  *Program
	sw    *Switch
	f     []uint64 // field words, see field.slot
	valid []bool   // per header instance
	src   []int32  // per header: where its bytes are in buf while it is clean (clean.go)
	vlen  []int32  // per header: current bit length of its varbit field
	next  []int32  // per header stack: next index (count of valid elements)
	unext []int32  // per header union stack

	buf      []byte // packet bytes; buf[off:] is the payload not yet parsed
	off      int
	inLen    int // length as received (bmv2 "ingress length")
	lenReg   int // packet length register: grows and shrinks with add/remove_header
	truncLen int // truncate(): output length limit, 0 for none

	lazy        uint64 // headers extracted lazily and not yet read (lazy.go)
	exit        bool
	perr        int32 // parser error code raised by the last parse
	cksumErr    bool
	resubmit    int32 // field list id, 0 for none
	recirculate int32
	cloneSess   int32 // mirror session id + 1 (0 for none)
	cloneList   int32
	learnID     int32 // learn list of a requested digest, 0 for none

	args  []uint64 // action data of the running action (words per parameter)
	pc    int      // next primitive of the running action, for jumps
	steps int      // primitives the running action has executed, bounded by maxActionSteps
	// argBuf holds the data of a table hit taken from its index slot
	// (shortSlot), which may change once the packet lets go of the table.
	argBuf [3]uint64

	big  []big.Int // scratch for wide expressions, one per expression node
	tmpA big.Int   // scratch for field conversions
	tmpB big.Int   // scratch for register and hash values
	// failed is set by a failing assert/assume or a loop that does not end:
	// bmv2 aborts or hangs, the engine drops the packet and traces the reason.
	failed string
	key    []byte // table key being built
	key2   []byte // masked select key, for parser value sets with a mask
	hbuf   []byte // calculation input
	out    []byte // deparsed output

	instance InstanceType
	tr       *tracer // nil when tracing is off
	trv      tracer
}

func newPkt(p *Program, sw *Switch) *pkt {
	return &pkt{
		prog:  p,
		sw:    sw,
		f:     make([]uint64, p.slots),
		valid: make([]bool, len(p.headers)),
		src:   make([]int32, len(p.headers)),
		vlen:  make([]int32, len(p.headers)),
		next:  make([]int32, len(p.stacks)),
		unext: make([]int32, len(p.unionStacks)),
		big:   make([]big.Int, p.bigScratch),
		key:   make([]byte, p.maxKeyBytes),
		key2:  make([]byte, p.maxKeyBytes),
	}
}

// reset clears the whole PHV, as for a freshly received packet.
func (k *pkt) reset() {
	clear(k.f)
	clear(k.valid)
	clear(k.src)
	clear(k.vlen)
	clear(k.next)
	clear(k.unext)
	k.exit, k.perr, k.cksumErr = false, 0, false
	k.lazy = 0
	k.resubmit, k.recirculate, k.cloneSess, k.cloneList = 0, 0, 0, 0
	k.learnID = 0
	k.truncLen = 0
	k.off = 0
	k.failed = ""
}

// resetMetadata zeroes every metadata header's fields (bmv2 reset_metadata),
// the ingress timestamp not yet read too.
func (k *pkt) resetMetadata() {
	k.lazy &^= tsBit
	for _, hi := range k.prog.metaHeaders {
		for _, fi := range k.prog.headers[hi].fields {
			f := &k.prog.fields[fi]
			clear(k.f[f.slot : f.slot+f.words])
		}
	}
}

// copyFrom copies the PHV, bytes and flags of o.
func (k *pkt) copyFrom(o *pkt) {
	o.settleTS()
	copy(k.f, o.f)
	copy(k.valid, o.valid)
	copy(k.src, o.src)
	copy(k.vlen, o.vlen)
	copy(k.next, o.next)
	copy(k.unext, o.unext)
	k.buf = append(k.buf[:0], o.buf...)
	k.off, k.inLen, k.lenReg, k.truncLen = o.off, o.inLen, o.lenReg, o.truncLen
	k.lazy = o.lazy
	k.exit, k.perr, k.cksumErr = false, o.perr, o.cksumErr
	k.resubmit, k.recirculate, k.cloneSess, k.cloneList = 0, 0, 0, 0
}

// copyFields copies the listed fields from o (field-list preservation).
func (k *pkt) copyFields(o *pkt, list []int) {
	k.materialize(^uint64(0))
	o.materialize(^uint64(0))
	for _, fi := range list {
		f := &k.prog.fields[fi]
		copy(k.f[f.slot:f.slot+f.words], o.f[f.slot:f.slot+f.words])
		k.src[f.hdr] = 0
	}
}

// getU returns a field of at most 64 bits, zero-extended.
func (k *pkt) getU(fi int) uint64 {
	f := &k.prog.fields[fi]
	if f.isValid {
		if k.valid[f.hdr] {
			return 1
		}
		return 0
	}
	return k.f[f.slot]
}

// setU stores v truncated to the field's width (fields of at most 64 bits).
func (k *pkt) setU(fi int, v uint64) {
	f := &k.prog.fields[fi]
	k.f[f.slot] = v & mask64(f.width)
}

// getS returns a field of at most 63 bits as a signed value (sign-extended
// for signed fields).
func (k *pkt) getS(f *field) int64 {
	if f.isValid {
		if k.valid[f.hdr] {
			return 1
		}
		return 0
	}
	v := k.f[f.slot]
	if f.signed {
		sh := 64 - uint(f.width)
		return int64(v<<sh) >> sh
	}
	return int64(v)
}

// getBig loads a field of any width into z.
func (k *pkt) getBig(f *field, z *big.Int) *big.Int {
	if f.isValid || f.words == 1 {
		if f.signed || f.isValid {
			return z.SetInt64(k.getS(f))
		}
		return z.SetUint64(k.f[f.slot])
	}
	z.SetUint64(k.f[f.slot+f.words-1])
	for i := f.words - 2; i >= 0; i-- {
		z.Lsh(z, 64)
		z.Or(z, k.tmpA.SetUint64(k.f[f.slot+i]))
	}
	if f.signed && z.Bit(f.width-1) == 1 {
		z.Sub(z, k.prog.pow2(f.width))
	}
	return z
}

// setBig stores z into a field, wrapping it to the field's width.
func (k *pkt) setBig(f *field, z *big.Int) {
	if f.words == 1 {
		k.f[f.slot] = truncBig(z) & mask64(f.width)
		return
	}
	t := k.tmpA.And(z, k.prog.mask(f.width))
	ws := t.Bits()
	for i := 0; i < f.words; i++ {
		var w uint64
		if i < len(ws) {
			w = uint64(ws[i])
		}
		k.f[f.slot+i] = w
	}
}

// truncBig returns the low 64 bits of z in two's complement.
func truncBig(z *big.Int) uint64 {
	ws := z.Bits()
	var lo uint64
	if len(ws) > 0 {
		lo = uint64(ws[0])
	}
	if z.Sign() < 0 {
		return -lo
	}
	return lo
}

func mask64(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(w) - 1
}

// getBits reads n (<= 64) bits starting at bit offset start (MSB first).
func getBits(d []byte, start, n int) uint64 {
	if start&7 == 0 {
		i := start >> 3
		switch n {
		case 8:
			return uint64(d[i])
		case 16:
			return uint64(binary.BigEndian.Uint16(d[i:]))
		case 32:
			return uint64(binary.BigEndian.Uint32(d[i:]))
		case 64:
			return binary.BigEndian.Uint64(d[i:])
		}
	}
	if n == 0 {
		return 0
	}
	first, sh := start>>3, uint(start&7)
	if first+8 <= len(d) && int(sh)+n <= 64 {
		return binary.BigEndian.Uint64(d[first:]) << sh >> (64 - uint(n))
	}
	last := (start + n - 1) >> 3
	var hi, lo uint64
	for i := first; i <= last; i++ {
		hi = hi<<8 | lo>>56
		lo = lo<<8 | uint64(d[i])
	}
	drop := uint((last+1)*8 - (start + n))
	if drop > 0 {
		lo = lo>>drop | hi<<(64-drop)
	}
	return lo & mask64(n)
}

// putBits writes the low n (<= 64) bits of v at bit offset start.
func putBits(d []byte, start, n int, v uint64) {
	if start&7 == 0 {
		i := start >> 3
		switch n {
		case 8:
			d[i] = byte(v)
			return
		case 16:
			binary.BigEndian.PutUint16(d[i:], uint16(v))
			return
		case 32:
			binary.BigEndian.PutUint32(d[i:], uint32(v))
			return
		case 64:
			binary.BigEndian.PutUint64(d[i:], v)
			return
		}
	}
	if n == 0 {
		return
	}
	first, sh := start>>3, uint(start&7)
	if first+8 <= len(d) && int(sh)+n <= 64 {
		shift := 64 - sh - uint(n)
		m := mask64(n) << shift
		w := binary.BigEndian.Uint64(d[first:])
		binary.BigEndian.PutUint64(d[first:], w&^m|(v<<shift)&m)
		return
	}
	for n > 0 {
		byteIdx := (start + n - 1) >> 3
		bitInByte := 7 - uint((start+n-1)&7) // position of the last bit, from the LSB
		take := 8 - int(bitInByte)
		if take > n {
			take = n
		}
		m := byte(mask64(take)) << bitInByte
		d[byteIdx] = d[byteIdx]&^m | byte(v<<bitInByte)&m
		v >>= uint(take)
		n -= take
	}
}

// extractSimple reads the fields of a simple header (header.simple) from
// data, the header's bytes.
func (k *pkt) extractSimple(h *header, data []byte) {
	if h.words != 0 {
		// A header of equal words: its fields' slots follow each other.
		n := len(h.simple)
		dst := k.f[h.simple[0].slot:][:n]
		switch src := data[:n*h.words]; h.words {
		case 1:
			for i := range dst {
				dst[i] = uint64(src[i])
			}
		case 2:
			for i := range dst {
				dst[i] = uint64(binary.BigEndian.Uint16(src[2*i:]))
			}
		case 4:
			for i := range dst {
				dst[i] = uint64(binary.BigEndian.Uint32(src[4*i:]))
			}
		case 8:
			for i := range dst {
				dst[i] = binary.BigEndian.Uint64(src[8*i:])
			}
		}
		return
	}
	if h.loads != nil && len(data) >= h.loadBytes {
		// Every load lies within data (loadBytes) and every slot within
		// k.f (a program's slots): checked here and when the program was
		// laid out, not once per field.
		src, dst := unsafe.Pointer(unsafe.SliceData(data)), unsafe.Pointer(unsafe.SliceData(k.f))
		for _, l := range h.loads {
			w := binary.BigEndian.Uint64((*[8]byte)(unsafe.Add(src, l.off()))[:])
			*(*uint64)(unsafe.Add(dst, uintptr(l.slot())*8)) = w << l.shl() >> l.shr()
		}
		return
	}
	if len(data) < h.chunkBytes {
		// The packet ends within the header's last chunk.
		for _, fp := range h.simple {
			k.f[fp.slot] = getBits(data, fp.off, fp.width)
		}
		return
	}
	f, chunks := k.f, h.chunks
	var w uint64
	o := 0
	for _, cp := range chunks {
		if cp.has(partFirst) {
			w = binary.BigEndian.Uint64(data[o:])
			o += 8
		}
		v := w << cp.shr() >> cp.shl() & cp.mask()
		if cp.has(partCont) {
			f[cp.slot()] |= v
		} else {
			f[cp.slot()] = v
		}
	}
}

// emitSimple writes the fields of a simple header into out, the header's
// bytes with 8 bytes of slack after them (overwritten).
func (k *pkt) emitSimple(h *header, out []byte) {
	if h.words != 0 {
		n := len(h.simple)
		src := k.f[h.simple[0].slot:][:n]
		switch dst := out[:n*h.words]; h.words {
		case 1:
			for i, v := range src {
				dst[i] = byte(v)
			}
		case 2:
			for i, v := range src {
				binary.BigEndian.PutUint16(dst[2*i:], uint16(v))
			}
		case 4:
			for i, v := range src {
				binary.BigEndian.PutUint32(dst[4*i:], uint32(v))
			}
		case 8:
			for i, v := range src {
				binary.BigEndian.PutUint64(dst[8*i:], v)
			}
		}
		return
	}
	// One store per chunk: stores of overlapping words, field by field,
	// would each wait for the one before. The chunks lie within out (its
	// slack) and every slot within k.f (a program's slots): checked here
	// and when the program was laid out, not once per part.
	_ = out[h.chunkBytes-1]
	src, dst := unsafe.Pointer(unsafe.SliceData(k.f)), unsafe.Pointer(unsafe.SliceData(out))
	var acc uint64
	for _, cp := range h.chunks {
		acc |= (*(*uint64)(unsafe.Add(src, uintptr(cp.slot())*8)) & cp.mask()) << cp.shl() >> cp.shr()
		if cp.has(partLast) {
			binary.BigEndian.PutUint64((*[8]byte)(dst)[:], acc)
			acc, dst = 0, unsafe.Add(dst, 8)
		}
	}
}

// extractField reads a field of width w at bit offset start into its slots.
func (k *pkt) extractField(f *field, d []byte, start, w int) {
	if f.words == 1 {
		v := getBits(d, start, w)
		k.f[f.slot] = v
		return
	}
	clear(k.f[f.slot : f.slot+f.words])
	for i := 0; w > 0; i++ {
		n := min(w, 64)
		k.f[f.slot+i] = getBits(d, start+w-n, n)
		w -= n
	}
}

// emitField writes the low w bits of a field at bit offset start.
func (k *pkt) emitField(f *field, d []byte, start, w int) {
	if f.words == 1 {
		putBits(d, start, w, k.f[f.slot])
		return
	}
	for i := 0; w > 0; i++ {
		n := min(w, 64)
		putBits(d, start+w-n, n, k.f[f.slot+i])
		w -= n
	}
}

// fieldBytes writes a field's value big-endian into dst (len ceil(width/8)).
func (k *pkt) fieldBytes(f *field, dst []byte) {
	if f.isValid {
		dst[0] = 0
		if k.valid[f.hdr] {
			dst[0] = 1
		}
		return
	}
	n := len(dst)
	for i := 0; i < f.words; i++ {
		w := k.f[f.slot+i]
		for b := 0; b < 8; b++ {
			pos := n - 1 - (i*8 + b)
			if pos < 0 {
				break
			}
			dst[pos] = byte(w >> (8 * uint(b)))
		}
	}
}

// setValid marks a header valid; in a header union the others become invalid.
func (k *pkt) setValid(hi int) {
	k.valid[hi] = true
	if u := k.prog.headers[hi].union; u >= 0 {
		for _, o := range k.prog.unions[u].headers {
			if o != hi {
				k.valid[o] = false
			}
		}
	}
}

// headerBits is the current length of a header in bits.
func (k *pkt) headerBits(hi int) int {
	h := &k.prog.headers[hi]
	if h.varbit >= 0 {
		return h.fixedBit + int(k.vlen[hi])
	}
	return h.fixedBit
}

// copyHeader copies src's fields and validity into dst (same type).
func (k *pkt) copyHeader(dst, src int) {
	if !k.valid[src] {
		k.valid[dst] = false
		return
	}
	k.setValid(dst)
	d, s := &k.prog.headers[dst], &k.prog.headers[src]
	for i, fi := range s.fields {
		sf, df := &k.prog.fields[fi], &k.prog.fields[d.fields[i]]
		copy(k.f[df.slot:df.slot+df.words], k.f[sf.slot:sf.slot+sf.words])
	}
	k.vlen[dst] = k.vlen[src]
}

// swapHeaders swaps two headers' values and validity (header stack shifts).
func (k *pkt) swapHeaders(a, b int) {
	ha, hb := &k.prog.headers[a], &k.prog.headers[b]
	for i, fi := range ha.fields {
		fa, fb := &k.prog.fields[fi], &k.prog.fields[hb.fields[i]]
		for w := 0; w < fa.words; w++ {
			k.f[fa.slot+w], k.f[fb.slot+w] = k.f[fb.slot+w], k.f[fa.slot+w]
		}
	}
	k.valid[a], k.valid[b] = k.valid[b], k.valid[a]
	k.vlen[a], k.vlen[b] = k.vlen[b], k.vlen[a]
}

// zeroHeader clears a header's fields.
func (k *pkt) zeroHeader(hi int) {
	for _, fi := range k.prog.headers[hi].fields {
		f := &k.prog.fields[fi]
		clear(k.f[f.slot : f.slot+f.words])
	}
	k.vlen[hi] = 0
}
