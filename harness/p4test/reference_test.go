package p4test_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/p4rt/client"
	"github.com/grid-ina/grid/harness/p4test"
	"github.com/grid-ina/grid/harness/p4test/targettest"
	"github.com/grid-ina/grid/harness/stf"
)

// p4cReferenceCases are conformance programs as real p4c-bm2-ss compiled
// them, each with an STF test: the program's own where a veth can carry its
// frames, otherwise the same packets with a payload appended (a veth
// carries no frame shorter than 14 bytes) and register and counter checks
// added.
var p4cReferenceCases = []struct {
	name, why string
	stf       string // "" for the program's own NAME.stf
}{
	{name: "ipv6-switch-ml-bmv2", why: "multicast group of three replicas"},
	{name: "v1model-special-ops-bmv2", why: "clone, resubmit and recirculate with p4c's field lists; multicast"},
	{name: "table-entries-priority-bmv2", why: "ternary const entries whose @priority overrides their order", stf: `
expect 1 01 0001 ** ** ** 0000000000000000 $
packet 0 01 0001 00 00 b0 0000000000000000
# matches the first entry too; the third has the better priority
expect 3 02 1001 ** ** ** 0000000000000000 $
packet 0 02 1001 00 00 b0 0000000000000000
expect 3 03 **** ** ** ** 0000000000000000 $
packet 0 03 1181 00 00 b0 0000000000000000
`},
	{name: "issue1097-2-bmv2", why: "a top-level register written in ingress and egress, read over P4Runtime", stf: `
packet 0 00 17 00 0000000000000000000000
expect 0 00 17 41 0000000000000000000000 $
check_register r(0) == 0x41
packet 0 01 FF 00 0000000000000000000000
expect 0 01 FF 29 0000000000000000000000 $
check_register r(1) == 0x29
check_register r(2) == 0
`},
	{name: "issue1814-1-bmv2", why: "a register written over P4Runtime decides a table hit", stf: `
add IngressImpl.debug_table meta.test:0x0 IngressImpl.forward()
add IngressImpl.debug_table meta.test:0x1 IngressImpl.drop()
packet 1 01010101 01010101 0101010101010101
expect 1 01010101 01010101 0101010101010101 $
register_write IngressImpl.testRegister 0 1
check_register IngressImpl.testRegister(0) == 1
# dropped now: port 1 has a veth, so a forwarded copy would be unexpected
packet 1 02020202 02020202 0202020202020202
`},
	{name: "issue1566-bmv2", why: "an indirect counter of a control instantiated in nested controls", stf: `
packet 0  0000 0000 0000  0000 0000 0000  cafe
expect 0  0000 0000 0000  0000 0000 0000  afe9
check_counter cIngress.E.c1.stats(38397) packets == 1
check_counter cIngress.E.c1.stats(45033) packets == 1
check_counter cIngress.E.c1.stats(0) packets == 0
`},
}

