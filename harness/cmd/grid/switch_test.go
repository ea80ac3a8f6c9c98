package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/dataplane/nstest"
	"github.com/grid-ina/grid/harness/p4c"
)

func TestSwitchRejectsBadCommandLinesWithExitTwo(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give PROGRAM.json or --no-p4, as simple_switch_grpc wants one of them"},
		{[]string{"a.json", "--no-p4"}, "give PROGRAM.json or --no-p4, not both"},
		{[]string{"a.json", "b.json"}, "one program at most, not a.json b.json"},
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"--pcap", "--no-p4"}, "--pcap --no-p4: want a directory (for the current one, --pcap .)"},
		{[]string{"--no-p4", "-i", "0sw0"}, "-i 0sw0: want PORT@INTERFACE, e.g. 0@sw0"},
		{[]string{"--no-p4", "-i", "x@sw0"}, "-i x@sw0: want PORT@INTERFACE"},
		{[]string{"--no-p4", "-i", "0@a", "-i", "0@b"}, "-i 0@b: port 0 is given twice"},
		{[]string{"--no-p4", "-i", "0@a", "-i", "1@a"}, "-i 1@a: interface a is given twice"},
		{[]string{"--no-p4", "-i", "0@a", "--delay", "1=5ms"}, "--delay 1=5ms: port 1 has no interface (-i 1@INTERFACE)"},
		{[]string{"--no-p4", "-i", "0@a", "--delay", "0=5"}, `--delay 0=5: time: missing unit in duration "5"`},
		{[]string{"--no-p4", "-i", "0@a", "--delay", "0=-1ms"}, "--delay 0=-1ms: -1ms is negative"},
		{[]string{"--no-p4", "-i", "0@a", "--delay", "0=1ms", "--delay", "0=2ms"}, "--delay 0=2ms: port 0 is given twice"},
		{[]string{"--no-p4", "-i", "0@a", "--loss", "0=1.5"}, `--loss 0=1.5: "1.5" is not a fraction between 0 and 1`},
		{[]string{"--no-p4", "-i", "0@a", "--loss", "0"}, "--loss 0: want PORT=VALUE"},
		{[]string{"--no-p4", "--", "--thrift-port", "9090"}, "after '--': flag provided but not defined: -thrift-port (grid switch has --grpc-server-addr HOST:PORT, --cpu-port N"},
		{[]string{"p.json", "--", "--cpu-port", "512"}, "after '--': --cpu-port 512: v1model ports are 9 bits"},
		{[]string{"--no-p4", "-i", "64@a", "--", "--cpu-port", "64"}, "port 64 is the CPU port (--cpu-port) and cannot have an interface (-i 64@a)"},
		{[]string{"--no-p4", "--", "--cpu-port", "0"}, "after '--': --cpu-port 0: 0 is not a valid value (leave --cpu-port out for no CPU port)"},
		{[]string{"--no-p4", "--thrift-port", "0"}, "--thrift-port 0: not a TCP port"},
		{[]string{"--no-p4", "-L", "loud"}, "--log-level loud: want trace, debug, info, warn, error or off"},
		{[]string{"--no-p4", "--", "--priority-queues", "9"}, "after '--': --priority-queues 9: want 1 to 8, as simple_switch"},
		{[]string{"--no-p4", "--", "--drop-port", "0"}, "after '--': --drop-port 0: grid switch drops on port 511"},
	} {
		out, code := exitCode(t, append([]string{"switch"}, tc.args...)...)
		if code != 2 || !strings.Contains(out, "grid switch: "+tc.want) || !strings.Contains(out, "see grid switch --help") {
			t.Errorf("grid switch %s: exit %d, output %q; want exit 2 and %q", strings.Join(tc.args, " "), code, out, tc.want)
		}
	}
}

