package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/grid-ina/grid/harness/conformance"
	"github.com/grid-ina/grid/harness/p4test/targettest"
)

// exitCode runs the CLI with cli's os.Exit replaced, so commands that fail
// with cli.Exit can be tested in-process; it returns the output (with the
// exit message) and code.
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
		out += coder.Error() // cli prints it to its global ErrWriter
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

// portProgram is a P4 program that sends every frame to port OUT_PORT (1
// unless defined), for testing how p4test chooses a build.
const portProgram = `#include <core.p4>
#include <v1model.p4>
#ifndef OUT_PORT
#define OUT_PORT 1
#endif
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers_t { eth_t eth; }
struct meta_t { }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { sm.egress_spec = OUT_PORT; } }
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
`

// writeFiles writes name → text into a temporary directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestP4testBuildsWithDefinesAndTheTestsBuildLine(t *testing.T) {
	const frame = "000000000001 000000000002 0800"
	dir := writeFiles(t, map[string]string{
		"port.p4":   portProgram,
		"two.stf":   "# build: OUT_PORT=2\npacket 0 " + frame + "\nexpect 2 " + frame + " $\n",
		"three.stf": "packet 0 " + frame + "\nexpect 3 " + frame + " $\n",
	})
	p4, two, three := filepath.Join(dir, "port.p4"), filepath.Join(dir, "two.stf"), filepath.Join(dir, "three.stf")
	// -D applies to every test; the build line of two.stf overrides it.
	out, code := exitCode(t, "p4test", p4, two, three, "-D", "OUT_PORT=3")
	if code != 0 || !strings.Contains(out, "2 of 2 tests pass") {
		t.Errorf("with -D OUT_PORT=3: exit %d, output:\n%s", code, out)
	}
	// Without -D the program's default port 1 applies to three.stf.
	out, code = exitCode(t, "p4test", p4, three)
	if code != 1 || !strings.Contains(out, "unexpected packet #1 on port 1") {
		t.Errorf("without -D: exit %d, output:\n%s", code, out)
	}
}

func TestP4testErrorsNameTheFileAndLine(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"syntax.stf":  "packet 0 0800\npacket zz 00\n",
		"table.stf":   "\nadd no_such_table hdr.ipv4.dstAddr:0x0a000000/8 MyIngress.drop()\n",
		"action.stf":  "add ipv4_lpm hdr.ipv4.dstAddr:0x0a000000/8 no_such_action()\n",
		"field.stf":   "add ipv4_lpm hdr.ipv4.noSuchField:0x0a000000/8 MyIngress.drop()\n",
		"program.txt": "not a program",
	})
	prog := examples + "basic_ipv4.p4"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{prog}, "want PROG.p4|PROG.json and TEST.stf"},
		{[]string{filepath.Join(dir, "missing.p4"), examples + "basic_ipv4.stf"}, "missing.p4: no such file"},
		{[]string{filepath.Join(dir, "missing.json"), examples + "basic_ipv4.stf"}, "missing.json: no such file"},
		{[]string{filepath.Join(dir, "program.txt"), examples + "basic_ipv4.stf"}, "program.txt: want a .p4 program or its bmv2 .json"},
		{[]string{prog, examples + "basic_ipv4.p4"}, "basic_ipv4.p4: a test must be an .stf file"},
		{[]string{prog, filepath.Join(dir, "missing.stf")}, "missing.stf: no such file"},
		{[]string{prog, filepath.Join(dir, "syntax.stf")}, "syntax.stf:2:8: port: \"zz\" is not a number"},
		{[]string{prog, filepath.Join(dir, "table.stf")}, "table.stf:2: add: no table \"no_such_table\""},
		{[]string{prog, filepath.Join(dir, "action.stf")}, "action.stf:1: add: no action \"no_such_action\""},
		{[]string{prog, filepath.Join(dir, "field.stf")}, "field.stf:1: add: table MyIngress.ipv4_lpm has no key field \"hdr.ipv4.noSuchField\""},
	} {
		out, code := exitCode(t, append([]string{"p4test"}, c.args...)...)
		if code != 1 || !strings.Contains(out, c.want) {
			t.Errorf("grid p4test %s: exit %d, want 1 and a message containing %q; output:\n%s", strings.Join(c.args, " "), code, c.want, out)
		}
	}
}

