package engine

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"unsafe"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// calculation is a compiled hash or checksum: its inputs are packed bit by
// bit (as bmv2's BufBuilder does) into pkt.hbuf and the algorithm runs over
// the bytes.
type calculation struct {
	name   string
	inputs []calcInput
	algo   func([]byte) uint64
	// static is set when every input is a fixed-width field or constant:
	// then, with all of staticHdrs valid, each input sits at a fixed bit
	// offset (calcInput.at) of a totalBits-long buffer.
	static     bool
	staticHdrs []int
	totalBits  int
	// csum is set for a static csum16 over fields and constants of at most
	// 64 bits each: then the checksum is summed from the fields directly,
	// without packing them (see csumTerm); csumConst is what its
	// constants add.
	csum      []csumTerm
	csumConst uint64
}

// csumTerm is one input of a static Internet checksum. Read as a number,
// the zero-padded packed buffer is the sum of each input's value times 2^e
// (e the input's distance in bits from the buffer's end), and its one's
// complement sum of 16-bit words is that number modulo 2^16-1, where
// 2^e = 2^(e mod 16): so each input adds its value, folded (to 33 bits,
// as 2^32 = 1 too), shifted left by e mod 16.
type csumTerm struct {
	slot  uint32 // the field's slot
	shift uint32 // e mod 16
	mask  uint64 // the field's width
}

type calcInput struct {
	at      int    // bit offset when the calculation is static
	field   int    // field index, or -1
	header  int    // whole header, or -1
	cbits   int    // constant width in bits, when constant
	cval    []byte // constant value, big-endian over ceil(cbits/8) bytes
	payload bool
}

// hashAlgorithms are the algorithms of bmv2 the engine implements.
var hashAlgorithms = map[string]func([]byte) uint64{
	"crc16":    func(b []byte) uint64 { return uint64(crc16ARC(b)) },
	"crc32":    func(b []byte) uint64 { return uint64(crc32.ChecksumIEEE(b)) },
	"crcCCITT": func(b []byte) uint64 { return uint64(crcCCITT(b)) },
	"csum16":   func(b []byte) uint64 { return uint64(csum16(b)) },
	"cksum16":  func(b []byte) uint64 { return uint64(csum16(b)) },
	"identity": identityHash,
	"xor16":    func(b []byte) uint64 { return xorHash(b, 2) },
	"xor32":    func(b []byte) uint64 { return xorHash(b, 4) },
	// crc16_custom and crc32_custom use bmv2's default configuration, which
	// equals crc16 and crc32 until a control plane reconfigures them (the
	// engine offers no such control).
	"crc16_custom": func(b []byte) uint64 { return uint64(crc16ARC(b)) },
	"crc32_custom": func(b []byte) uint64 { return uint64(crc32.ChecksumIEEE(b)) },
	// v1model's HashAlgorithm.random: a fresh random number per use.
	"random": func([]byte) uint64 { return rand.Uint64() },
}

var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xA001
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return
}()

// crc16ARC is bmv2's "crc16": polynomial 0x8005 reflected, init 0, no final xor.
func crc16ARC(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c>>8 ^ crc16Table[byte(c)^x]
	}
	return c
}

var ccittTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return
}()

// crcCCITT is bmv2's "crcCCITT": polynomial 0x1021, init 0xffff, not reflected.
func crcCCITT(b []byte) uint16 {
	c := uint16(0xffff)
	for _, x := range b {
		c = c<<8 ^ ccittTable[byte(c>>8)^x]
	}
	return c
}

