package p4test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/proto"

	"github.com/grid-ina/grid/harness/stf"
)

func TestSwitchCommandLinesAreSimpleSwitchGRPCs(t *testing.T) {
	grid := RemoteConfig{Kind: GridSwitch, Ports: 3, Switch: "/x/grid"}
	argv, err := grid.switchArgv()
	if err != nil {
		t.Fatal(err)
	}
	want := "/x/grid switch --device-id 1 -i 0@sw0 -i 1@sw1 -i 2@sw2 --no-p4 -- --grpc-server-addr 127.0.0.1:9559"
	if got := strings.Join(argv, " "); got != want {
		t.Errorf("grid switch:\n got %s\nwant %s", got, want)
	}
	bmv2 := RemoteConfig{Kind: Bmv2, Ports: 2, Switch: "/y/simple_switch_grpc", Log: os.Stderr}
	argv, err = bmv2.switchArgv()
	if err != nil {
		t.Fatal(err)
	}
	// bmv2's standard output is line buffered where stdbuf exists, so its
	// word on a refused JSON reaches the log at once.
	want = strings.Join(append(lineBuffered(), "/y/simple_switch_grpc --device-id 1 --thrift-port 9090 -i 0@sw0 -i 1@sw1 --log-console --no-p4 -- --grpc-server-addr 127.0.0.1:9559"), " ")
	if got := strings.Join(argv, " "); got != want {
		t.Errorf("bmv2:\n got %s\nwant %s", got, want)
	}
	if _, err := (&RemoteConfig{Kind: Engine}).switchArgv(); err == nil {
		t.Error("the engine target got a switch command line")
	}
}

