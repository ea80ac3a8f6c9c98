package lab

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/p4rt/client"
)

// gridBinary builds the grid command once per test binary: the lab runs
// its switches as `grid switch` processes.
var gridBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "grid-lab-test-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "grid")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/grid").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := gridBinary(); err == nil && bin != "" {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

func needRoot(t *testing.T) {
	t.Helper()
	if err := fabric.CanBuild(); err != nil {
		t.Skipf("a lab needs network namespaces (CI runs the tests as root): %v", err)
	}
}

// copyExercise copies a fixture folder, as a student's checkout, into a
// temporary directory (the lab writes build/, logs/ and pcaps/ there).
func copyExercise(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("cp", "-r", filepath.Join("testdata", name), dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	return dst
}

// freePorts finds n consecutive free TCP ports on 127.0.0.1.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	for attempt := 0; attempt < 50; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := l.Addr().(*net.TCPAddr).Port
		l.Close()
		ok := base+n < 65536
		for p := base; ok && p < base+n; p++ {
			ok = !listening("127.0.0.1:" + strconv.Itoa(p))
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free ports")
	return 0
}

// startLab runs an exercise fixture as a lab removed when the test ends.
func startLab(t *testing.T, dir string) (*Lab, *fabric.State, string) {
	t.Helper()
	return startLabWith(t, dir, "")
}

// startLabWith runs the exercise with program in place of its own ("" for
// its own).
func startLabWith(t *testing.T, dir, program string) (*Lab, *fabric.State, string) {
	t.Helper()
	needRoot(t)
	bin, err := gridBinary()
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Load(dir)
	if err == nil && program != "" {
		err = ex.UseProgram(program)
	}
	if err != nil {
		t.Fatal(err)
	}
	run := fmt.Sprintf("lab-t%d-%d", os.Getpid(), time.Now().UnixNano()%100000)
	var out bytes.Buffer
	l, err := Start(context.Background(), ex, Options{Name: run, GRPCBasePort: freePorts(t, len(ex.Topology.Switches)),
		Grid: bin, Out: &out})
	if err != nil {
		t.Fatalf("start: %v\n%s", err, out.String())
	}
	t.Cleanup(func() {
		if err := Stop(run); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	st, err := fabric.LoadState(run)
	if err != nil {
		t.Fatal(err)
	}
	return l, st, out.String()
}

// onHost runs a command on a host of the lab and returns its output.
func onHost(t *testing.T, st *fabric.State, host string, argv ...string) (string, error) {
	t.Helper()
	var out []byte
	err := st.Node(host).Do(func() error {
		var err error
		out, err = exec.Command(argv[0], argv[1:]...).CombinedOutput()
		return err
	})
	return string(out), err
}

var pingTime = regexp.MustCompile(`time=([0-9.]+) ms`)

// The whole of `make run` on a course-format folder: compile, network with
// the file's addresses and host commands, a switch per node on the
// tutorials' ports, one switch programmed from its runtime_json, the other
// from simple_switch_CLI commands; then h1 reaches h2 through both, across a
// 5 ms link.
func TestLabRunsACourseExerciseAndHostsPingAcrossTwoProgrammedSwitches(t *testing.T) {
	dir := copyExercise(t, "twoswitch")
	l, st, out := startLab(t, dir)
	for _, want := range []string{"s1 -> gRPC port:", "(device id 0)", "s2 -> gRPC port:", "(device id 1)", "grid lab shell h1"} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	if len(l.Switches) != 2 || l.Switches[1].DeviceID != 1 || l.Switches[1].ThriftPort != DefaultThriftBasePort+1 {
		t.Errorf("switches %+v", l.Switches)
	}
	ping, err := onHost(t, st, "h1", "ping", "-c", "2", "-W", "3", "10.0.2.2")
	if err != nil {
		t.Fatalf("h1 ping h2: %v\n%s\nlogs/s1.log:\n%s", err, ping, tail(filepath.Join(dir, "logs", "s1.log"), 30))
	}
	m := pingTime.FindStringSubmatch(ping)
	if rtt, _ := strconv.ParseFloat(m[1], 64); m == nil || rtt < 10 {
		t.Errorf("round trip %q over a 5 ms link (each way), want at least 10 ms:\n%s", m, ping)
	}
	for _, f := range []string{"build/forward.json", "build/forward.p4.p4info.txtpb", "pcaps/s1-eth1_in.pcap", "pcaps/s2-eth1_out.pcap",
		"logs/s1.log", "logs/s1-p4runtime-requests.txt", "logs/s2_cli_output.log"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v (or empty)", f, err)
		}
	}
	requests, _ := os.ReadFile(filepath.Join(dir, "logs", "s1-p4runtime-requests.txt"))
	for _, want := range []string{"/p4.v1.P4Runtime/SetForwardingPipelineConfig\n---\nMessage too long", "/p4.v1.P4Runtime/Write\n---\n", "table_entry"} {
		if !strings.Contains(string(requests), want) {
			t.Errorf("logs/s1-p4runtime-requests.txt lacks %q:\n%.2000s", want, requests)
		}
	}
	cliOut, _ := os.ReadFile(filepath.Join(dir, "logs", "s2_cli_output.log"))
	if !strings.Contains(string(cliOut), "Entry has been added with handle 1") {
		t.Errorf("cli_input output:\n%s", cliOut)
	}
	// The student's controller, in the root namespace, reads s1's counters.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, l.Switches[0].GRPCAddr, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var cli bytes.Buffer
	s, err := NewSession(ctx, c, &cli)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(ctx, strings.NewReader("counter_read MyIngress.rx_port 1\nregister_read MyIngress.last_ttl 0\n"), "test"); err != nil {
		t.Fatal(err)
	}
	// The last packet s1 saw is h2's last reply, whose TTL s2 decremented.
	if !regexp.MustCompile(`MyIngress.rx_port\[1\]=  BmCounterValue\(packets=2, bytes=196\)`).MatchString(cli.String()) ||
		!strings.Contains(cli.String(), "MyIngress.last_ttl[0]= 63") {
		t.Errorf("s1's counters after h1's pings:\n%s", cli.String())
	}
}

func TestLabWithABrokenRuntimeJSONNamesTheEntryAndLeavesNoRun(t *testing.T) {
	needRoot(t)
	dir := copyExercise(t, "twoswitch")
	path := filepath.Join(dir, "topo", "s1-runtime.json")
	data, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(data, []byte(`"port": 1`), []byte(`"port": 1, "vlan": 3`), 1), 0o644)
	bin, err := gridBinary()
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := fmt.Sprintf("lab-t%d-bad", os.Getpid())
	_, err = Start(context.Background(), ex, Options{Name: run, GRPCBasePort: freePorts(t, 2), Grid: bin})
	if err == nil || !strings.Contains(err.Error(), "s1-runtime.json: table_entries[1]: action_params: vlan is not a parameter of MyIngress.ipv4_forward") {
		t.Fatalf("got %v", err)
	}
	if _, err := fabric.LoadState(run); err == nil {
		Stop(run)
		t.Error("the failed lab's run is still there")
	}
	if _, err := os.Stat(filepath.Join(dir, "logs", "s1.log")); err != nil {
		t.Errorf("the failed lab's switch log is gone: %v", err)
	}
}

// A second start of a running lab, or one on its ports, is refused before
// anything is compiled or built.
func TestLabRefusesARunningLabsNameAndPortsBeforeBuilding(t *testing.T) {
	dir := copyExercise(t, "twoswitch")
	l, _, _ := startLab(t, dir)
	ex, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := gridBinary()
	base, _ := strconv.Atoi(l.Switches[0].GRPCAddr[strings.LastIndex(l.Switches[0].GRPCAddr, ":")+1:])
	built, _ := os.Stat(filepath.Join(dir, "build", "forward.json"))
	_, err = Start(context.Background(), ex, Options{Name: l.Run, GRPCBasePort: base + 10, Grid: bin})
	if err == nil || !strings.Contains(err.Error(), "is running: stop it first with 'grid lab stop'") {
		t.Errorf("the same name again: %v", err)
	}
	_, err = Start(context.Background(), ex, Options{Name: l.Run + "-b", GRPCBasePort: base, Grid: bin})
	if err == nil || !strings.Contains(err.Error(), "switch s1: "+l.Switches[0].GRPCAddr+" is taken") {
		t.Errorf("the same ports again: %v", err)
	}
	if _, err := fabric.LoadState(l.Run + "-b"); err == nil {
		Stop(l.Run + "-b")
		t.Error("the refused lab built a run")
	}
	if again, _ := os.Stat(filepath.Join(dir, "build", "forward.json")); !again.ModTime().Equal(built.ModTime()) {
		t.Error("a refused start compiled over the running lab's build/")
	}
}
