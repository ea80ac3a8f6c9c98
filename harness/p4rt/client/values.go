package client

import (
	"bytes"
	"fmt"
	"math/big"
)

// Canonical returns the canonical P4Runtime form of a big-endian byte string
// (P4Runtime specification, section 8.3, "Bytestrings"): without leading zero
// bytes, and a single zero byte for the value 0. Servers that follow the
// specification accept only this form for match values, action parameters
// and metadata, and return it in reads.
func Canonical(b []byte) []byte {
	trimmed := bytes.TrimLeft(b, "\x00")
	if len(trimmed) == 0 {
		return []byte{0}
	}
	return append([]byte(nil), trimmed...)
}

// encode checks that the big-endian value fits in width bits and returns its
// canonical form. what names the value in the error.
func encode(what string, v []byte, width int32) ([]byte, error) {
	c := Canonical(v)
	if bits := bitLen(c); width > 0 && bits > int(width) {
		return nil, fmt.Errorf("%s: value 0x%x does not fit in %d bits", what, c, width)
	}
	return c, nil
}

// bitLen is the number of significant bits of a big-endian value.
func bitLen(b []byte) int { return new(big.Int).SetBytes(b).BitLen() }

// and returns a & mask (big-endian, any lengths) in canonical form.
func and(a, mask []byte) []byte {
	x := new(big.Int).SetBytes(a)
	return Canonical(x.And(x, new(big.Int).SetBytes(mask)).Bytes())
}

// prefixMask is the mask of the first plen bits of a width-bit field.
func prefixMask(plen, width int) []byte {
	all := new(big.Int).Lsh(big.NewInt(1), uint(width))
	all.Sub(all, big.NewInt(1))
	host := new(big.Int).Lsh(big.NewInt(1), uint(width-plen))
	host.Sub(host, big.NewInt(1))
	return all.AndNot(all, host).Bytes()
}

// isZero reports whether a big-endian value is 0.
func isZero(b []byte) bool { return len(bytes.TrimLeft(b, "\x00")) == 0 }

// isAllOnes reports whether a big-endian value is 2^width - 1.
func isAllOnes(b []byte, width int) bool { return bitLen(b) == width && bitLen(addOne(b)) == width+1 }

func addOne(b []byte) []byte {
	x := new(big.Int).SetBytes(b)
	return x.Add(x, big.NewInt(1)).Bytes()
}

// pad returns a big-endian value in exactly (width+7)/8 bytes; servers may
// return values canonical or padded, so reads are padded to the width.
func pad(b []byte, width int32) []byte {
	n := (int(width) + 7) / 8
	c := bytes.TrimLeft(b, "\x00")
	if width <= 0 || len(c) > n {
		return append([]byte(nil), c...)
	}
	out := make([]byte, n)
	copy(out[n-len(c):], c)
	return out
}