func TestParseTargetKindNamesTheKinds(t *testing.T) {
	for _, k := range TargetKinds {
		if got, err := ParseTargetKind(string(k)); err != nil || got != k {
			t.Errorf("ParseTargetKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := ParseTargetKind("tofino"); err == nil || err.Error() != `unknown target "tofino" (want engine, grid-switch or bmv2)` {
		t.Errorf("ParseTargetKind(tofino): %v", err)
	}
}

// fakeP4c puts a p4c-bm2-ss on PATH that records its arguments and writes
// the outputs of the embedded compiler for the same program (or fails as
// told), to check the reference compiler's command line and outputs.
func fakeP4c(t *testing.T, script string) (argsFile string) {
	t.Helper()
	dir := t.TempDir()
	argsFile = filepath.Join(dir, "args")
	if err := os.WriteFile(filepath.Join(dir, P4cCompiler), []byte("#!/bin/sh\necho \"$@\" > "+argsFile+"\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return argsFile
}

func TestCompileWithP4cRunsTheReferenceCompilersCommandLine(t *testing.T) {
	prog, err := CompileEmbedded("../../p4/examples/basic_ipv4.p4", CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	outputs := t.TempDir()
	if err := os.WriteFile(filepath.Join(outputs, "prog.json"), prog.JSON, 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := proto.Marshal(&p4configv1.P4Info{
		PkgInfo: &p4configv1.PkgInfo{Arch: "v1model"},
		Tables:  []*p4configv1.Table{{Preamble: &p4configv1.Preamble{Id: 7, Name: "MyIngress.ipv4_lpm", Alias: "ipv4_lpm"}, Size: 1024}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outputs, "prog.p4info.bin"), info, 0o644); err != nil {
		t.Fatal(err)
	}
	// The script copies the prepared outputs to where -o and
	// --p4runtime-files say. Like p4c before 2024 (control-plane/
	// p4RuntimeSerializer.cpp), it knows the P4Info formats .json, .bin and
	// .txt only, by the file's suffix.
	args := fakeP4c(t, `while [ $# -gt 0 ]; do
  case "$1" in
  -o) cp `+outputs+`/prog.json "$2";;
  --p4runtime-files)
    case "$2" in
    *.bin) cp `+outputs+`/prog.p4info.bin "$2";;
    *) echo "error: $2: Could not detect p4runtime info file format from file suffix" >&2; exit 1;;
    esac;;
  esac
  shift
done
`)
	got, err := CompileWithP4c(context.Background(), "prog.p4", CompileOptions{IncludeDirs: []string{"inc"}, Defines: map[string]string{"B": "2", "A": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	line, err := os.ReadFile(args)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(line))
	if strings.Join(fields[:8], " ") != "--p4v 16 -I inc -D A=1 -D B=2" || fields[8] != "-o" ||
		!strings.HasSuffix(fields[9], "/prog.json") || fields[10] != "--p4runtime-files" ||
		!strings.HasSuffix(fields[11], "/prog.p4info.bin") || fields[12] != "prog.p4" {
		t.Errorf("p4c-bm2-ss %s", line)
	}
	if string(got.JSON) != string(prog.JSON) || got.P4Info.GetTables()[0].GetPreamble().GetName() != "MyIngress.ipv4_lpm" {
		t.Errorf("CompileWithP4c returned %d bytes of JSON and P4Info %v", len(got.JSON), got.P4Info)
	}
	// The temporary output directory is gone.
	if _, err := os.Stat(filepath.Dir(fields[9])); !os.IsNotExist(err) {
		t.Errorf("%s left behind (%v)", filepath.Dir(fields[9]), err)
	}
}

func TestCompileWithP4cQuotesTheCompilersError(t *testing.T) {
	fakeP4c(t, "echo 'prog.p4(3): [--Werror=not-found] error: foo: declaration not found' >&2\nexit 1\n")
	_, err := CompileWithP4c(context.Background(), "prog.p4", CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "prog.p4(3): [--Werror=not-found] error: foo: declaration not found") ||
		!strings.Contains(err.Error(), "p4c-bm2-ss --p4v 16 -o") {
		t.Errorf("err = %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := CompileWithP4c(context.Background(), "prog.p4", CompileOptions{}); err == nil || !strings.Contains(err.Error(), `"p4c-bm2-ss": executable file not found`) ||
		!strings.Contains(err.Error(), "Vagrant VM") {
		t.Errorf("without p4c-bm2-ss: %v", err)
	}
}

func TestPortsNamedCoversPacketsExpectsMulticastAndMirroring(t *testing.T) {
	for text, want := range map[string]int{
		"packet 3 00":                               3,
		"expect 7 00\npacket 1 00":                  7,
		"mc_mgrp_create 1\nmc_node_create 0 2 12 5": 12,
		"mirroring_add 5 9\npacket 0 00":            9,
		"add t k:1 a()":                             0,
	} {
		cmds, err := stf.Parse("test", text)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := portsNamed(cmds); got != want || err != nil {
			t.Errorf("portsNamed(%q) = %d, %v; want %d", text, got, err, want)
		}
	}
	for text, want := range map[string]string{
		"packet 2 00\nmc_node_create 0 99999999999999999999": "test:2: port 99999999999999999999: a switch on veth ports has ports 0 to 511 here",
		"\n\nexpect 600 00": "test:3: port 600: a switch on veth ports has ports 0 to 511 here",
	} {
		cmds, err := stf.Parse("test", text)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := portsNamed(cmds); err == nil || err.Error() != want {
			t.Errorf("portsNamed(%q): %v, want %s", text, err, want)
		}
	}
}

func TestPortsForCoverNamedPortsPortArgumentsAndSpares(t *testing.T) {
	prog, err := CompileEmbedded("../../p4/examples/basic_ipv4.p4", CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]int{
		"packet 3 00":  8, // at least ports 0 to 7
		"expect 10 00": 12,
		"add MyIngress.ipv4_lpm hdr.ipv4.dstAddr:0x0a000100/24 MyIngress.ipv4_forward(dstAddr:0x000000000102, port:20)": 21,
		// by its short name; dstAddr is 48 bits wide, no port
		"setdefault ipv4_lpm ipv4_forward(dstAddr:0x0000000000ff, port:9)\npacket 1 00":              10,
		"add ipv4_lpm hdr.ipv4.dstAddr:0x0a000100/24 ipv4_forward(dstAddr:0x000000000102, port:600)": 8,
		"expect 510 00": 512,
	} {
		cmds, err := stf.Parse("test", text)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := portsFor(cmds, prog.JSON); got != want || err != nil {
			t.Errorf("portsFor(%q) = %d, %v; want %d", text, got, err, want)
		}
	}
}

func TestTheBmv2TargetWaitsLongerForStrayPacketsThanGridSwitch(t *testing.T) {
	for kind, want := range map[TargetKind]time.Duration{GridSwitch: 20 * time.Millisecond, Bmv2: 100 * time.Millisecond} {
		cfg := RemoteConfig{Kind: kind}
		cfg.defaults()
		if cfg.Grace != want {
			t.Errorf("%s: grace %v, want %v", kind, cfg.Grace, want)
		}
		cfg = RemoteConfig{Kind: kind, Grace: time.Second}
		if cfg.defaults(); cfg.Grace != time.Second {
			t.Errorf("%s: a grace of 1s became %v", kind, cfg.Grace)
		}
	}
}