func TestSwitchPortsTakeTheirDelayAndLoss(t *testing.T) {
	specs, err := switchPorts([]string{"0@sw0", "7@sw7", "1@sw1"}, []string{"1=2ms", "7=1.5s"}, []string{"0=0.25", "1=1"}, []string{"7=512Kbps"})
	if err != nil {
		t.Fatal(err)
	}
	want := []dataplane.PortSpec{
		{Port: 0, Interface: "sw0", Loss: 0.25},
		{Port: 7, Interface: "sw7", Delay: 1500 * time.Millisecond, Rate: 512e3},
		{Port: 1, Interface: "sw1", Delay: 2 * time.Millisecond, Loss: 1},
	}
	if !reflect.DeepEqual(specs, want) {
		t.Errorf("got %+v\nwant %+v", specs, want)
	}
}

func TestSwitchProgramThatDoesNotExistIsNamed(t *testing.T) {
	out, code := exitCode(t, "switch", filepath.Join(t.TempDir(), "missing.json"))
	if code != 1 || !strings.Contains(out, "missing.json: no such file") {
		t.Errorf("exit %d, output %q", code, out)
	}
}

// startSwitchCommand runs the grid binary's switch command inside n (in
// the test's own namespace when n is nil) and returns the P4Runtime address from its ready line and its standard error.
func startSwitchCommand(t *testing.T, n *nstest.Net, bin string, args ...string) (*exec.Cmd, string, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"switch"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := cmd.Start
	if n != nil {
		start = func() error { return n.Start(cmd) }
	}
	if err := start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
		// Keep reading so the switch never blocks on a full pipe.
		io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-ready:
		m := regexp.MustCompile(`^grid switch: listening on (\S+), ports (.*)\n$`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("ready line %q; standard error:\n%s", line, stderr.String())
		}
		return cmd, m[1], &stderr
	case <-time.After(20 * time.Second):
		t.Fatalf("no ready line within 20 s; standard error:\n%s", stderr.String())
	}
	return nil, "", nil
}

func TestSwitchCommandForwardsAFrameByAnEntryWrittenOverP4Runtime(t *testing.T) {
	n := nstest.New(t)
	n.Veth("sw0", "h0")
	n.Veth("sw1", "h1")
	bin := buildGrid(t)
	pcaps := t.TempDir()
	cmd, addr, stderr := startSwitchCommand(t, n, bin, "--device-id", "3", "-i", "0@sw0", "-i", "1@sw1", "--pcap", pcaps,
		"--no-p4", "--", "--grpc-server-addr", "127.0.0.1:0")

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return n.DialContext(ctx, a) }))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rt := p4v1.NewP4RuntimeClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stream, err := rt.StreamChannel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	election := &p4v1.Uint128{Low: 1}
	err = stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
		Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: 3, ElectionId: election}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if arb := resp.GetArbitration(); arb == nil || arb.Status.GetCode() != 0 {
		t.Fatalf("arbitration answered %v, want OK", resp)
	}

	prog, err := p4c.Compile(filepath.Join(examples, "basic_ipv4.p4"), p4c.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rt.SetForwardingPipelineConfig(ctx, &p4v1.SetForwardingPipelineConfigRequest{
		DeviceId: 3, ElectionId: election, Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		Config: &p4v1.ForwardingPipelineConfig{P4Info: prog.P4Info, P4DeviceConfig: prog.JSON}})
	if err != nil {
		t.Fatal(err)
	}
	table, action := named(t, prog.P4Info.Tables, "MyIngress.ipv4_lpm"), named(t, prog.P4Info.Actions, "MyIngress.ipv4_forward")
	entry := &p4v1.TableEntry{
		TableId: table.Preamble.Id,
		Match: []*p4v1.FieldMatch{{FieldId: table.MatchFields[0].Id,
			FieldMatchType: &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: []byte{10, 0, 1, 0}, PrefixLen: 24}}}},
		Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{ActionId: action.Preamble.Id,
			Params: []*p4v1.Action_Param{{ParamId: action.Params[0].Id, Value: []byte{0x01, 0x02}}, {ParamId: action.Params[1].Id, Value: []byte{1}}}}}},
	}
	_, err = rt.Write(ctx, &p4v1.WriteRequest{DeviceId: 3, ElectionId: election, Updates: []*p4v1.Update{
		{Type: p4v1.Update_INSERT, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: entry}}}}})
	if err != nil {
		t.Fatal(err)
	}

	h0, h1 := n.Socket("h0"), n.Socket("h1")
	in := mustHexFrame(t, "000000000001 0000000000aa 0800 4500001c 00010000 401165cb 0a000001 0a000105 0001020304050607")
	want := mustHexFrame(t, "000000000102 000000000001 0800 4500001c 00010000 3f1166cb 0a000001 0a000105 0001020304050607")
	if err := h0.Send(in); err != nil {
		t.Fatal(err)
	}
	if got := nstest.Receive(t, h1, 1, 5*time.Second); len(got) != 1 || !bytes.Equal(got[0], want) {
		t.Fatalf("h1 received %x, want %x; switch log:\n%s", got, want, stderr.String())
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("grid switch after SIGTERM: %v; standard error:\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("grid switch still runs 10 s after SIGTERM")
	}
	if !regexp.MustCompile(`port=1@sw1 rx_frames=0 rx_bytes=0 tx_frames=1 tx_bytes=42 `).MatchString(stderr.String()) {
		t.Errorf("the exit log does not show port 1's counters (1 frame of 42 bytes sent):\n%s", stderr.String())
	}
	if info, err := os.Stat(filepath.Join(pcaps, "sw1_out.pcap")); err != nil || info.Size() != 24+16+42 {
		t.Errorf("sw1_out.pcap should hold the file header and one 42-byte frame: %v, %v", info, err)
	}
}

