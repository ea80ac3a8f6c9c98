package monitor

import (
	"strings"
	"testing"
)

func TestTableSortsByRateOrTotalAndShowsTheTop(t *testing.T) {
	snap := Snapshot{Samples: 3, Links: []LinkStats{
		{LinkInfo: LinkInfo{A: "s1:p1", B: "h1:eth0"}, AB: Direction{Sent: Totals{Bytes: 5_000_000}, Rates: [3]float64{10, 10, 10}}},
		{LinkInfo: LinkInfo{A: "s1:p2", B: "h2:eth0"}, BA: Direction{Sent: Totals{Bytes: 1500}, Rates: [3]float64{125_000, 25_000, 6_250}, Peak: 250_000}},
		{LinkInfo: LinkInfo{A: "s1:p3", B: "s2:p1"}},
	}}
	var b strings.Builder
	if err := FormatTable(&b, snap, TableOptions{Title: "run x", Top: 2}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	// By rate: the 1 Mb/s link first, then the 80 b/s one; the silent one left out.
	wantRows := []string{
		"   1 s1:p2                 =>         0b         0b         0b         0b           0B",
		"     h2:eth0               <=     1.00Mb      200Kb     50.0Kb     2.00Mb       1.50KB",
		"   2 s1:p1                 =>        80b        80b        80b         0b       5.00MB",
	}
	for i, want := range wantRows {
		if lines[3+i] != want {
			t.Errorf("row %d:\n got %q\nwant %q", i, lines[3+i], want)
		}
	}
	if lines[0] != "run x" || !strings.Contains(b.String(), "(1 more links not shown)") || strings.Contains(b.String(), "s2:p1") {
		t.Errorf("title or --top wrong:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "Total rate (3 links, both ways):     1.00Mb      200Kb     50.1Kb                  5.00MB") {
		t.Errorf("total row wrong:\n%s", b.String())
	}
	b.Reset()
	FormatTable(&b, snap, TableOptions{Sort: ByTotal, Top: 1})
	if !strings.Contains(b.String(), "   1 s1:p1 ") || strings.Contains(b.String(), "s1:p2") {
		t.Errorf("by total, s1:p1's 5 MB should come first and alone:\n%s", b.String())
	}
}

func TestParseOrderNamesTheChoices(t *testing.T) {
	if o, err := ParseOrder("total"); err != nil || o != ByTotal {
		t.Errorf("ParseOrder(total) = %q, %v", o, err)
	}
	if _, err := ParseOrder("2s"); err == nil || !strings.Contains(err.Error(), `"rate" or "total"`) {
		t.Errorf("ParseOrder(2s): %v", err)
	}
}
