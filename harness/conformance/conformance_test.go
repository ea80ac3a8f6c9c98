package conformance

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*_passing.txt with the programs that pass now")

// corpusDir is the default corpus directory; the test skips when it is
// absent.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir, err := DefaultDir()
	if err != nil {
		t.Skipf("conformance corpus absent: %v", err)
	}
	return dir
}

// checkAgainstBaseline is a ratchet: every program listed in the baseline
// file (the ones that passed when it was last written with -update) must
// still pass. It logs the report, the pass rate and the programs real bmv2
// passes that fail here.
func checkAgainstBaseline(t *testing.T, report *Report, baseline string) {
	t.Helper()
	var b strings.Builder
	report.Write(&b, false)
	t.Logf("\n%s", b.String())
	var passing []string
	byName := map[string]Verdict{}
	for _, v := range report.Verdicts {
		byName[v.Name] = v
		if v.Passed() {
			passing = append(passing, v.Name)
		}
		if v.Stage == StageCrash || v.Stage == StageTimeout {
			t.Errorf("%s: %s: %s\n%s", v.Name, v.Stage, v.Reason, v.Detail)
		}
	}
	path := filepath.Join("testdata", baseline)
	if *update {
		sort.Strings(passing)
		if err := os.WriteFile(path, []byte(strings.Join(passing, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name := strings.TrimSpace(sc.Text())
		if name == "" {
			continue
		}
		v, ok := byName[name]
		if !ok {
			t.Errorf("%s is in %s but not in the corpus", name, baseline)
			continue
		}
		if !v.Passed() {
			t.Errorf("%s passed before and fails now: %s: %s\n%s", name, v.Stage, v.Reason, v.Detail)
		}
	}
}

func TestReferenceJSONPassesWhatPassedBefore(t *testing.T) {
	dir := corpusDir(t)
	if _, err := os.Stat(filepath.Join(dir, "reference")); err != nil {
		t.Skipf("no reference JSON in %s", dir)
	}
	report, err := Run(Options{Dir: dir, Mode: Reference})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Verdicts) < 100 {
		t.Errorf("only %d programs found in %s", len(report.Verdicts), dir)
	}
	checkAgainstBaseline(t, report, "reference_passing.txt")
	// The target, independent of the baseline file: with real
	// p4c's JSON, everything real bmv2 passes passes here.
	for _, v := range report.Regressions() {
		t.Errorf("%s passes on real bmv2 but fails on the engine: %s: %s", v.Name, v.Stage, v.Reason)
	}
	if _, err := os.Stat(filepath.Join(dir, "reference", "verdicts.txt")); err == nil {
		bmv2Passes := 0
		for _, v := range report.Verdicts {
			if v.Reference == "pass" {
				bmv2Passes++
			}
		}
		if bmv2Passes < 100 {
			t.Errorf("only %d programs have bmv2 verdict pass in reference/verdicts.txt", bmv2Passes)
		}
	}
}

func TestRunSelectsProgramsByName(t *testing.T) {
	dir := corpusDir(t)
	report, err := Run(Options{Dir: dir, Mode: Reference, Run: regexp.MustCompile(`^checksum[0-9]-bmv2$`)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range report.Verdicts {
		names = append(names, v.Name)
	}
	if strings.Join(names, " ") != "checksum1-bmv2 checksum2-bmv2 checksum3-bmv2" {
		t.Errorf("selected %v", names)
	}
}
