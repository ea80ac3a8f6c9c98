package stf

import (
	"fmt"
	"strings"
)

// patternBytes is the number of bytes an expected packet covers; an odd
// final nibble counts as a byte whose low nibble is "don't care".
func (c *Expect) patternBytes() int { return (len(c.Nibbles) + 1) / 2 }

// nibbleAt returns the expected digit for nibble i ('*' for any).
func (c *Expect) nibbleAt(i int) byte {
	if i < len(c.Nibbles) {
		return c.Nibbles[i]
	}
	return '*'
}

const hexDigits = "0123456789ABCDEF"

// Compare matches a received packet against the expectation and returns the
// offsets of mismatching bytes and, if the length is wrong, why. A packet
// matches when both are empty. As in bmv2stf.py, a packet longer than the
// pattern matches unless the pattern ends with '$'.
func (c *Expect) Compare(got []byte) (badBytes []int, lengthProblem string) {
	n := c.patternBytes()
	switch {
	case len(got) < n:
		lengthProblem = fmt.Sprintf("packet is %d bytes, expected %d", len(got), n)
	case c.Exact && len(got) > n:
		lengthProblem = fmt.Sprintf("packet is %d bytes, expected exactly %d ('$')", len(got), n)
	}
	for i := 0; i < min(n, len(got)); i++ {
		hi, lo := c.nibbleAt(2*i), c.nibbleAt(2*i+1)
		if (hi != '*' && hi != hexDigits[got[i]>>4]) || (lo != '*' && lo != hexDigits[got[i]&0xf]) {
			badBytes = append(badBytes, i)
		}
	}
	return badBytes, lengthProblem
}

// Matches reports whether got satisfies the expectation.
func (c *Expect) Matches(got []byte) bool {
	bad, length := c.Compare(got)
	return len(bad) == 0 && length == ""
}

// diffRowBytes is how many bytes one row of a diff shows.
const diffRowBytes = 16

// FormatDiff renders expected and received bytes row by row, 16 bytes a
// row, with '^^' under every byte that differs. Rows where both agree are
// elided when the packet is long, keeping one row of context around each
// difference.
func FormatDiff(c *Expect, got []byte) string {
	bad, _ := c.Compare(got)
	badSet := map[int]bool{}
	for _, i := range bad {
		badSet[i] = true
	}
	n := max(c.patternBytes(), len(got))
	rows := (n + diffRowBytes - 1) / diffRowBytes
	rowDiffers := make([]bool, rows)
	for r := range rowDiffers {
		for i := r * diffRowBytes; i < min(n, (r+1)*diffRowBytes); i++ {
			if badSet[i] || i >= c.patternBytes() && c.Exact || i >= len(got) {
				rowDiffers[r] = true
			}
		}
	}
	show := func(r int) bool {
		if rows <= 4 {
			return true
		}
		for d := -1; d <= 1; d++ {
			if r+d >= 0 && r+d < rows && rowDiffers[r+d] {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	skipped := 0
	for r := 0; r < rows; r++ {
		if !show(r) {
			skipped++
			continue
		}
		if skipped > 0 {
			fmt.Fprintf(&b, "    ... %d identical row(s)\n", skipped)
			skipped = 0
		}
		var want, have, marks strings.Builder
		for i := r * diffRowBytes; i < min(n, (r+1)*diffRowBytes); i++ {
			switch {
			case i < c.patternBytes():
				want.WriteByte(c.nibbleAt(2 * i))
				want.WriteByte(c.nibbleAt(2*i + 1))
			case c.Exact:
				want.WriteString("--") // nothing may be here
			default:
				want.WriteString("..") // anything may follow
			}
			if i < len(got) {
				fmt.Fprintf(&have, "%02X", got[i])
			} else {
				have.WriteString("--")
			}
			mark := "  "
			if badSet[i] || i >= len(got) || (c.Exact && i >= c.patternBytes()) {
				mark = "^^"
			}
			marks.WriteString(mark)
			if i+1 < min(n, (r+1)*diffRowBytes) {
				want.WriteByte(' ')
				have.WriteByte(' ')
				marks.WriteByte(' ')
			}
		}
		fmt.Fprintf(&b, "    expected %04X: %s\n", r*diffRowBytes, want.String())
		fmt.Fprintf(&b, "    got      %04X: %s\n", r*diffRowBytes, have.String())
		if m := strings.TrimRight(marks.String(), " "); m != "" {
			fmt.Fprintf(&b, "                   %s\n", m)
		}
	}
	if skipped > 0 {
		fmt.Fprintf(&b, "    ... %d identical row(s)\n", skipped)
	}
	return b.String()
}

// HexDump renders bytes 16 to a row, for showing unexpected packets.
func HexDump(data []byte) string {
	var b strings.Builder
	for r := 0; r < len(data); r += diffRowBytes {
		row := data[r:min(len(data), r+diffRowBytes)]
		parts := make([]string, len(row))
		for i, x := range row {
			parts[i] = fmt.Sprintf("%02X", x)
		}
		fmt.Fprintf(&b, "    %04X: %s\n", r, strings.Join(parts, " "))
	}
	if len(data) == 0 {
		b.WriteString("    (empty packet)\n")
	}
	return b.String()
}

// FormatPattern renders an expected packet 16 bytes to a row, '*' for any
// nibble.
func FormatPattern(c *Expect) string {
	var b strings.Builder
	n := c.patternBytes()
	for r := 0; r < n; r += diffRowBytes {
		parts := make([]string, 0, diffRowBytes)
		for i := r; i < min(n, r+diffRowBytes); i++ {
			parts = append(parts, string([]byte{c.nibbleAt(2 * i), c.nibbleAt(2*i + 1)}))
		}
		fmt.Fprintf(&b, "    %04X: %s\n", r, strings.Join(parts, " "))
	}
	if c.Exact {
		b.WriteString("    (ends here: '$')\n")
	}
	return b.String()
}
