package conformance

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fakeCorpus lays out a corpus of four programs around the STF runner's
// hand-written l2acl.json: "good" passes, "wrongbyte" expects a byte the
// program does not write, "badjson" has a broken reference JSON, "badstf"
// a broken STF file.
func fakeCorpus(t *testing.T) string {
	t.Helper()
	program, err := os.ReadFile(filepath.Join("..", "stf", "testdata", "l2acl.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"programs", "reference"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const entry = "add fwd dstAddr:0x000000000002 forward(port:2)\npacket 1 000000000002 00000000000a 0800 01\n"
	files := map[string]string{
		"programs/good.stf":        entry + "expect 2 000000000002 00000000000a 0800 01 $\n",
		"programs/wrongbyte.stf":   entry + "expect 2 000000000002 00000000000a 0800 02 $\n",
		"programs/badjson.stf":     entry,
		"programs/badstf.stf":      "packet one 00\n",
		"reference/good.json":      string(program),
		"reference/wrongbyte.json": string(program),
		"reference/badjson.json":   `{"actions": "none"}`,
		"reference/badstf.json":    string(program),
		"reference/verdicts.txt":   "good pass\nwrongbyte pass\nbadjson compile-error\n",
	}
	for _, name := range []string{"good", "wrongbyte", "badjson", "badstf"} {
		files["programs/"+name+".p4"] = "// source not needed in reference mode\n"
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func verdicts(r *Report) map[string]Verdict {
	m := map[string]Verdict{}
	for _, v := range r.Verdicts {
		m[v.Name] = v
	}
	return m
}

func TestRunGivesEachProgramAStageAndReason(t *testing.T) {
	report, err := Run(Options{Dir: fakeCorpus(t), Mode: Reference})
	if err != nil {
		t.Fatal(err)
	}
	v := verdicts(report)
	if !v["good"].Passed() {
		t.Errorf("good: %+v", v["good"])
	}
	if w := v["wrongbyte"]; w.Stage != StageRun || !strings.Contains(w.Reason, "1 byte(s) differ, first at byte 14") || !strings.Contains(w.Detail, "^^") {
		t.Errorf("wrongbyte: %+v", w)
	}
	if b := v["badjson"]; b.Stage != StageLoad || b.Reference != "compile-error" {
		t.Errorf("badjson: %+v", b)
	}
	if b := v["badstf"]; b.Stage != StageSTF || !strings.Contains(b.Reason, "badstf.stf:1:") {
		t.Errorf("badstf: %+v", b)
	}
	if report.Passed() != 1 {
		t.Errorf("%d passed, want 1", report.Passed())
	}
	regs := report.Regressions()
	if len(regs) != 1 || regs[0].Name != "wrongbyte" {
		t.Errorf("regressions %+v, want wrongbyte (bmv2 passes it)", regs)
	}
	var b strings.Builder
	report.Write(&b, true)
	out := b.String()
	for _, want := range []string{
		"PASS  good\n",
		"FAIL  badjson    load: ",
		"(real p4c/bmv2: compile-error)",
		"1 of 4 pass (JSON: reference",
		"failures by stage: load 1, stf 1, run 1",
		"1 pass on real bmv2 but fail here: wrongbyte",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestRunSurvivesCompilerPanicsErrorsAndHangs(t *testing.T) {
	compile := func(path string) ([]byte, error) {
		switch strings.TrimSuffix(filepath.Base(path), ".p4") {
		case "good":
			panic("index out of range")
		case "wrongbyte":
			time.Sleep(time.Minute)
		case "badjson":
			return nil, errors.New("badjson.p4:3:5: unsupported: header unions\n  more detail")
		}
		return os.ReadFile(filepath.Join(filepath.Dir(path), "..", "reference", "badstf.json"))
	}
	report, err := Run(Options{Dir: fakeCorpus(t), Mode: Ours, Compile: compile, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	v := verdicts(report)
	if g := v["good"]; g.Stage != StageCrash || g.Reason != "panic: index out of range" {
		t.Errorf("good: %+v", g)
	}
	if w := v["wrongbyte"]; w.Stage != StageTimeout {
		t.Errorf("wrongbyte: %+v", w)
	}
	if b := v["badjson"]; b.Stage != StageCompile || b.Reason != "badjson.p4:3:5: unsupported: header unions" {
		t.Errorf("badjson: %+v", b)
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	if _, err := Run(Options{Dir: t.TempDir(), Mode: "bmv2"}); err == nil {
		t.Error("unknown mode accepted")
	}
	if _, err := Run(Options{Dir: t.TempDir(), Mode: Ours}); err == nil {
		t.Error("mode ours without a compiler accepted")
	}
	if _, err := Run(Options{Dir: t.TempDir(), Mode: Reference}); err == nil || !strings.Contains(err.Error(), "no programs/NAME.p4 with NAME.stf") {
		t.Errorf("empty corpus: %v", err)
	}
}

func TestRunBlamesTheCompilerWhenRealP4cJSONPasses(t *testing.T) {
	dir := fakeCorpus(t)
	// Our "compiler" emits the same program with a primitive the engine
	// does not know, so it fails to load.
	program, err := os.ReadFile(filepath.Join(dir, "reference", "good.json"))
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(program), `"op": "assign"`, `"op": "no_such_primitive"`, 1)
	if broken == string(program) {
		t.Fatal("test program changed shape: no assign primitive found")
	}
	compile := func(string) ([]byte, error) { return []byte(broken), nil }
	report, err := Run(Options{Dir: dir, Mode: Ours, Compile: compile, Run: regexp.MustCompile("^(good|wrongbyte)$")})
	if err != nil {
		t.Fatal(err)
	}
	v := verdicts(report)
	if g := v["good"]; g.Passed() || !g.ReferenceJSONPasses {
		t.Errorf("good: %+v, want a failure blamed on the compiler", g)
	}
	if w := v["wrongbyte"]; w.ReferenceJSONPasses {
		t.Errorf("wrongbyte fails with the reference JSON too, yet was blamed on the compiler")
	}
	var b strings.Builder
	report.Write(&b, false)
	if !strings.Contains(b.String(), "[real p4c's JSON passes: a compiler bug]") {
		t.Errorf("report:\n%s", b.String())
	}
}
