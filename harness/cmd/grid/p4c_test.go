package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
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
	out, code := exitCode(t, "p4c", "../../p4c/testdata/errors/idle_timeout.p4", "-o", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1; output %q", code, out)
	}
	if !strings.Contains(out, "idle_timeout.p4:17:70: unsupported: idle timeout") || !strings.Contains(out, "^") {
		t.Errorf("diagnostic without position or caret:\n%s", out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed compilation left %d files behind", len(entries))
	}
}
