package stf

import (
	"strings"
	"testing"
)

func expectLine(t *testing.T, line string) *Expect {
	t.Helper()
	return mustParse(t, line)[0].(*Expect)
}

func TestExpectMatchesWildcardsAndLength(t *testing.T) {
	pkt := []byte{0x0a, 0x0b, 0x0c, 0x0d}
	cases := []struct {
		pattern string
		match   bool
	}{
		{"expect 0 0a0b0c0d $", true},
		{"expect 0 0a0b", true},        // no '$': more bytes may follow
		{"expect 0 0a0b $", false},     // '$': the packet must end here
		{"expect 0 0*0b*c0d", true},    // '*' matches a nibble
		{"expect 0 0a0b0c0d0e", false}, // packet too short
		{"expect 0 0a0b0c0e", false},
		{"expect 0 0a0b0c0", true}, // odd pattern: the last low nibble is free
	}
	for _, c := range cases {
		if got := expectLine(t, c.pattern).Matches(pkt); got != c.match {
			t.Errorf("%q matches %x = %v, want %v", c.pattern, pkt, got, c.match)
		}
	}
}

func TestCompareNamesEveryDifferingByte(t *testing.T) {
	bad, length := expectLine(t, "expect 0 00 11 22 33 $").Compare([]byte{0x00, 0x12, 0x22, 0x34, 0x44})
	if len(bad) != 2 || bad[0] != 1 || bad[1] != 3 {
		t.Errorf("bad bytes %v, want [1 3]", bad)
	}
	if length != "packet is 5 bytes, expected exactly 4 ('$')" {
		t.Errorf("length problem %q", length)
	}
}

func TestFormatDiffMarksBytesAndElidesEqualRows(t *testing.T) {
	want := strings.Repeat("00", 16*6) + "ff"
	got := make([]byte, 16*6+1)
	diff := FormatDiff(expectLine(t, "expect 0 "+want+" $"), got)
	lines := strings.Split(strings.TrimRight(diff, "\n"), "\n")
	if !strings.Contains(diff, "... 5 identical row(s)") {
		t.Errorf("equal rows not elided:\n%s", diff)
	}
	last := lines[len(lines)-3:]
	if last[0] != "    expected 0060: FF" || last[1] != "    got      0060: 00" || last[2] != "                   ^^" {
		t.Errorf("last row:\n%s", strings.Join(last, "\n"))
	}
}

func TestHexDumpShowsOffsets(t *testing.T) {
	dump := HexDump(make([]byte, 17))
	if !strings.Contains(dump, "    0010: 00\n") {
		t.Errorf("dump:\n%s", dump)
	}
	if HexDump(nil) != "    (empty packet)\n" {
		t.Errorf("empty dump %q", HexDump(nil))
	}
}