// csum16 is the Internet checksum (RFC 1071) of b, zero-padded to even length.
func csum16(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// identityHash is the first 8 bytes, big-endian.
func identityHash(b []byte) uint64 {
	var v uint64
	for i := 0; i < len(b) && i < 8; i++ {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// xorHash xors n-byte big-endian words; a short tail is padded with zeros.
func xorHash(b []byte, n int) uint64 {
	var acc uint64
	for i := 0; i < len(b); i += n {
		var w uint64
		for j := 0; j < n; j++ {
			w <<= 8
			if i+j < len(b) {
				w |= uint64(b[i+j])
			}
		}
		acc ^= w
	}
	return acc
}

func (p *Program) compileCalculation(j *bmv2json.Calculation) (*calculation, error) {
	algo, ok := hashAlgorithms[j.Algo]
	if !ok {
		return nil, fmt.Errorf("calculation %q: unsupported hash algorithm %q", j.Name, j.Algo)
	}
	calc := &calculation{name: j.Name, algo: algo}
	for i, in := range j.Input {
		ci := calcInput{field: -1, header: -1}
		switch in.Type {
		case "field":
			hdr, name, ok := in.Value.FieldRef()
			if !ok {
				return nil, fmt.Errorf("calculation %q input %d: %s is not a field", j.Name, i, in.Value)
			}
			fi, err := p.lookupField(hdr, name)
			if err != nil {
				return nil, fmt.Errorf("calculation %q input %d: %w", j.Name, i, err)
			}
			ci.field = fi
			p.markRead(fi)
		case "hexstr":
			if in.Bitwidth == nil || *in.Bitwidth <= 0 || in.Value == nil {
				return nil, fmt.Errorf("calculation %q input %d: constant without bitwidth", j.Name, i)
			}
			z, err := parseHex(in.Value.Str)
			if err != nil {
				return nil, fmt.Errorf("calculation %q input %d: %w", j.Name, i, err)
			}
			ci.cbits = *in.Bitwidth
			ci.cval = make([]byte, (ci.cbits+7)/8)
			bs := z.Bytes()
			if len(bs) > len(ci.cval) {
				bs = bs[len(bs)-len(ci.cval):]
			}
			copy(ci.cval[len(ci.cval)-len(bs):], bs)
		case "header":
			if in.Value == nil {
				return nil, fmt.Errorf("calculation %q input %d: header without name", j.Name, i)
			}
			hi, ok := p.headerByName[in.Value.Str]
			if !ok {
				return nil, fmt.Errorf("calculation %q input %d: unknown header %q", j.Name, i, in.Value.Str)
			}
			ci.header = hi
			for _, fi := range p.headers[hi].fields {
				p.markRead(fi)
			}
		case "payload":
			ci.payload = true
		default:
			return nil, fmt.Errorf("calculation %q input %d: unsupported input type %q", j.Name, i, in.Type)
		}
		calc.inputs = append(calc.inputs, ci)
	}
	calc.static = true
	for i := range calc.inputs {
		in := &calc.inputs[i]
		in.at = calc.totalBits
		switch {
		case in.field >= 0 && !p.fields[in.field].varbit:
			f := &p.fields[in.field]
			calc.totalBits += f.width
			if h := f.hdr; !p.headers[h].metadata && !slices.Contains(calc.staticHdrs, h) {
				calc.staticHdrs = append(calc.staticHdrs, h)
			}
		case in.field < 0 && in.header < 0 && !in.payload:
			calc.totalBits += in.cbits
		default:
			calc.static = false
		}
	}
	if calc.static && (j.Algo == "csum16" || j.Algo == "cksum16") {
		calc.csum, calc.csumConst = p.csumTerms(calc)
	}
	return calc, nil
}

// csumTerms returns the field terms of a static csum16 calculation and
// what its constants add, or nil when an input is wider than 64 bits or a
// validity bit.
func (p *Program) csumTerms(calc *calculation) ([]csumTerm, uint64) {
	padded := (calc.totalBits + 15) &^ 15
	terms := make([]csumTerm, 0, len(calc.inputs))
	var consts uint64
	for _, in := range calc.inputs {
		if in.field >= 0 {
			f := &p.fields[in.field]
			if f.words != 1 || f.isValid || f.width > 64 {
				return nil, 0
			}
			terms = append(terms, csumTerm{slot: uint32(f.slot), mask: mask64(f.width), shift: uint32(padded-in.at-f.width) % 16})
			continue
		}
		if in.cbits > 64 {
			return nil, 0
		}
		v := getBits(in.cval, len(in.cval)*8-in.cbits, in.cbits)
		consts += (v>>32 + v&0xffffffff) << (uint(padded-in.at-in.cbits) % 16)
	}
	return terms, consts
}

// fold16 reduces x modulo 2^16-1 by end-around carry, keeping a non-zero
// x non-zero (0xffff rather than 0), as the one's complement sum does.
func fold16(x uint64) uint64 {
	for x > 0xffff {
		x = x&0xffff + x>>16
	}
	return x
}

// csum16 is the Internet checksum of the calculation's packed inputs.
func (calc *calculation) csum16(k *pkt) uint64 {
	// Every term's slot lies within k.f (a program's slots): checked
	// when the program was laid out, not once per term.
	f := unsafe.Pointer(unsafe.SliceData(k.f))
	sum := calc.csumConst
	for _, t := range calc.csum {
		v := *(*uint64)(unsafe.Add(f, uintptr(t.slot)*8)) & t.mask
		sum += (v>>32 + v&0xffffffff) << (t.shift & 15)
	}
	return uint64(^uint16(fold16(sum)))
}

// compute packs the inputs and runs the algorithm.
func (calc *calculation) compute(k *pkt) uint64 {
	if calc.csum != nil && k.allValid(calc.staticHdrs) {
		return calc.csum16(k)
	}
	if calc.static && k.allValid(calc.staticHdrs) {
		buf := room(k.hbuf[:0], calc.totalBits)
		clear(buf)
		for i := range calc.inputs {
			in := &calc.inputs[i]
			if in.field >= 0 {
				f := &k.prog.fields[in.field]
				k.emitField(f, buf, in.at, f.width)
				continue
			}
			for b := 0; b < in.cbits; {
				n := min(in.cbits-b, 64)
				putBits(buf, in.at+b, n, getBits(in.cval, len(in.cval)*8-in.cbits+b, n))
				b += n
			}
		}
		k.hbuf = buf
		return calc.algo(buf[:(calc.totalBits+7)/8])
	}
	buf := k.hbuf[:0]
	nbits := 0
	for i := range calc.inputs {
		in := &calc.inputs[i]
		switch {
		case in.field >= 0:
			f := &k.prog.fields[in.field]
			if !k.valid[f.hdr] && !k.prog.headers[f.hdr].metadata {
				continue
			}
			w := f.width
			if f.varbit {
				w = int(k.vlen[f.hdr])
			}
			buf = room(buf, nbits+w)
			k.emitField(f, buf, nbits, w)
			nbits += w
		case in.header >= 0:
			if !k.valid[in.header] {
				continue
			}
			buf = room(buf, nbits+k.headerBits(in.header))
			for _, fi := range k.prog.headers[in.header].fields {
				f := &k.prog.fields[fi]
				w := f.width
				if f.varbit {
					w = int(k.vlen[in.header])
				}
				k.emitField(f, buf, nbits, w)
				nbits += w
			}
		case in.payload:
			nbits = (nbits + 7) &^ 7
			buf = append(buf[:nbits/8], k.buf[k.off:]...)
			nbits += 8 * (len(k.buf) - k.off)
			buf = room(buf, nbits)
		default:
			buf = room(buf, nbits+in.cbits)
			for b := 0; b < in.cbits; {
				n := min(in.cbits-b, 64)
				v := getBits(in.cval, len(in.cval)*8-in.cbits+b, n)
				putBits(buf, nbits+b, n, v)
				b += n
			}
			nbits += in.cbits
		}
	}
	k.hbuf = buf
	return calc.algo(buf[:(nbits+7)/8])
}

// room extends buf with zero bytes to hold nbits plus 8 bytes of slack
// for putBits' whole-word stores.
func room(buf []byte, nbits int) []byte {
	need := (nbits+7)/8 + 8
	if len(buf) >= need {
		return buf
	}
	old := len(buf)
	buf = slices.Grow(buf, need-old)[:need]
	clear(buf[old:])
	return buf
}

// hashOffset compiles modify_field_with_hash_based_offset(dst, base, calc,
// size): dst = base + hash % size (the hash() extern of v1model).
func (c *compiler) hashOffset(ps []*bmv2json.Value) (func(k *pkt), error) {
	dst, dyn, err := c.lvalue(ps[0])
	if err != nil {
		return nil, err
	}
	base, err := c.uintParam(ps[1])
	if err != nil {
		return nil, err
	}
	name, err := c.named(ps[2], "calculation")
	if err != nil {
		return nil, err
	}
	calc, ok := c.p.calcs[name]
	if !ok {
		return nil, c.errorf("unknown calculation %q", name)
	}
	size, err := c.uintParam(ps[3])
	if err != nil {
		return nil, err
	}
	return func(k *pkt) {
		h := calc.compute(k)
		if n := size(k); n != 0 {
			h %= n
		}
		f := dst
		if f == nil {
			f = dyn(k)
		}
		k.setBig(f, k.tmpB.SetUint64(h+base(k)))
	}, nil
}

func (k *pkt) allValid(hs []int) bool {
	for _, h := range hs {
		if !k.valid[h] {
			return false
		}
	}
	return true
}
