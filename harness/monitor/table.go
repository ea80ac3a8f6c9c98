package monitor

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Order is how FormatTable sorts links.
type Order string

const (
	// ByRate sorts by the 2 s rate of both directions together, as iftop does.
	ByRate Order = "rate"
	// ByTotal sorts by cumulative bytes of both directions together.
	ByTotal Order = "total"
)

// ParseOrder checks a sort order given on the command line.
func ParseOrder(s string) (Order, error) {
	switch o := Order(s); o {
	case ByRate, ByTotal:
		return o, nil
	}
	return "", fmt.Errorf("sort order %q: want %q or %q", s, ByRate, ByTotal)
}

// TableOptions tune FormatTable.
type TableOptions struct {
	Title string // first line, e.g. the run and its size
	Sort  Order  // ByRate when empty
	Top   int    // links shown; 0 shows all
}

// FormatTable writes snap as iftop's text mode (iftop -t) does: one pair of
// lines per link, "=>" the direction A to B and "<=" B to A, rates in bits
// per second over the last 2 s, 10 s and 40 s, the peak, and cumulative bytes;
// then totals over all links. Ties keep the topology's link order.
func FormatTable(w io.Writer, snap Snapshot, opts TableOptions) error {
	links := append([]LinkStats(nil), snap.Links...)
	key := func(l LinkStats) float64 { return l.AB.Rates[0] + l.BA.Rates[0] }
	if opts.Sort == ByTotal {
		key = func(l LinkStats) float64 { return float64(l.AB.Sent.Bytes + l.BA.Sent.Bytes) }
	}
	sort.SliceStable(links, func(i, j int) bool { return key(links[i]) > key(links[j]) })
	shown := links
	if opts.Top > 0 && opts.Top < len(links) {
		shown = links[:opts.Top]
	}
	name := len("link (A => B, B <= A)")
	for _, l := range shown {
		name = max(name, len(l.A), len(l.B))
	}
	rule := strings.Repeat("-", name+5+4*11+13)
	var b strings.Builder
	if opts.Title != "" {
		fmt.Fprintln(&b, opts.Title)
	}
	fmt.Fprintf(&b, "%4s %-*s   %10s %10s %10s %10s %12s\n", "#", name, "link (A => B, B <= A)", "last 2s", "last 10s", "last 40s", "peak", "cumulative")
	fmt.Fprintln(&b, rule)
	row := func(num, end, arrow string, d Direction) {
		fmt.Fprintf(&b, "%4s %-*s %s %10s %10s %10s %10s %12s\n", num, name, end, arrow,
			bits(d.Rates[0]), bits(d.Rates[1]), bits(d.Rates[2]), bits(d.Peak), bytes(d.Sent.Bytes))
	}
	for i, l := range shown {
		row(fmt.Sprint(i+1), l.A, "=>", l.AB)
		row("", l.B, "<=", l.BA)
	}
	fmt.Fprintln(&b, rule)
	var rates [3]float64
	var total uint64
	for _, l := range links {
		for w := range rates {
			rates[w] += l.AB.Rates[w] + l.BA.Rates[w]
		}
		total += l.AB.Sent.Bytes + l.BA.Sent.Bytes
	}
	label := fmt.Sprintf("Total rate (%d links, both ways):", len(links))
	fmt.Fprintf(&b, "%-*s %10s %10s %10s %10s %12s\n", name+8, label, bits(rates[0]), bits(rates[1]), bits(rates[2]), "", bytes(total))
	if len(shown) < len(links) {
		fmt.Fprintf(&b, "(%d more links not shown)\n", len(links)-len(shown))
	}
	fmt.Fprintln(&b, strings.Repeat("=", len(rule)))
	_, err := io.WriteString(w, b.String())
	return err
}

// Title describes a snapshot of run: its size, the time covered and the interval.
func Title(run string, snap Snapshot, interval time.Duration) string {
	return fmt.Sprintf("run %s: %d links, %d samples over %v, every %v", run, len(snap.Links), snap.Samples,
		snap.Time.Sub(snap.Since).Round(time.Millisecond), interval)
}

// bits writes a rate in bytes per second as iftop does, in bits per second
// with decimal prefixes: "0b", "800b", "12.5Kb", "1.00Gb".
func bits(bytesPerSecond float64) string {
	return human(bytesPerSecond*8, "b")
}

// bytes writes a byte count with decimal prefixes: "0B", "64B", "1.50MB".
func bytes(n uint64) string { return human(float64(n), "B") }

func human(v float64, unit string) string {
	prefixes := []string{"", "K", "M", "G", "T"}
	p := 0
	for v >= 1000 && p < len(prefixes)-1 {
		v /= 1000
		p++
	}
	switch {
	case p == 0:
		return fmt.Sprintf("%.0f%s", v, unit)
	case v < 10:
		return fmt.Sprintf("%.2f%s%s", v, prefixes[p], unit)
	case v < 100:
		return fmt.Sprintf("%.1f%s%s", v, prefixes[p], unit)
	}
	return fmt.Sprintf("%.0f%s%s", v, prefixes[p], unit)
}