// TestP4cReferenceOutputPassesOnTheGridSwitch loads real p4c's bmv2 JSON
// and P4Info (../shared/p4c-conformance/reference) into grid switch over
// P4Runtime and runs STF tests on it: the half of the real-bmv2 path that
// p4c's output is, met with the driver, client and server that the other
// half is. Each test passes on the engine with grid's own compilation of
// the program too. (The corpus has no program with a direct counter.)
func TestP4cReferenceOutputPassesOnTheGridSwitch(t *testing.T) {
	targettest.NeedRoot(t)
	conformance := repo.SharedOrSkip(t, "p4c-conformance")
	ref := filepath.Join(conformance, "reference")
	if _, err := os.Stat(ref); err != nil {
		t.Skipf("skipped: p4c's reference output is absent: %v", err)
	}
	cfg := p4test.RemoteConfig{Switch: targettest.GridBinary(t)}
	for _, c := range p4cReferenceCases {
		t.Run(c.name, func(t *testing.T) {
			js, err := os.ReadFile(filepath.Join(ref, c.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			info, err := client.LoadP4Info(filepath.Join(ref, c.name+".p4info.txtpb"))
			if err != nil {
				t.Fatal(err)
			}
			text := c.stf
			if text == "" {
				b, err := os.ReadFile(filepath.Join(conformance, "programs", c.name+".stf"))
				if err != nil {
					t.Fatal(err)
				}
				text = string(b)
			}
			cmds, err := stf.Parse(c.name+".stf", text)
			if err != nil {
				t.Fatal(err)
			}
			expects := strings.Count(text, "\nexpect ")
			ownCompilation, err := p4test.CompileEmbedded(filepath.Join(conformance, "programs", c.name+".p4"), p4test.CompileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			onEngine, err := stf.Run(ownCompilation.JSON, cmds, stf.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !onEngine.Passed() {
				t.Fatalf("the test itself is wrong: on the engine with grid's compilation: %s", onEngine.Summary())
			}
			got, err := p4test.RunSTF(context.Background(), p4test.GridSwitch, cfg, p4test.Program{JSON: js, P4Info: info}, cmds, stf.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !got.Passed() || got.Sent == 0 || len(got.Outputs) < expects {
				var report strings.Builder
				got.Report(&report)
				t.Errorf("%s (%s): %s, %d expect lines\n%s", c.name, c.why, got.Summary(), expects, report.String())
			}
		})
	}
}

// onlyOursFailedBefore are the conformance programs where real p4c's JSON
// passed on real bmv2 and grid's once crashed simple_switch_grpc, each
// with the reason (harness/p4c's Because tests pin each fix).
var onlyOursFailedBefore = map[string]string{
	"checksum-l4-bmv2":                 "verify condition wrapped twice",
	"checksum1-bmv2":                   "verify condition wrapped twice",
	"checksum2-bmv2":                   "verify condition wrapped twice",
	"checksum3-bmv2":                   "verify condition wrapped twice",
	"subparser-with-header-stack-bmv2": "verify condition wrapped twice; parser set from a stack_field",
	"gauntlet_index_1-bmv2":            "stack element at a run-time index as a bare destination",
	"gauntlet_index_7-bmv2":            "stack element at a run-time index as a bare destination",
	"gauntlet_index_9-bmv2":            "stack element at a run-time index as a bare destination",
	"opassign2-bmv2":                   "stack element at a run-time index as a bare destination",
	"predication_issue_3":              "stack element at a run-time index as a bare destination",
	"gauntlet_index_5-bmv2":            "copy of an unused inout argument read an out-of-range stack element",
}

// TestConformanceCorpusOnRealBmv2WithBothJSONs runs every program of
// ../shared/p4c-conformance on simple_switch_grpc twice through the same
// driver, over P4Runtime and veth ports: with real p4c's JSON and P4Info
// (reference/) and with grid's compilation. Wherever p4c's JSON passes,
// grid's must pass too: the JSON is the contract, so the embedded compiler
// is a drop-in for p4c-bm2-ss on real bmv2. Programs whose p4c JSON fails
// (frames shorter than 14 bytes, which a veth cannot carry, and programs
// p4c rejects) are listed, not run with grid's JSON.
func TestConformanceCorpusOnRealBmv2WithBothJSONs(t *testing.T) {
	targettest.Bmv2OrSkip(t)
	conformance := repo.SharedOrSkip(t, "p4c-conformance")
	ref := filepath.Join(conformance, "reference")
	progs, err := filepath.Glob(filepath.Join(ref, "*.json"))
	if err != nil || len(progs) == 0 {
		t.Skipf("skipped: p4c's reference output is absent (%v)", err)
	}
	type outcome struct {
		name         string
		theirs, ours string // "" when passed
		ran          bool   // ours ran
	}
	run := func(name string, prog p4test.Program) string {
		text, err := os.ReadFile(filepath.Join(conformance, "programs", name+".stf"))
		if err != nil {
			return err.Error()
		}
		cmds, err := stf.Parse(name+".stf", string(text))
		if err != nil {
			return err.Error()
		}
		got, err := p4test.RunSTF(context.Background(), p4test.Bmv2, p4test.RemoteConfig{}, prog, cmds, stf.Options{})
		if err != nil {
			return err.Error()
		}
		if !got.Passed() {
			return got.Summary()
		}
		return ""
	}
	outcomes := make([]outcome, len(progs))
	work := make(chan int)
	var wg sync.WaitGroup
	// Two at a time: CI has two cores, and a test spends most of its time
	// waiting for packets.
	for range 2 {
		wg.Go(func() {
			for i := range work {
				name := strings.TrimSuffix(filepath.Base(progs[i]), ".json")
				o := outcome{name: name}
				o.theirs = func() string {
					js, err := os.ReadFile(progs[i])
					if err != nil {
						return err.Error()
					}
					info, err := client.LoadP4Info(filepath.Join(ref, name+".p4info.txtpb"))
					if err != nil {
						return err.Error()
					}
					return run(name, p4test.Program{JSON: js, P4Info: info})
				}()
				if o.theirs == "" {
					o.ran = true
					ours, err := p4test.CompileEmbedded(filepath.Join(conformance, "programs", name+".p4"), p4test.CompileOptions{})
					if err != nil {
						o.ours = "compile: " + err.Error()
					} else {
						o.ours = run(name, ours)
					}
				}
				outcomes[i] = o
			}
		})
	}
	for i := range progs {
		work <- i
	}
	close(work)
	wg.Wait()
	passTheirs, passOurs := 0, 0
	var theirsFail []string
	for _, o := range outcomes {
		switch {
		case !o.ran:
			theirsFail = append(theirsFail, o.name)
		case o.ours != "":
			passTheirs++
			why := ""
			if r, ok := onlyOursFailedBefore[o.name]; ok {
				why = " (fixed before: " + r + ")"
			}
			t.Errorf("%s: p4c's JSON passes on real bmv2, grid's does not%s: %s", o.name, why, o.ours)
		default:
			passTheirs++
			passOurs++
		}
	}
	t.Logf("real bmv2: p4c's JSON passes %d of %d programs, grid's passes %d of those %d; p4c's fails on %d: %s",
		passTheirs, len(progs), passOurs, passTheirs, len(theirsFail), strings.Join(theirsFail, " "))
	if passTheirs < 80 {
		t.Errorf("p4c's JSON passes only %d programs on real bmv2, 80 did when this test was written: the driver or the bundle broke", passTheirs)
	}
}

// TestBmv2TargetSaysWhenBmv2RefusesTheJSONItAcceptedOverP4Runtime loads a
// JSON bmv2 refuses (an action parameter inside an expression written as
// "runtime_data"): simple_switch_grpc answers the load with OK and runs on
// without a program, so every entry would fail with "Error when adding
// match entry to target"; the target fails the load instead, quoting
// bmv2's reason.
func TestBmv2TargetSaysWhenBmv2RefusesTheJSONItAcceptedOverP4Runtime(t *testing.T) {
	targettest.Bmv2OrSkip(t)
	prog, err := p4test.CompileEmbedded(filepath.Join(repo.RootOrFail(t), "p4", "examples", "qos_classify.p4"), p4test.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(prog.JSON), `"local"`) {
		t.Fatal("qos_classify's JSON has no action parameter inside an expression to break")
	}
	prog.JSON = []byte(strings.ReplaceAll(string(prog.JSON), `"local"`, `"runtime_data"`))
	r, err := p4test.StartRemote(context.Background(), p4test.RemoteConfig{Kind: p4test.Bmv2, Ports: 3}, prog)
	if err == nil {
		r.Close()
		t.Fatal("the load succeeded")
	}
	for _, want := range []string{"bmv2 refused its JSON", "Invalid 'type' in expression: 'runtime_data'"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
