package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/grid-ina/grid/harness/bmv2json"
)

func TestP4cWritesJSONAndBothP4InfoFormsWithFlagsAfterTheFile(t *testing.T) {
	dir := t.TempDir()
	out, code := exitCode(t, "p4c", examples+"basic_ipv4.p4", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	js, err := os.ReadFile(filepath.Join(dir, "basic_ipv4.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bmv2json.Parse(js); err != nil {
		t.Errorf("written JSON does not parse: %v", err)
	}
	bin, err := os.ReadFile(filepath.Join(dir, "basic_ipv4.p4info.binpb"))
	if err != nil {
		t.Fatal(err)
	}
	var info p4configv1.P4Info
	if err := proto.Unmarshal(bin, &info); err != nil || len(info.Tables) == 0 {
		t.Errorf("binary P4Info: %v, %d tables", err, len(info.Tables))
	}
	txt, err := os.ReadFile(filepath.Join(dir, "basic_ipv4.p4info.txtpb"))
	if err != nil || !strings.Contains(string(txt), info.Tables[0].Preamble.Name) {
		t.Errorf("text P4Info missing or without table %s: %v", info.Tables[0].Preamble.Name, err)
	}
	if !strings.Contains(out, filepath.Join(dir, "basic_ipv4.json")) {
		t.Errorf("output does not list the written files: %q", out)
	}
}

func TestP4cReportsUnsupportedConstructsWithPositionCaretAndStatus1(t *testing.T) {
	dir := t.TempDir()
	// bmv2 runs each table once per packet, so p4c-bm2-ss rejects this as well: it stays unsupported.
	out, code := exitCode(t, "p4c", "../../p4c/testdata/errors/table_applied_twice_on_one_path.p4", "-o", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1; output %q", code, out)
	}
	if !strings.Contains(out, "table_applied_twice_on_one_path.p4:17:5: unsupported: ig.t is reached again after itself") || !strings.Contains(out, "^") {
		t.Errorf("diagnostic without position or caret:\n%s", out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed compilation left %d files behind", len(entries))
	}
}

// The tutorials' Makefile calls p4c-bm2-ss this way: -o names the JSON file
// and --p4runtime-files the P4Info, in the format its suffix says.
func TestP4cTakesP4cBm2SsCommandLine(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "build", "basic.json")
	txt := filepath.Join(dir, "build", "basic.p4.p4info.txtpb")
	bin := filepath.Join(dir, "build", "basic.p4info.bin")
	out, code := exitCode(t, "p4c", "--p4v", "16", "--p4runtime-files", txt+","+bin, "-o", jsonPath, examples+"basic_ipv4.p4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if st, err := os.Stat(jsonPath); err != nil || st.IsDir() {
		t.Fatalf("-o %s must be the JSON file: %v", jsonPath, err)
	}
	js, _ := os.ReadFile(jsonPath)
	if _, err := bmv2json.Parse(js); err != nil {
		t.Errorf("JSON does not parse: %v", err)
	}
	var fromBin p4configv1.P4Info
	raw, err := os.ReadFile(bin)
	if err != nil || proto.Unmarshal(raw, &fromBin) != nil || len(fromBin.Tables) == 0 {
		t.Fatalf("binary P4Info %s: %v", bin, err)
	}
	text, err := os.ReadFile(txt)
	if err != nil || !strings.Contains(string(text), `name: "`+fromBin.Tables[0].Preamble.Name+`"`) {
		t.Errorf("text P4Info %s: %v\n%s", txt, err, text)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "build"))
	if len(entries) != 3 {
		t.Errorf("build/ holds %d files, want the 3 asked for", len(entries))
	}
}

// p4c's driver: -o is a directory, and --p4runtime-file with
// --p4runtime-format is the older spelling.
func TestP4cTakesP4cDriverCommandLine(t *testing.T) {
	dir := t.TempDir()
	info := filepath.Join(dir, "basic.p4info.json")
	out, code := exitCode(t, "p4c", "--target", "bmv2", "--arch", "v1model", "--std", "p4-16", "-DUNUSED_MACRO",
		"-I", dir, "--p4runtime-file", info, "--p4runtime-format", "json", "-o", dir, examples+"basic_ipv4.p4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "basic_ipv4.json")); err != nil {
		t.Errorf("-o DIR: %v", err)
	}
	raw, err := os.ReadFile(info)
	var parsed p4configv1.P4Info
	if err != nil || protojson.Unmarshal(raw, &parsed) != nil || len(parsed.Tables) == 0 {
		t.Errorf("JSON P4Info %s: %v\n%s", info, err, raw)
	}
}

func TestP4cRefusesOtherLanguagesTargetsAndFormats(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--p4v", "14", "x.p4"}, "--p4v 14: grid's compiler takes P4_16 only"},
		{[]string{"--target", "tofino", "x.p4"}, "--target tofino: grid's compiler targets bmv2 only"},
		{[]string{"--arch", "psa", "x.p4"}, "--arch psa: grid's compiler has v1model only"},
		{[]string{"--p4runtime-files", "a.yaml", "x.p4"}, "a.yaml: unknown P4Info format"},
		{[]string{"--frobnicate", "x.p4"}, "unknown option --frobnicate"},
		{[]string{"a.p4", "b.p4"}, "want exactly one FILE.p4, not a.p4 and b.p4"},
		{[]string{"-o"}, "-o wants a value"},
	} {
		out, code := exitCode(t, append([]string{"p4c"}, tc.args...)...)
		if code != 1 || !strings.Contains(out, tc.want) {
			t.Errorf("grid p4c %s: exit %d, output %q; want exit 1 and %q", strings.Join(tc.args, " "), code, out, tc.want)
		}
	}
}
