package p4c

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A corpus survey compiles every program of a p4c-compile style corpus
// (accept/ and reject/ with verdicts.txt and reject/p4c-stderr/, as in
// ../shared/p4c-compile) and measures how far the compiler agrees with p4c:
// the share of accept/ programs it compiles (those p4c's bmv2 back end also
// compiles), the share of reject/ programs it rejects, and of those the
// share whose first error sits on a line p4c's own messages name.

// SurveyOutcome is what became of one corpus program.
type SurveyOutcome struct {
	Path     string // relative to the corpus' accept/ or reject/ folder
	Expected string // "accept" or "reject"
	// BMv2Rejects marks an accept/ program p4c's bmv2 back end refuses.
	BMv2Rejects bool
	Result      *Result // nil when rejected
	Err         error   // the compiler's diagnostics, or a panic or timeout
	// Crashed is a panic or timeout rather than a diagnostic.
	Crashed bool
	// Line is the line of the first error in the program's own file (0 if
	// none); P4cLines are the lines p4c names in that file.
	Line     int
	P4cLines map[int]bool
}

// Agrees reports whether a rejected program's first error is on a line p4c
// names.
func (o *SurveyOutcome) Agrees() bool { return o.Line > 0 && o.P4cLines[o.Line] }

// SurveyFigures are a survey's totals.
type SurveyFigures struct {
	Accept, Accepted       int // accept/ programs p4c-bm2-ss compiles; of those compiled by us
	Reject, Rejected       int // reject/ programs; of those rejected by us
	PositionedOnP4cLine    int // rejected with the first error on a line p4c names
	Crashes                int // panics and timeouts
	BMv2RejectsAlsoPassing int // accept/ programs p4c-bm2-ss refuses that we compile
}

func (f SurveyFigures) String() string {
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	return fmt.Sprintf("accept %d/%d (%.1f%%), reject %d/%d (%.1f%%), first error on a line p4c names %d/%d (%.1f%%), crashes %d; of the programs p4c-bm2-ss refuses we compile %d",
		f.Accepted, f.Accept, pct(f.Accepted, f.Accept), f.Rejected, f.Reject, pct(f.Rejected, f.Reject),
		f.PositionedOnP4cLine, f.Reject, pct(f.PositionedOnP4cLine, f.Reject), f.Crashes, f.BMv2RejectsAlsoPassing)
}

// Figures totals the outcomes.
func Figures(outs []*SurveyOutcome) SurveyFigures {
	var f SurveyFigures
	for _, o := range outs {
		if o.Crashed {
			f.Crashes++
		}
		switch {
		case o.Expected == "accept" && o.BMv2Rejects:
			if o.Err == nil {
				f.BMv2RejectsAlsoPassing++
			}
		case o.Expected == "accept":
			f.Accept++
			if o.Err == nil {
				f.Accepted++
			}
		default:
			f.Reject++
			if o.Err != nil && !o.Crashed {
				f.Rejected++
				if o.Agrees() {
					f.PositionedOnP4cLine++
				}
			}
		}
	}
	return f
}

// Survey compiles every program verdicts.txt in dir lists, each with a
// time limit.
func Survey(dir string, limit time.Duration, progress func(*SurveyOutcome)) ([]*SurveyOutcome, error) {
	f, err := os.Open(filepath.Join(dir, "verdicts.txt"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var outs []*SurveyOutcome
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 2 || (fields[0] != "accept" && fields[0] != "reject") {
			return nil, fmt.Errorf("%s:%d: want `accept|reject PATH [bmv2-rejects]`", f.Name(), n)
		}
		o := &SurveyOutcome{Path: fields[1], Expected: fields[0], BMv2Rejects: len(fields) > 2 && fields[2] == "bmv2-rejects"}
		file := filepath.Join(dir, o.Expected, o.Path)
		o.Result, o.Err, o.Crashed = compileWithin(file, limit)
		if o.Err != nil {
			o.Line = firstErrorLine(o.Err.Error(), file)
		}
		if o.Expected == "reject" {
			o.P4cLines = p4cLines(filepath.Join(dir, "reject", "p4c-stderr", filepath.Base(o.Path)+"-stderr"), filepath.Base(o.Path))
		}
		outs = append(outs, o)
		if progress != nil {
			progress(o)
		}
	}
	return outs, sc.Err()
}

// compileWithin compiles path, turning a panic or a compilation longer than
// limit into an error.
func compileWithin(path string, limit time.Duration) (*Result, error, bool) {
	type done struct {
		res     *Result
		err     error
		crashed bool
	}
	ch := make(chan done, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- done{nil, fmt.Errorf("%s: compiler panic: %v", path, p), true}
			}
		}()
		res, err := Compile(path, Options{})
		ch <- done{res, err, false}
	}()
	select {
	case d := <-ch:
		return d.res, d.err, d.crashed
	case <-time.After(limit):
		return nil, fmt.Errorf("%s: compilation took longer than %v", path, limit), true
	}
}

var diagLine = regexp.MustCompile(`(?m)^(\S+?):(\d+):\d+: (error|unsupported):`)

// firstErrorLine is the line of the first error reported in file.
func firstErrorLine(msg, file string) int {
	for _, m := range diagLine.FindAllStringSubmatch(msg, -1) {
		if filepath.Base(m[1]) == filepath.Base(file) {
			n, _ := strconv.Atoi(m[2])
			return n
		}
	}
	return 0
}

// p4cLines are the lines of name that p4c's messages name (`name(LINE)`).
func p4cLines(stderrPath, name string) map[int]bool {
	data, err := os.ReadFile(stderrPath)
	if err != nil {
		return nil
	}
	re := regexp.MustCompile(regexp.QuoteMeta(name) + `\((\d+)\)`)
	lines := map[int]bool{}
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		n, _ := strconv.Atoi(m[1])
		lines[n] = true
	}
	return lines
}

// SurveyReport lists the programs that disagree with p4c, sorted.
func SurveyReport(outs []*SurveyOutcome) string {
	var lines []string
	for _, o := range outs {
		first := ""
		if o.Err != nil {
			first = strings.SplitN(o.Err.Error(), "\n", 2)[0]
		}
		switch {
		case o.Expected == "accept" && !o.BMv2Rejects && o.Err != nil:
			lines = append(lines, "FALSE REJECT "+o.Path+": "+first)
		case o.Expected == "reject" && o.Err == nil:
			lines = append(lines, "FALSE ACCEPT "+o.Path)
		case o.Expected == "reject" && o.Crashed:
			lines = append(lines, "CRASH "+o.Path+": "+first)
		case o.Expected == "reject" && !o.Agrees():
			var want []string
			for l := range o.P4cLines {
				want = append(want, strconv.Itoa(l))
			}
			sort.Strings(want)
			lines = append(lines, fmt.Sprintf("OTHER LINE %s: ours %d, p4c's %s: %s", o.Path, o.Line, strings.Join(want, ","), first))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
