package p4rt

import (
	"bytes"
	"errors"
	"fmt"
)

// canonical is the canonical P4Runtime byte string of a big-endian value
// (specification section 8.4, "Bytestrings"): no leading zero bytes, and
// zero as one zero byte. Read responses carry canonical strings.
func canonical(b []byte) []byte {
	t := bytes.TrimLeft(b, "\x00")
	if len(t) == 0 {
		return []byte{0}
	}
	return bytes.Clone(t)
}

// fitValue checks a byte string received for a bit<width> value and returns
// it padded to ceil(width/8) bytes. As the specification asks of servers,
// both the canonical form and the form padded to whole bytes of the width
// are accepted; an empty string, a longer one, or a value with bits set
// beyond the width are refused.
func fitValue(b []byte, width int) ([]byte, error) {
	if len(b) == 0 {
		return nil, errors.New("empty byte string (zero is one zero byte)")
	}
	n := (width + 7) / 8
	if len(b) > n {
		return nil, fmt.Errorf("%d bytes (0x%x) for a %d-bit value: at most %d", len(b), b, width, n)
	}
	out := make([]byte, n)
	copy(out[n-len(b):], b)
	if pad := n*8 - width; pad > 0 && out[0]>>(8-pad) != 0 {
		return nil, fmt.Errorf("value 0x%x does not fit in %d bits", b, width)
	}
	return out, nil
}

// allOnes is the largest value of a bit<width> in ceil(width/8) bytes.
func allOnes(width int) []byte {
	n := (width + 7) / 8
	out := bytes.Repeat([]byte{0xff}, n)
	if pad := n*8 - width; pad > 0 {
		out[0] = 0xff >> pad
	}
	return out
}

func isZero(b []byte) bool { return len(bytes.TrimLeft(b, "\x00")) == 0 }
