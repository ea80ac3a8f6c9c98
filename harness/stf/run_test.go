package stf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/bmv2json"
)

// testdata/l2acl.json is a hand-written bmv2 JSON program, the equivalent of:
//
//	ingress {
//	    counter port_in(8); register<bit<16>> last_type(8); meter rate(4) (unused);
//	    apply {
//	        port_in.count(ingress_port); last_type.write(ingress_port, hdr.ethernet.etherType);
//	        fwd.apply();  // exact hdr.ethernet.dstAddr: forward(bit<9> port) | drop (default);
//	                      // direct counter fwd_hits
//	        acl.apply();  // ternary hdr.ethernet.srcAddr, hdr.ethernet.etherType: drop | NoAction
//	    }
//	}
func l2acl(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "l2acl.json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// mustPass fails the test with the report of res unless it passed.
func mustPass(t testing.TB, res *Result) {
	t.Helper()
	if !res.Passed() {
		var b strings.Builder
		res.Report(&b)
		t.Fatalf("%s\n%s", res.Summary(), b.String())
	}
}

func runText(t *testing.T, text string) *Result {
	t.Helper()
	return runWith(t, text, Options{})
}

func runWith(t *testing.T, text string, opts Options) *Result {
	t.Helper()
	cmds, err := Parse("t.stf", text)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(l2acl(t), cmds, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

const l2Entries = `
add fwd hdr.ethernet.dstAddr:0x000000000002 forward(port:2) = B
add ingress.fwd dstAddr:0x000000000003 ingress.forward(port:3)
`

func TestRunPassesWhenEveryPacketIsExpected(t *testing.T) {
	res := runText(t, l2Entries+`
packet 1 000000000002 00000000000a 0800 0102
expect 2 000000000002 00000000000a 0800 0102 $
packet 1 000000000003 00000000000a 0800 0304
expect 3 000000000003 ************ 0800
packet 1 000000000009 00000000000a 0800 0506
`)
	mustPass(t, res)
	if res.Sent != 3 || len(res.Outputs) != 2 {
		t.Errorf("sent %d, got %d outputs; want 3 and 2", res.Sent, len(res.Outputs))
	}
	if !strings.HasPrefix(res.Summary(), "PASS") {
		t.Errorf("summary %q", res.Summary())
	}
}

func TestRunReportsMismatchWithMarkedBytes(t *testing.T) {
	res := runText(t, l2Entries+`
packet 1 000000000002 00000000000a 0800 0102
expect 2 000000000002 00000000000a 0800 01ff $
`)
	if len(res.Failures) != 1 || res.Failures[0].Kind != Mismatch {
		t.Fatalf("failures %+v, want one mismatch", res.Failures)
	}
	f := res.Failures[0]
	if f.At.Line != 6 || f.Port != 2 || f.Index != 0 {
		t.Errorf("mismatch located at line %d port %d index %d", f.At.Line, f.Port, f.Index)
	}
	var b strings.Builder
	res.Report(&b)
	report := b.String()
	for _, want := range []string{"t.stf:6: packet #1 on port 2 does not match (sent by the packet at line 5)",
		"expected 0000: 00 00 00 00 00 02 00 00 00 00 00 0A 08 00 01 FF",
		"got      0000: 00 00 00 00 00 02 00 00 00 00 00 0A 08 00 01 02",
		"                   " + strings.Repeat("   ", 15) + "^^\n"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if s := res.Summary(); !strings.Contains(s, "1 byte(s) differ, first at byte 15") {
		t.Errorf("summary %q", s)
	}
}

func TestRunReportsMissingAndUnexpectedPackets(t *testing.T) {
	res := runText(t, l2Entries+`
packet 1 000000000002 00000000000a 0800 0102
expect 3 000000000002 00000000000a 0800 0102
`)
	kinds := map[FailureKind]Failure{}
	for _, f := range res.Failures {
		kinds[f.Kind] = f
	}
	if len(res.Failures) != 2 {
		t.Fatalf("failures %+v, want a missing and an unexpected packet", res.Failures)
	}
	if m, ok := kinds[Missing]; !ok || m.Port != 3 || m.At.Line != 6 {
		t.Errorf("missing packet: %+v", m)
	}
	if u, ok := kinds[Unexpected]; !ok || u.Port != 2 || u.At.Line != 5 {
		t.Errorf("unexpected packet: %+v", u)
	}
	// The missing packet came out on port 2: both failures say so.
	if h := kinds[Missing].Hint; h != "a packet matching it came out on port 2 instead (sent by the packet at line 5)" {
		t.Errorf("missing packet hint %q", h)
	}
	if h := kinds[Unexpected].Hint; h != "it matches the packet expected on port 3 at line 6" {
		t.Errorf("unexpected packet hint %q", h)
	}
}

func TestRunOrdersPacketsPerPortOnly(t *testing.T) {
	res := runText(t, l2Entries+`
packet 1 000000000002 00000000000a 0800 01
packet 1 000000000003 00000000000a 0800 02
packet 1 000000000002 00000000000a 0800 03
expect 3 000000000003 00000000000a 0800 02
expect 2 000000000002 00000000000a 0800 01
expect 2 000000000002 00000000000a 0800 03
`)
	if !res.Passed() {
		t.Errorf("expectations in another order across ports failed: %s", res.Summary())
	}
	swapped := runText(t, l2Entries+`
packet 1 000000000002 00000000000a 0800 01
packet 1 000000000002 00000000000a 0800 03
expect 2 000000000002 00000000000a 0800 03
expect 2 000000000002 00000000000a 0800 01
`)
	if len(swapped.Failures) != 2 {
		t.Errorf("swapped order on one port: %s, want 2 mismatches", swapped.Summary())
	}
}

func TestRunAppliesTernaryPrioritiesHighestFirst(t *testing.T) {
	// Priority 20 (NoAction) beats priority 10 (drop) for srcAddr ...0a.
	res := runText(t, l2Entries+`
add acl 10 srcAddr:0x00000000000a&&&0xffffffffffff ingress.drop()
add acl 20 srcAddr:0x0000000000** etherType:0x0800 NoAction()
packet 1 000000000002 00000000000a 0800 01
expect 2 000000000002 00000000000a 0800 01
packet 1 000000000002 00000000000a 86dd 02
`)
	if !res.Passed() {
		t.Errorf("%s", res.Summary())
	}
}

func TestRunChecksCountersAndRegisters(t *testing.T) {
	res := runText(t, l2Entries+`
packet 1 000000000002 00000000000a 0800 0102
packet 1 000000000002 00000000000a 0806 01020304
packet 4 000000000009 00000000000a 86dd 01
expect 2
check_counter port_in(1) packets == 2
check_counter port_in(1) bytes == 34
check_counter port_in(4) packets == 1
check_counter fwd_hits(B) packets == 2
check_counter fwd_hits($B) bytes > 33
check_register last_type(1) == 0x0806
check_register last_type(4) == 0x86dd
check_register last_type(2) == 0
check_counter port_in(1) packets == 3
check_register last_type(1) != 0x0806
`)
	var failed []int
	for _, f := range res.Failures {
		if f.Kind != CheckFailed {
			t.Errorf("unexpected failure %+v", f)
		}
		failed = append(failed, f.At.Line)
	}
	if len(failed) != 2 || failed[0] != 17 || failed[1] != 18 {
		t.Errorf("failed checks at lines %v, want 17 and 18 (the two false ones)", failed)
	}
	if len(res.Failures) > 0 && !strings.Contains(res.Failures[0].Msg, "packets is 2, expected == 3") {
		t.Errorf("check message %q", res.Failures[0].Msg)
	}
}

func TestRunStopsAtACommandThatCannotApply(t *testing.T) {
	cases := []struct{ line, want string }{
		{"add nosuch k:1 a()", `no table "nosuch" (the program has: tbl_account, ingress.fwd, ingress.acl)`},
		{"add fwd hdr.ethernet.srcAddr:1 forward(port:1)", `table ingress.fwd has no key field "hdr.ethernet.srcAddr" (its keys: hdr.ethernet.dstAddr)`},
		{"add fwd dstAddr:1 forward(prt:1)", `action ingress.forward has no parameter "prt" (its parameters: port)`},
		{"add fwd dstAddr:1 forward()", `action ingress.forward needs parameter port (9 bits)`},
		{"add fwd dstAddr:1 forward(port:512)", `value 0x200 does not fit in 9 bits`},
		{"add fwd dstAddr:1 NoAction()", `no action "NoAction" (table ingress.fwd allows: ingress.forward, ingress.drop)`},
		{"add acl srcAddr:1 NoAction()", `table ingress.acl has ternary or range keys: write a priority`},
		{"add fwd dstAddr:0x0000000000** forward(port:1)", `cannot use '*' digits`},
		{"check_counter fwd_hits(3)", "fwd_hits is a direct counter"},
		{"mc_node_associate 1 0", "multicast group 1 was not created"},
	}
	for _, c := range cases {
		res := runText(t, c.line+"\npacket 1 000000000002 00000000000a 0800 01\nexpect 2 000000000002")
		if len(res.Failures) == 0 || res.Failures[0].Kind != CommandFailed {
			t.Errorf("%q: failures %+v, want a failed command", c.line, res.Failures)
			continue
		}
		if res.Sent != 0 {
			t.Errorf("%q: the run went on after the failed command", c.line)
		}
		if msg := res.Failures[0].Msg; !strings.Contains(msg, c.want) {
			t.Errorf("%q: message %q lacks %q", c.line, msg, c.want)
		}
	}
}

func TestRunSetDefaultAndRemoveAll(t *testing.T) {
	res := runText(t, l2Entries+`
setdefault fwd forward(port:7)
packet 1 000000000009 00000000000a 0800 01
expect 7 000000000009 00000000000a 0800 01
remove all
packet 1 000000000002 00000000000a 0800 02
expect 7 000000000002 00000000000a 0800 02
`)
	mustPass(t, res)
}

func TestRunTracesCommandsAndPackets(t *testing.T) {
	cmds, err := Parse("t.stf", l2Entries+"packet 1 000000000002 00000000000a 0800 01\n")
	if err != nil {
		t.Fatal(err)
	}
	var trace strings.Builder
	if _, err := Run(l2acl(t), cmds, Options{Trace: &trace}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[t.stf:2] add fwd hdr.ethernet.dstAddr:0x000000000002 forward(port:2) = B", "[t.stf:4] packet in on port 1, 15 bytes:", "packet out on port 2, 15 bytes:\n    0000: 00 00 00 00 00 02 00 00 00 00 00 0A 08 00 01"} {
		if !strings.Contains(trace.String(), want) {
			t.Errorf("trace lacks %q:\n%s", want, trace.String())
		}
	}
}

func TestRunRejectsJSONThatIsNotAProgram(t *testing.T) {
	if _, err := Run([]byte(`{"header_types": 3}`), nil, Options{}); err == nil {
		t.Error("Run accepted a broken program")
	}
}

func TestRunBareExpectAcceptsAnyPacketsOnItsPort(t *testing.T) {
	res := runText(t, l2Entries+`
expect 2
packet 1 000000000002 00000000000a 0800 01
packet 1 000000000002 00000000000a 0800 02
`)
	if !res.Passed() {
		t.Errorf("bare expect: %s", res.Summary())
	}
	// A pattern after the bare expect turns checking back on.
	res = runText(t, l2Entries+`
expect 2
packet 1 000000000002 00000000000a 0800 01
packet 1 000000000002 00000000000a 0800 02
expect 2 000000000002 00000000000a 0800 01
`)
	if len(res.Failures) != 1 || res.Failures[0].Kind != Unexpected {
		t.Errorf("pattern after bare expect: %s, want one unexpected packet", res.Summary())
	}
}

func TestRunRejectsOutOfRangeControlPlaneArguments(t *testing.T) {
	for _, line := range []string{"mc_mgrp_create 65536", "mc_node_create 1 4294967296", "mirroring_add 1 99999999999999999999", "check_register last_type(99999999999999999999) == 0"} {
		res := runText(t, line)
		if len(res.Failures) != 1 || res.Failures[0].Kind != CommandFailed || !strings.Contains(res.Failures[0].Msg, "out of range") {
			t.Errorf("%q: %+v", line, res.Failures)
		}
	}
}

func TestMeterConfigWantsCommittedThenPeakRates(t *testing.T) {
	arr := bmv2json.MeterArray{Name: "m", RateCount: 2}
	rates := func(line string) []MeterRate { return mustParse(t, line)[0].(*Direct).Rates }
	cfg, err := meterConfig(arr, rates("meter_array_set_rates m 0.000002:3 0.5:7"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CIR != 2 || cfg.CBurst != 3 || cfg.PIR != 500000 || cfg.PBurst != 7 {
		t.Errorf("config %+v", cfg)
	}
	for line, want := range map[string]string{
		"meter_array_set_rates m 1:1":     "needs two RATE:BURST pairs",
		"meter_array_set_rates m 2:1 1:1": "peak rate 1:1 is below the committed rate 2:1",
	} {
		if _, err := meterConfig(arr, rates(line)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", line, err, want)
		}
	}
}

func TestCompatModeGoesOnAfterRejectedCommandsLikeBmv2stf(t *testing.T) {
	text := l2Entries + `
add fwd dstAddr:0x000000000002 forward(port:4)
add acl srcAddr:0x0a NoAction()
check_counter port_in(1) packets == 5
check_counter port_in(100) packets == 0
packet 1 000000000002 00000000000a 0800 01
expect 2 000000000002 00000000000a 0800 01
`
	strict := runText(t, text)
	if len(strict.Failures) != 1 || strict.Failures[0].Kind != CommandFailed || strict.Failures[0].At.Line != 5 {
		t.Errorf("strict mode: %+v, want the duplicate entry at line 5 to fail the test", strict.Failures)
	}
	compat := runWith(t, text, Options{Compat: true})
	if !compat.Passed() || len(compat.Warnings) != 4 {
		t.Fatalf("compat mode: failures %+v, warnings %+v; want a pass with 4 warnings", compat.Failures, compat.Warnings)
	}
	var b strings.Builder
	compat.Report(&b)
	if !strings.Contains(b.String(), "t.stf:5: warning: add: ") || !strings.Contains(b.String(), "the switch rejected it; the test goes on") {
		t.Errorf("report:\n%s", b.String())
	}
	// Unknown names stop the test in both modes, as they stop bmv2stf.py.
	if res := runWith(t, "add nosuch k:1 a()\npacket 1 000000000002 00000000000a 0800 01\n", Options{Compat: true}); res.Passed() || res.Sent != 0 {
		t.Errorf("compat mode went on after an unknown table: %+v", res)
	}
}

func TestCompatModeIgnoresPortsTheTestNeverNames(t *testing.T) {
	// Port 7 appears in no packet or expect line: simple_switch under
	// bmv2stf.py would have no interface for it.
	text := l2Entries + `
add fwd dstAddr:0x000000000007 forward(port:7)
packet 1 000000000007 00000000000a 0800 01
`
	strict := runText(t, text)
	if len(strict.Failures) != 1 || strict.Failures[0].Kind != Unexpected || strict.Failures[0].Port != 7 {
		t.Errorf("strict mode: %+v, want the packet on port 7 reported", strict.Failures)
	}
	compat := runWith(t, text, Options{Compat: true})
	if !compat.Passed() || len(compat.Warnings) != 1 || !strings.Contains(compat.Warnings[0].Msg, "no such interface") {
		t.Errorf("compat mode: failures %+v, warnings %+v", compat.Failures, compat.Warnings)
	}
}

func TestReportShowsMissingPacketsAsRows(t *testing.T) {
	res := runText(t, l2Entries+"expect 5 000000000005 ****** 0800 $\n")
	var b strings.Builder
	res.Report(&b)
	want := "t.stf:4: expected packet #1 on port 5 never came out\n" +
		"    0000: 00 00 00 00 00 05 ** ** ** 08 00\n" +
		"    (ends here: '$')\n"
	if b.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestTraceShowsRegisterAndCounterReads(t *testing.T) {
	cmds, err := Parse("t.stf", l2Entries+`
packet 3 000000000002 00000000000a 88b5 01
expect 2
register_read last_type 3
counter_read port_in 3
meter_set_rates rate 2 0.000001:2 0.000003:4
meter_get_rates rate 1
meter_get_rates rate 2
`)
	if err != nil {
		t.Fatal(err)
	}
	var trace strings.Builder
	res, err := Run(l2acl(t), cmds, Options{Trace: &trace})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed() {
		t.Fatalf("%s", res.Summary())
	}
	for _, want := range []string{"ingress.last_type[3] = 0x88b5", "ingress.port_in[3] = 1 packets, 15 bytes", "ingress.rate[1] is not configured", "ingress.rate[2]: committed 1/s burst 2, peak 3/s burst 4"} {
		if !strings.Contains(trace.String(), want) {
			t.Errorf("trace lacks %q:\n%s", want, trace.String())
		}
	}
}

func TestATestThatSendsAndChecksNothingFails(t *testing.T) {
	program, err := os.ReadFile(filepath.Join("testdata", "l2acl.json"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(text string) *Result {
		t.Helper()
		cmds, err := Parse("t.stf", text)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(program, cmds, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, text := range []string{"", "# only a comment\n", "setdefault fwd forward(port:2)\nwait\n"} {
		if res := run(text); res.Passed() || res.Failures[0].Kind != NothingTested || !strings.HasPrefix(res.Summary(), "1 failure(s): nothing tested") {
			t.Errorf("%q: %s", text, res.Summary())
		}
	}
	for _, text := range []string{"packet 1 000000000002 00000000000a 0800 01\n", "no_packet\n", "check_counter fwd_hits(B) packets == 0\n"} {
		for _, f := range run(text).Failures {
			if f.Kind == NothingTested {
				t.Errorf("%q tests something, yet: %s", text, f.Msg)
			}
		}
	}
}
