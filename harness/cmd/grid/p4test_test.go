package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/conformance"
)

// exitCode runs the CLI with cli's os.Exit replaced, so commands that fail
// with cli.Exit can be tested in-process; it returns the output and code.
func exitCode(t *testing.T, args ...string) (string, int) {
	t.Helper()
	code := 0
	saved := cli.OsExiter
	cli.OsExiter = func(c int) { code = c }
	defer func() { cli.OsExiter = saved }()
	out, err := runGrid(t, args...)
	var coder cli.ExitCoder
	if errors.As(err, &coder) {
		code = coder.ExitCode()
	} else if err != nil {
		t.Fatalf("grid %s: %v", strings.Join(args, " "), err)
	}
	return out, code
}

const examples = "../../../p4/examples/"

func TestP4testPassesAnExampleAndAcceptsTraceLast(t *testing.T) {
	out, code := exitCode(t, "p4test", examples+"basic_ipv4.p4", examples+"basic_ipv4.stf")
	if code != 0 || out != "basic_ipv4.stf PASS (8 packets in, 4 out)\n" {
		t.Errorf("exit %d, output %q", code, out)
	}
	out, code = exitCode(t, "p4test", examples+"basic_ipv4.p4", examples+"basic_ipv4.stf", "--trace")
	if code != 0 || !strings.Contains(out, "Table 'MyIngress.ipv4_lpm': hit") || !strings.Contains(out, "basic_ipv4.stf:8] add ipv4_lpm") {
		t.Errorf("--trace after the files: exit %d, output:\n%s", code, out)
	}
}

func TestP4testFailsWithAByteDiff(t *testing.T) {
	good, err := os.ReadFile(examples + "basic_ipv4.stf")
	if err != nil {
		t.Fatal(err)
	}
	// Expect TTL 0x40 where the switch writes 0x3f.
	bad := strings.Replace(string(good), "3f1166cb", "401166cb", 1)
	path := filepath.Join(t.TempDir(), "bad.stf")
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := exitCode(t, "p4test", examples+"basic_ipv4.p4", path)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{"bad.stf:14: packet #1 on port 2 does not match", "differs in IPv4 TTL (byte 22)", "FAIL bad.stf: 1 failure(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestP4testReportsBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"p4test", examples + "basic_ipv4.p4"},
		{"p4test", examples + "README.md", examples + "basic_ipv4.stf"},
		{"p4test", examples + "basic_ipv4.p4", examples + "basic_ipv4.p4"},
	} {
		if _, code := exitCode(t, args...); code != 1 {
			t.Errorf("grid %s: exit %d, want 1", strings.Join(args, " "), code)
		}
	}
}

func TestConformanceRunsSelectedPrograms(t *testing.T) {
	dir, err := conformance.DefaultDir()
	if err != nil {
		t.Skipf("conformance corpus absent: %v", err)
	}
	out, code := exitCode(t, "conformance", "--dir", dir, "--json", "reference", "--run", "^checksum[123]-bmv2$")
	if code != 0 || !strings.Contains(out, "3 of 3 pass (JSON: reference") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
	if _, code := exitCode(t, "conformance", "--json", "bmv2"); code != 1 {
		t.Errorf("unknown --json mode: exit %d, want 1", code)
	}
}

func TestP4testRunsSeveralFilesAndCountsThem(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.stf")
	if err := os.WriteFile(bad, []byte("packet 0 0800\nexpect 9 00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := exitCode(t, "p4test", examples+"basic_ipv4.p4", examples+"basic_ipv4.stf", bad, examples+"basic_ipv4.stf")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{"basic_ipv4.stf PASS", "FAIL bad.stf: 1 failure(s)", "2 of 3 tests pass"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