func mustHexFrame(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// named returns the entity of a P4Info list (tables, actions) called name.
func named[T interface{ GetPreamble() *p4configv1.Preamble }](t *testing.T, entities []T, name string) T {
	t.Helper()
	for _, e := range entities {
		if e.GetPreamble().GetName() == name {
			return e
		}
	}
	t.Fatalf("P4Info has no %s", name)
	var none T
	return none
}

// port0ToPort1JSON compiles the data plane's port0_to_port1 test program
// (every frame from port 0 leaves on port 1) and returns its bmv2 JSON file.
func port0ToPort1JSON(t *testing.T) string {
	t.Helper()
	res, err := p4c.Compile("../../dataplane/testdata/port0_to_port1.p4", p4c.Options{})
	if err != nil {
		t.Fatal(err)
	}
	program := filepath.Join(t.TempDir(), "port0_to_port1.json")
	if err := os.WriteFile(program, res.JSON, 0o644); err != nil {
		t.Fatal(err)
	}
	return program
}

func TestSwitchCommandRunsItsProgramWithDelayAndLogsEveryFrame(t *testing.T) {
	n := nstest.New(t)
	n.Veth("sw0", "h0")
	n.Veth("sw1", "h1")
	bin := buildGrid(t)
	program := port0ToPort1JSON(t)
	const delay = 100 * time.Millisecond
	cmd, _, stderr := startSwitchCommand(t, n, bin, "-i", "0@sw0", "-i", "1@sw1", "--log-console", program,
		"--delay", "1="+delay.String(), "--", "--grpc-server-addr", "127.0.0.1:0")

	h0, h1 := n.Socket("h0"), n.Socket("h1")
	frame := mustHexFrame(t, "0200000000aa 0200000000bb 88b5 00010203040506070809")
	sent := time.Now()
	if err := h0.Send(frame); err != nil {
		t.Fatal(err)
	}
	got := nstest.Receive(t, h1, 1, 5*time.Second)
	if len(got) != 1 || !bytes.Equal(got[0], frame) {
		t.Fatalf("the program forwards port 0 to port 1: h1 received %x; switch log:\n%s", got, stderr.String())
	}
	if held := time.Since(sent); held < delay {
		t.Errorf("the frame arrived %v after it was sent; port 1 delays by %v", held, delay)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("grid switch after SIGINT: %v", err)
	}
	log := stderr.String()
	for _, want := range []string{
		`msg="frame received" port=0 interface=sw0 bytes=24`,
		`msg="frame sent" port=1 interface=sw1 bytes=24`,
		"Parser", // the engine's per-packet trace
	} {
		if !strings.Contains(log, want) {
			t.Errorf("--log-console output lacks %q:\n%s", want, log)
		}
	}
}

func TestSwitchCommandAsAnUnprivilegedUserSaysItNeedsRoot(t *testing.T) {
	nstest.NeedRoot(t)
	bin := buildGrid(t)
	cmd := exec.Command(bin, "switch", "-i", "0@lo", "--no-p4", "--", "--grpc-server-addr", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("grid switch as nobody: %v\n%s", err, out)
	}
	want := "grid switch: port 0@lo: interface lo: open packet socket: operation not permitted (needs root or CAP_NET_RAW)\n"
	if string(out) != want {
		t.Errorf("output %q, want %q", out, want)
	}
}

func TestSwitchCommandWarnsAsItExitsOfFramesSentToAPortWithoutAnInterface(t *testing.T) {
	n := nstest.New(t)
	n.Veth("sw0", "h0")
	bin := buildGrid(t)
	program := port0ToPort1JSON(t)
	// Port 1, where the program sends everything, has no interface.
	pcaps := t.TempDir()
	cmd, _, stderr := startSwitchCommand(t, n, bin, "-i", "0@sw0", "--pcap", pcaps, program, "--", "--grpc-server-addr", "127.0.0.1:0")
	h0 := n.Socket("h0")
	frame := mustHexFrame(t, "0200000000aa 0200000000bb 88b5 00010203040506070809")
	for range 3 {
		if err := h0.Send(frame); err != nil {
			t.Fatal(err)
		}
	}
	// The switch records a frame in sw0_in.pcap just before it runs the
	// program on it, and finishes that frame even when stopped; so once
	// the file holds all three (a 24-byte file header, 16 bytes per record
	// header), it is safe to stop it.
	want := int64(24 + 3*(16+len(frame)))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if st, err := os.Stat(filepath.Join(pcaps, "sw0_in.pcap")); err == nil && st.Size() >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the switch did not record the 3 frames within 10 s")
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("grid switch after SIGTERM: %v", err)
	}
	log := stderr.String()
	if !strings.Contains(log, `level=WARN msg="frames sent to a port without an interface were dropped" port=1 frames=3`) {
		t.Errorf("the exit log does not warn of 3 frames to port 1:\n%s", log)
	}
	if got := dataplane.ParseUnknownEgress([]byte(log)); len(got) != 1 || got[1] != 3 {
		t.Errorf("read back from the log: %v, want 3 frames to port 1", got)
	}
}

