package stf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grid-ina/grid/harness/internal/repo"
)

// FuzzParse feeds arbitrary text to the parser: it must never panic, every
// error must be positioned, and whatever parses must parse again the same
// way from its String form.
func FuzzParse(f *testing.F) {
	f.Add("add acl 10 k:0x0a&&&0xff a.b(x:1) = H\npacket 0 0a0b\nexpect 1 0a**$\n")
	f.Add("mc_node_create 1 2 3\ncheck_counter c($A) bytes >= 3\nmeter_set_rates m 1 0.5:10")
	f.Add("add t k:0x****/4 act()\nsetdefault t NoAction()\nremove all\nno_packet\nwait")
	var seeds []string
	if dir, err := repo.Shared("p4c-conformance", "programs"); err == nil {
		seeds, _ = filepath.Glob(filepath.Join(dir, "*.stf"))
	}
	for _, s := range seeds[:min(len(seeds), 20)] {
		if cmds, err := ParseFile(s); err == nil {
			var b strings.Builder
			for _, c := range cmds {
				b.WriteString(c.String() + "\n")
			}
			f.Add(b.String())
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		cmds, err := Parse("fuzz.stf", text)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.stf") {
				t.Fatalf("error without a file name: %v", err)
			}
			return
		}
		var b strings.Builder
		for _, c := range cmds {
			b.WriteString(c.String() + "\n")
		}
		again, err := Parse("again.stf", b.String())
		if err != nil {
			t.Fatalf("String form %q does not parse: %v", b.String(), err)
		}
		if len(again) != len(cmds) {
			t.Fatalf("String form has %d commands, original %d", len(again), len(cmds))
		}
		for i := range cmds {
			if again[i].String() != cmds[i].String() {
				t.Fatalf("round trip changed %q into %q", cmds[i].String(), again[i].String())
			}
		}
	})
}

// FuzzRun applies arbitrary STF to the hand-written l2acl program: whatever
// the commands, the runner must report failures, never crash, and the
// engine must not panic (a caught panic is reported as Crashed).
func FuzzRun(f *testing.F) {
	f.Add("add fwd dstAddr:0x02 forward(port:2) = B\npacket 1 000000000002 00000000000a 0800 01\nexpect 2 000000000002\ncheck_counter fwd_hits(B) bytes == 15")
	f.Add("add acl 5 srcAddr:0x0a** etherType:0x0800&&&0xff00 NoAction()\nsetdefault fwd forward(port:511)\npacket 0 00")
	f.Add("register_write last_type 7 0xffff\ncheck_register last_type(7) == 65535\ncounter_write port_in 1 2 3\nremove all")
	f.Add("mc_mgrp_create 1\nmc_node_create 5 1 2\nmc_node_associate 1 0\nmirroring_add 3 4\nmirroring_add_mc 4 1\nwait\nno_packet")
	program, err := os.ReadFile(filepath.Join("testdata", "l2acl.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cmds, err := Parse("fuzz.stf", text)
		if err != nil {
			return
		}
		res, err := Run(program, cmds, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, fail := range res.Failures {
			if fail.Kind == Crashed {
				t.Fatalf("%s", fail.Msg)
			}
		}
		var b strings.Builder
		res.Report(&b)
		_ = res.Summary()
	})
}