func TestP4testTargetFlagIsChecked(t *testing.T) {
	out, code := exitCode(t, "p4test", "--target", "tofino", examples+"basic_ipv4.p4", examples+"basic_ipv4.stf")
	if code != 1 || !strings.Contains(out, `grid p4test: --target: unknown target "tofino" (want engine, grid-switch or bmv2)`) {
		t.Errorf("exit %d, output %q", code, out)
	}
	out, code = exitCode(t, "p4test", "--target", "grid-switch", "prog.json", examples+"basic_ipv4.stf")
	if code != 1 || !strings.Contains(out, "prog.json: --target grid-switch loads the program over P4Runtime, which needs its P4Info: give the .p4 source, or --p4info with the .json") {
		t.Errorf("a .json program on grid-switch: exit %d, output %q", code, out)
	}
	out, code = exitCode(t, "p4test", "--target", "grid-switch", "--grace", "-1ms", examples+"basic_ipv4.p4", examples+"basic_ipv4.stf")
	if code != 1 || !strings.Contains(out, "grid p4test: --grace and --packet-timeout are durations of at least 0") {
		t.Errorf("--grace -1ms: exit %d, output %q", code, out)
	}
	out, code = exitCode(t, "p4test", "--p4info", "prog.p4info.txtpb", examples+"basic_ipv4.p4", examples+"basic_ipv4.stf")
	if code != 1 || !strings.Contains(out, "--p4info goes with a .json program") {
		t.Errorf("--p4info with a .p4 program: exit %d, output %q", code, out)
	}
}

// TestP4testRunsOnTheGridSwitch runs an example on `grid switch` (built
// from this tree) in a namespace: the same verdict as on the engine.
func TestP4testRunsOnTheGridSwitch(t *testing.T) {
	targettest.NeedRoot(t)
	bin := targettest.GridBinary(t)
	out, code := exitCode(t, "p4test", "--target", "grid-switch", "--switch", bin, examples+"basic_ipv4.p4", examples+"basic_ipv4.stf")
	if code != 0 || out != "basic_ipv4.stf PASS (8 packets in, 4 out)\n" {
		t.Errorf("exit %d, output %q", code, out)
	}
	// --grace is the wait after each packet: at least that long per packet.
	oneRoute := filepath.Join(t.TempDir(), "one.stf")
	err := os.WriteFile(oneRoute, []byte("add ipv4_lpm hdr.ipv4.dstAddr:0x0a000000/8 ipv4_forward(dstAddr:0x0000000001ff, port:1)\n"+
		"packet 0 000000000001 0000000000aa 0800 4500001c 00010000 401165cb 0a000001 0a000105 0001020304050607\n"+
		"expect 1 0000000001ff 000000000001 0800 4500001c 00010000 3f1166cb 0a000001 0a000105 0001020304050607 $\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, code = exitCode(t, "p4test", "--target", "grid-switch", "--switch", bin, "--grace", "1500ms", examples+"basic_ipv4.p4", oneRoute)
	if took := time.Since(start); code != 0 || took < 1500*time.Millisecond {
		t.Errorf("--grace 1500ms: exit %d after %v, output %q", code, took, out)
	}
	// The compiled program with its P4Info file.
	dir := t.TempDir()
	if out, code := exitCode(t, "p4c", examples+"basic_ipv4.p4", "-o", dir); code != 0 {
		t.Fatalf("grid p4c: exit %d: %s", code, out)
	}
	out, code = exitCode(t, "p4test", "--target", "grid-switch", "--switch", bin, "--p4info", filepath.Join(dir, "basic_ipv4.p4info.txtpb"),
		filepath.Join(dir, "basic_ipv4.json"), examples+"basic_ipv4.stf")
	if code != 0 || out != "basic_ipv4.stf PASS (8 packets in, 4 out)\n" {
		t.Errorf("PROG.json --p4info: exit %d, output %q", code, out)
	}
}

// TestMain builds the grid binary of the grid-switch tests at most once and
// removes it afterwards.
func TestMain(m *testing.M) { targettest.Main(m) }

func TestP4testFailsOnAnEmptyTestFile(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.stf")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := exitCode(t, "p4test", examples+"basic_ipv4.p4", empty)
	if code == 0 || strings.Contains(out, "PASS") || !strings.Contains(out, "FAIL empty.stf: 1 failure(s): nothing tested: 0 command(s)") {
		t.Errorf("exit %d, output %q", code, out)
	}
}
