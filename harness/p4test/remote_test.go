package p4test_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/p4test"
	"github.com/grid-ina/grid/harness/p4test/targettest"
	"github.com/grid-ina/grid/harness/stf"
)

// examples lists p4/examples/NAME.p4 with their NAME.stf.
func examples(t *testing.T) []string {
	t.Helper()
	progs, err := filepath.Glob(filepath.Join(repo.RootOrFail(t), "p4", "examples", "*.p4"))
	if err != nil || len(progs) < 10 {
		t.Fatalf("p4/examples: %d programs (%v)", len(progs), err)
	}
	return progs
}

// runExample runs an example's STF file on a target and returns the
// result.
func runExample(t *testing.T, kind p4test.TargetKind, cfg p4test.RemoteConfig, prog string, stfText string) *stf.Result {
	t.Helper()
	ctx := context.Background()
	compiled, err := p4test.CompileFor(ctx, kind, prog, p4test.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := stf.Parse(filepath.Base(prog), stfText)
	if err != nil {
		t.Fatal(err)
	}
	result, err := p4test.RunSTF(ctx, kind, cfg, compiled, cmds, stf.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return result
}

func readSTF(t *testing.T, prog string) string {
	t.Helper()
	text, err := os.ReadFile(strings.TrimSuffix(prog, ".p4") + ".stf")
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// checkExamples runs every example on a target and compares each result
// with the engine's: same packets in, same packets out, all passing.
func checkExamples(t *testing.T, kind p4test.TargetKind, cfg p4test.RemoteConfig) {
	for _, prog := range examples(t) {
		name := strings.TrimSuffix(filepath.Base(prog), ".p4")
		t.Run(name, func(t *testing.T) {
			if kind == p4test.Bmv2 {
				// Two at a time: bmv2's tests mostly wait (its grace after
				// each packet, its Thrift CLI), and CI has two cores.
				t.Parallel()
			}
			text := readSTF(t, prog)
			want := runExample(t, p4test.Engine, p4test.RemoteConfig{}, prog, text)
			got := runExample(t, kind, cfg, prog, text)
			if !got.Passed() {
				var report strings.Builder
				got.Report(&report)
				t.Fatalf("%s\n%s", got.Summary(), report.String())
			}
			if got.Sent != want.Sent || len(got.Outputs) != len(want.Outputs) {
				t.Errorf("%s: %s; the engine: %s", kind, got.Summary(), want.Summary())
			}
		})
	}
}

// TestExamplesPassOnTheGridSwitch runs p4/examples (ternary priorities,
// clones, multicast, counters, meters, registers, recirculation) on `grid
// switch` in a namespace, everything loaded over P4Runtime.
func TestExamplesPassOnTheGridSwitch(t *testing.T) {
	targettest.NeedRoot(t)
	checkExamples(t, p4test.GridSwitch, p4test.RemoteConfig{Switch: targettest.GridBinary(t)})
}

// TestExamplesOnRealBmv2 runs the same examples on simple_switch_grpc with
// p4c-bm2-ss's compilation, where they are installed.
func TestExamplesOnRealBmv2(t *testing.T) {
	targettest.Bmv2OrSkip(t)
	checkExamples(t, p4test.Bmv2, p4test.RemoteConfig{})
}

// TestExamplesOnRealBmv2WithGridsJSON runs the examples on
// simple_switch_grpc with grid's compilation in place of p4c-bm2-ss's: the
// JSON is the contract, so each passes as with p4c's (qos_classify's
// optional keys and its action parameter inside an expression once made
// bmv2 refuse every entry).
func TestExamplesOnRealBmv2WithGridsJSON(t *testing.T) {
	targettest.Bmv2OrSkip(t)
	for _, prog := range examples(t) {
		name := strings.TrimSuffix(filepath.Base(prog), ".p4")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			compiled, err := p4test.CompileEmbedded(prog, p4test.CompileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cmds, err := stf.Parse(name+".stf", readSTF(t, prog))
			if err != nil {
				t.Fatal(err)
			}
			got, err := p4test.RunSTF(context.Background(), p4test.Bmv2, p4test.RemoteConfig{}, compiled, cmds, stf.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !got.Passed() {
				var report strings.Builder
				got.Report(&report)
				t.Fatalf("%s\n%s", got.Summary(), report.String())
			}
		})
	}
}

// TestRemoteTargetReportsWrongMissingAndUnexpectedPackets breaks the
// basic_ipv4 test three ways and checks the failures name the lines, and
// that a missing packet costs the quiet period, not the packet timeout.
func TestRemoteTargetReportsWrongMissingAndUnexpectedPackets(t *testing.T) {
	targettest.NeedRoot(t)
	cfg := p4test.RemoteConfig{Switch: targettest.GridBinary(t), PacketTimeout: time.Minute}
	prog := filepath.Join(repo.RootOrFail(t), "p4", "examples", "basic_ipv4.p4")
	text := readSTF(t, prog)
	lines := strings.Split(text, "\n")
	var expects []int
	for i, l := range lines {
		if strings.HasPrefix(l, "expect ") {
			expects = append(expects, i)
		}
	}
	if len(expects) < 3 {
		t.Fatalf("basic_ipv4.stf has %d expect lines", len(expects))
	}
	// The first expect wants another port, the second wants other bytes.
	first := strings.Fields(lines[expects[0]])
	wrongPort := first[1] + "9"
	lines[expects[0]] = strings.Join(append([]string{"expect", wrongPort}, first[2:]...), " ")
	second := strings.Fields(lines[expects[1]])
	second[2] = "ff" + second[2][2:]
	lines[expects[1]] = strings.Join(second, " ")
	start := time.Now()
	result := runExample(t, p4test.GridSwitch, cfg, prog, strings.Join(lines, "\n"))
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the run took %v: a missing packet must not wait for the whole packet timeout", took)
	}
	kinds := map[stf.FailureKind][]int{}
	for _, f := range result.Failures {
		kinds[f.Kind] = append(kinds[f.Kind], f.At.Line)
	}
	if len(kinds[stf.Missing]) != 1 || kinds[stf.Missing][0] != expects[0]+1 {
		t.Errorf("missing: lines %v, want line %d (expects port %s)", kinds[stf.Missing], expects[0]+1, wrongPort)
	}
	if len(kinds[stf.Mismatch]) != 1 || kinds[stf.Mismatch][0] != expects[1]+1 {
		t.Errorf("mismatch: lines %v, want line %d", kinds[stf.Mismatch], expects[1]+1)
	}
	if len(kinds[stf.Unexpected]) != 1 {
		t.Errorf("unexpected: lines %v, want the packet that went to port %s instead", kinds[stf.Unexpected], first[1])
	}
	if len(result.Failures) != 3 {
		t.Errorf("%d failures: %s", len(result.Failures), result.Summary())
	}
}

// TestSwitchThatCannotStartLeavesNothingBehind starts a "switch" that
// exits at once: the error quotes its output, and no namespace of this
// process remains.
func TestSwitchThatCannotStartLeavesNothingBehind(t *testing.T) {
	targettest.NeedRoot(t)
	fake := filepath.Join(t.TempDir(), "grid")
	script := "#!/bin/sh\necho 'grid switch: cannot attach port 0 to sw0: no such device' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := p4test.StartRemote(context.Background(), p4test.RemoteConfig{Kind: p4test.GridSwitch, Ports: 2, Switch: fake}, p4test.Program{})
	if err == nil || !strings.Contains(err.Error(), "grid exited before it listened on 127.0.0.1:9559 (exit status 1)") ||
		!strings.Contains(err.Error(), "cannot attach port 0 to sw0") {
		t.Errorf("StartRemote: %v", err)
	}
	left, _ := filepath.Glob("/run/netns/" + p4test.NamespacePrefix + strconv.Itoa(os.Getpid()) + "-*")
	if len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestBmv2TargetDrivesItsSwitchAndCLIAsBmv2Wants runs the bmv2 target with
// stand-ins for the two bmv2 programs, to exercise the bmv2 path where
// bmv2 is not installed: "simple_switch_grpc" is grid switch, which takes
// bmv2's command line as it is (the script checks its Thrift port), and
// "simple_switch_CLI" records its command line, its standard input and the
// interfaces of its network namespace, and answers register_read in
// simple_switch_CLI's format. The bmv2 target must start the switch with
// bmv2's command line, load the program over P4Runtime, and read and write
// registers through the CLI inside the switch's namespace.
func TestBmv2TargetDrivesItsSwitchAndCLIAsBmv2Wants(t *testing.T) {
	targettest.NeedRoot(t)
	grid := targettest.GridBinary(t)
	dir := t.TempDir()
	switchScript := `#!/bin/sh
case " $* " in *" --thrift-port 9090 "*) ;; *) echo "no --thrift-port 9090 in: $*" >&2; exit 2;; esac
exec ` + grid + ` switch "$@"
`
	cliScript := `#!/bin/sh
echo "$@" > ` + dir + `/cli.args
cat > ` + dir + `/cli.stdin
cat /proc/self/net/dev > ` + dir + `/cli.net
echo "Obtaining JSON from switch..."
echo "Done"
echo "Control utility for runtime P4 table manipulation"
read -r cmd name index < ` + dir + `/cli.stdin
if [ "$cmd" = register_read ]; then echo "RuntimeCmd: $name[$index]= 4242"; else echo "RuntimeCmd: "; fi
echo "RuntimeCmd: "
`
	for name, text := range map[string]string{p4test.SimpleSwitchGRPC: switchScript, p4test.SimpleSwitchCLI: cliScript} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	prog, err := p4test.CompileEmbedded(filepath.Join(repo.RootOrFail(t), "p4", "examples", "registers.p4"), p4test.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	register := prog.P4Info.GetRegisters()[0].GetPreamble().GetName()
	r, err := p4test.StartRemote(context.Background(), p4test.RemoteConfig{Kind: p4test.Bmv2, Ports: 2}, prog)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}()
	v, err := r.ReadRegister(register, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 2 || v[0] != 0x10 || v[1] != 0x92 {
		t.Errorf("register value %x, want 4242 = 0x1092", v)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read("cli.args"); got != "--thrift-ip 127.0.0.1 --thrift-port 9090\n" {
		t.Errorf("simple_switch_CLI %q", got)
	}
	if got := read("cli.stdin"); got != "register_read "+register+" 3\n" {
		t.Errorf("simple_switch_CLI's input %q", got)
	}
	if net := read("cli.net"); !strings.Contains(net, "sw1:") || !strings.Contains(net, "h1:") {
		t.Errorf("simple_switch_CLI did not run in the switch's namespace; it saw:\n%s", net)
	}
	if err := r.WriteRegister(register, 5, []byte{0x01, 0x00}); err != nil {
		t.Fatal(err)
	}
	if got := read("cli.stdin"); got != "register_write "+register+" 5 256\n" {
		t.Errorf("simple_switch_CLI's input for a write %q", got)
	}
	if err := r.ResetRegister(register); err != nil {
		t.Fatal(err)
	}
	if got := read("cli.stdin"); got != "register_reset "+register+"\n" {
		t.Errorf("simple_switch_CLI's input for a reset %q", got)
	}
}

// TestSwitchThatDiesMidTestFailsTheCommandThatFoundOut runs a switch that
// dies one second in: the next command fails naming the exit and quoting
// the switch's output, and the test stops there.
func TestSwitchThatDiesMidTestFailsTheCommandThatFoundOut(t *testing.T) {
	targettest.NeedRoot(t)
	grid := targettest.GridBinary(t)
	dying := filepath.Join(t.TempDir(), "grid")
	script := "#!/bin/sh\n" + grid + " \"$@\" &\nsleep 1\nkill -9 $!\necho 'switch killed' >&2\nexit 3\n"
	if err := os.WriteFile(dying, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(repo.RootOrFail(t), "p4", "examples", "basic_ipv4.p4")
	text := "add ipv4_lpm hdr.ipv4.dstAddr:0x0a000100/24 ipv4_forward(dstAddr:0x000000000102, port:2)\n" +
		"advance_clock 1500ms\n" +
		"packet 0 000000000001 0000000000aa 0800 4500001c0000000040110000 0a000001 0a000105 0000000000080000\n"
	result := runExample(t, p4test.GridSwitch, p4test.RemoteConfig{Switch: dying}, prog, text)
	if len(result.Failures) != 1 {
		var report strings.Builder
		result.Report(&report)
		t.Fatalf("%d failures:\n%s", len(result.Failures), report.String())
	}
	f := result.Failures[0]
	if f.Kind != stf.CommandFailed || f.At.Line != 3 || !strings.Contains(f.Msg, "grid exited (exit status 3)") || !strings.Contains(f.Msg, "switch killed") {
		t.Errorf("failure at line %d: %s", f.At.Line, f.Msg)
	}
}

// TestP4cConformanceFilesPassOnTheGridSwitch runs a sample of p4c's own
// STF tests (expect lines before their packet in match-on-exprs; header
// validity, parser errors, many packets in the others) on grid switch: the
// same verdict as the engine's.
func TestP4cConformanceFilesPassOnTheGridSwitch(t *testing.T) {
	targettest.NeedRoot(t)
	dir := repo.SharedOrSkip(t, "p4c-conformance", "programs")
	cfg := p4test.RemoteConfig{Switch: targettest.GridBinary(t)}
	for _, name := range []string{"match-on-exprs-bmv2", "issue-2123-3-bmv2", "issue1000-bmv2", "gauntlet_hdr_set_valid-bmv2", "test-parserinvalidargument-error-bmv2"} {
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join(dir, name+".stf"))
			if err != nil {
				t.Fatal(err)
			}
			got := runExample(t, p4test.GridSwitch, cfg, filepath.Join(dir, name+".p4"), string(text))
			if !got.Passed() || got.Sent == 0 {
				var report strings.Builder
				got.Report(&report)
				t.Errorf("%s\n%s", got.Summary(), report.String())
			}
		})
	}
}

// TestAPacketToAPortTheTestNeverNamesFailsOnTheGridSwitchAsOnTheEngine
// sends packets to a port no packet or expect line names: port 20, which
// only a table entry names (it gets a veth, so the packet is unexpected, as
// on the engine), and port 100, which the program takes from the frame (no
// veth: grid switch's count of such packets fails the test).
func TestAPacketToAPortTheTestNeverNamesFailsOnTheGridSwitchAsOnTheEngine(t *testing.T) {
	targettest.NeedRoot(t)
	cfg := p4test.RemoteConfig{Switch: targettest.GridBinary(t)}
	root := repo.RootOrFail(t)
	for _, c := range []struct {
		name, prog, stf string
		port            int
		msg             string // of the grid switch's failure; "" for an unexpected packet
	}{
		{name: "entry", prog: filepath.Join(root, "p4", "aggregator", "aggregator.p4"), port: 20, stf: `
add GridIngress.ipv4_lpm hdr.ipv4.dstAddr:0x0a000064/32 GridIngress.forward(dmac:0x020000000000, port:0x014)
packet 0 02AA000000000200000000010800 4500001C0000000040110000 0A000101 0A000064 1234567800080000
`},
		{name: "frame", prog: "testdata/port_from_frame.p4", port: 100, stf: `
packet 0 000000000064 0000000000aa 88b5 0001020304050607
`, msg: "1 packet(s) sent to port 100, which has no veth"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, kind := range []p4test.TargetKind{p4test.Engine, p4test.GridSwitch} {
				got := runExample(t, kind, cfg, c.prog, c.stf)
				if len(got.Failures) != 1 {
					t.Fatalf("%s: %s, want one failure", kind, got.Summary())
				}
				f := got.Failures[0]
				if kind == p4test.Engine || c.msg == "" {
					if f.Kind != stf.Unexpected || f.Port != c.port {
						t.Errorf("%s: %s, want an unexpected packet on port %d", kind, got.Summary(), c.port)
					}
					continue
				}
				if f.Port != c.port || !strings.Contains(f.Msg, c.msg) {
					t.Errorf("%s: %s, want %q", kind, got.Summary(), c.msg)
				}
			}
		})
	}
}