func TestSwitchCommandTakesBmv2sThriftPortAndSaysOnceThatItHasNoThriftServer(t *testing.T) {
	n := nstest.New(t)
	n.Veth("sw0", "h0")
	bin := buildGrid(t)
	cmd, _, stderr := startSwitchCommand(t, n, bin, "--device-id", "1", "--thrift-port", "9090", "-i", "0@sw0", "--no-p4",
		"--", "--grpc-server-addr", "127.0.0.1:0")
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("grid switch after SIGTERM: %v\n%s", err, stderr)
	}
	notice := `msg="--thrift-port ignored: grid switch has no Thrift server; registers are read and written over P4Runtime" thrift_port=9090`
	if got := strings.Count(stderr.String(), notice); got != 1 {
		t.Errorf("the notice appears %d times, want once:\n%s", got, stderr)
	}
}

// The command line p4lang/tutorials' Mininet launcher gives
// simple_switch_grpc, with every bmv2 logging option courses use.
func TestSwitchCommandTakesTheTutorialsCommandLineAndNotesWhatItIgnoresOnce(t *testing.T) {
	n := nstest.New(t)
	n.Veth("sw0", "h0")
	n.Veth("sw1", "h1")
	bin := buildGrid(t)
	dir := t.TempDir()
	logFile := filepath.Join(dir, "s1.log")
	cmd, _, stderr := startSwitchCommand(t, n, bin, "-i", "0@sw0", "-i", "1@sw1", "--pcap", dir,
		"--nanolog", "ipc:///tmp/bm-0-log.ipc", "--device-id", "0", port0ToPort1JSON(t), "--debugger", "--log-console",
		"--log-file", logFile, "--log-flush", "-L", "debug", "--dump-packet-data", "64", "--thrift-port", "9090",
		"--", "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255", "--priority-queues", "8", "--enable-swap")
	h0, h1 := n.Socket("h0"), n.Socket("h1")
	frame := mustHexFrame(t, "0200000000aa 0200000000bb 88b5 00010203040506070809")
	if err := h0.Send(frame); err != nil {
		t.Fatal(err)
	}
	if got := nstest.Receive(t, h1, 1, 5*time.Second); len(got) != 1 {
		t.Fatalf("h1 received %d frames, want 1; switch log:\n%s", len(got), stderr)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("grid switch after SIGTERM: %v\n%s", err, stderr)
	}
	for _, notice := range []string{"--nanolog ignored", "--debugger ignored", "--log-flush ignored", "--dump-packet-data ignored",
		"--thrift-port ignored", "--enable-swap ignored"} {
		if got := strings.Count(stderr.String(), notice); got != 1 {
			t.Errorf("%q appears %d times on the console, want once:\n%s", notice, got, stderr)
		}
	}
	written, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--nanolog ignored", `msg="frame received" port=0 interface=sw0`, "Parser"} {
		if !strings.Contains(string(written), want) {
			t.Errorf("--log-file lacks %q:\n%s", want, written)
		}
	}
	for _, pcap := range []string{"sw0_in.pcap", "sw1_out.pcap"} {
		if _, err := os.Stat(filepath.Join(dir, pcap)); err != nil {
			t.Errorf("--pcap: %v", err)
		}
	}
}

