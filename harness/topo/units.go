package topo

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Common rates, in bits per second (decimal SI prefixes, as link speeds are quoted).
const (
	Kbps Bandwidth = 1e3
	Mbps Bandwidth = 1e6
	Gbps Bandwidth = 1e9
	Tbps Bandwidth = 1e12
)

// BandwidthPattern is the grammar of a rate in a topology file: a decimal
// number above 0 immediately followed by one of the units bps, Kbps, Mbps,
// Gbps, Tbps ("100Gbps", "1.5Mbps"). A rate of 0 would stop all traffic; a
// link without a limit leaves its bandwidth out. topologies/schema.json
// carries the same pattern; a test keeps the two equal.
const BandwidthPattern = `^([0-9]*[1-9][0-9]*(\.[0-9]+)?|[0-9]+\.[0-9]*[1-9][0-9]*)(bps|Kbps|Mbps|Gbps|Tbps)$`

// LossPattern is the grammar of a loss rate: a percentage with its % sign ("0.5%").
const LossPattern = `^[0-9]+(\.[0-9]+)?%$`

var (
	bandwidthRE = regexp.MustCompile(BandwidthPattern)
	zeroRateRE  = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(bps|Kbps|Mbps|Gbps|Tbps)$`)
	lossRE      = regexp.MustCompile(LossPattern)
	numberRE    = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
	// numberThenUnitRE splits "9G" or "10 gbit" into a number and what follows, to name the wrong unit.
	numberThenUnitRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*(.*)$`)
)

var bandwidthUnits = []struct {
	name  string
	scale Bandwidth
	exp10 int
}{{"Tbps", Tbps, 12}, {"Gbps", Gbps, 9}, {"Mbps", Mbps, 6}, {"Kbps", Kbps, 3}, {"bps", 1, 0}}

// errNoUnit marks a bare number where a unit is required.
var errNoUnit = errors.New("without a unit")

// ParseBandwidth reads a rate such as "100Gbps" (see BandwidthPattern).
// A bare number is an error: "10" could mean bits, bytes or gigabits.
func ParseBandwidth(s string) (Bandwidth, error) {
	if numberRE.MatchString(s) {
		return 0, fmt.Errorf("bandwidth %q %w: write e.g. %sGbps (units: bps, Kbps, Mbps, Gbps, Tbps)", s, errNoUnit, s)
	}
	if !bandwidthRE.MatchString(s) {
		if zeroRateRE.MatchString(s) {
			return 0, fmt.Errorf("bandwidth %q must be above 0 (leave the field out for no limit)", s)
		}
		if m := numberThenUnitRE.FindStringSubmatch(s); m != nil && m[2] != "" {
			if bandwidthRE.MatchString(m[1] + m[2]) {
				return 0, fmt.Errorf("bandwidth %q: write the unit right after the number: %s%s", s, m[1], m[2])
			}
			return 0, fmt.Errorf("bandwidth %q: unknown unit %q (units: bps, Kbps, Mbps, Gbps, Tbps, written right after the number)", s, m[2])
		}
		return 0, fmt.Errorf("bandwidth %q is not a number with a unit such as 100Gbps", s)
	}
	for _, u := range bandwidthUnits {
		if num, ok := strings.CutSuffix(s, u.name); ok {
			// Scaling by the exponent in the text keeps the value exact: 1.5e9 parses to the float nearest 1.5e9.
			v, err := strconv.ParseFloat(num+"e"+strconv.Itoa(u.exp10), 64)
			if err != nil {
				return 0, fmt.Errorf("bandwidth %q: %w", s, err)
			}
			return Bandwidth(v), nil
		}
	}
	// Unreachable: bandwidthRE admits only the units listed above.
	return 0, fmt.Errorf("bandwidth %q: no known unit", s)
}

// String writes the rate in the largest unit that keeps the number at least 1
// ("9Gbps", "1.5Tbps", "0bps"), exactly: ParseBandwidth(b.String()) == b.
func (b Bandwidth) String() string {
	for _, u := range bandwidthUnits {
		if b >= u.scale {
			return shiftDecimal(float64(b), u.exp10) + u.name
		}
	}
	return strconv.FormatFloat(float64(b), 'f', -1, 64) + "bps"
}

// shiftDecimal writes v / 10^shift in decimal without the rounding a float
// division would add: it moves the decimal point of v's shortest exact form.
func shiftDecimal(v float64, shift int) string {
	mant, expText, _ := strings.Cut(strconv.FormatFloat(v, 'e', -1, 64), "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	// v = digits * 10^point with point counted from the last digit.
	point := exp - (len(digits) - 1) - shift
	if point >= 0 {
		return digits + strings.Repeat("0", point)
	}
	intLen := len(digits) + point
	if intLen <= 0 {
		return "0." + strings.Repeat("0", -intLen) + digits
	}
	return digits[:intLen] + "." + digits[intLen:]
}

// parseDelay reads a one-way delay in Go duration syntax ("2ms", "150us").
func parseDelay(s string) (time.Duration, error) {
	if numberRE.MatchString(s) {
		return 0, fmt.Errorf("delay %q %w: write e.g. %sms (units: ns, us, ms, s)", s, errNoUnit, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("delay %q is not a duration such as 2ms", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("delay %q is negative", s)
	}
	return d, nil
}

// parseLoss reads a loss rate written as a percentage ("0.5%").
func parseLoss(s string) (float64, error) {
	if numberRE.MatchString(s) {
		return 0, fmt.Errorf("loss %q %w: write it as a percentage, e.g. %s%%", s, errNoUnit, s)
	}
	if !lossRE.MatchString(s) {
		return 0, fmt.Errorf("loss %q is not a percentage such as 0.5%%", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("loss %q: %w", s, err)
	}
	if v > 100 {
		return 0, fmt.Errorf("loss %q is above 100%%", s)
	}
	return v, nil
}

func formatLoss(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "%" }