func TestSwitchCommandLogLevelInfoLeavesOutThePacketTrace(t *testing.T) {
	n := nstest.New(t)
	n.Veth("sw0", "h0")
	n.Veth("sw1", "h1")
	bin := buildGrid(t)
	cmd, _, stderr := startSwitchCommand(t, n, bin, "-i", "0@sw0", "-i", "1@sw1", "--log-console", "--log-level", "info",
		port0ToPort1JSON(t), "--", "--grpc-server-addr", "127.0.0.1:0")
	if err := n.Socket("h0").Send(mustHexFrame(t, "0200000000aa 0200000000bb 88b5 00")); err != nil {
		t.Fatal(err)
	}
	nstest.Receive(t, n.Socket("h1"), 1, 5*time.Second)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if log := stderr.String(); strings.Contains(log, "Parser") || strings.Contains(log, "frame received") {
		t.Errorf("-L info logged packets:\n%s", log)
	}
}

// With --port-netns the ports are in the switch's namespace and the
// P4Runtime server where the command runs: a controller in the root
// namespace reaches it on 127.0.0.1, as the tutorials' controllers do.
func TestSwitchCommandWithPortNetnsServesP4RuntimeWhereItRuns(t *testing.T) {
	n := nstest.New(t)
	n.Veth("sw0", "h0")
	bin := buildGrid(t)
	cmd, addr, stderr := startSwitchCommand(t, nil, bin, "--port-netns", filepath.Join(nstest.NetnsDir, n.Name()),
		"-i", "0@sw0", "--no-p4", "--", "--grpc-server-addr", "127.0.0.1:0")
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := p4v1.NewP4RuntimeClient(conn).Capabilities(ctx, &p4v1.CapabilitiesRequest{}); err != nil {
		t.Fatalf("Capabilities from the root namespace: %v\n%s", err, stderr)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("grid switch: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr.String(), `port=0@sw0`) {
		t.Errorf("no counters for port 0@sw0 (opened in the namespace):\n%s", stderr)
	}
}
