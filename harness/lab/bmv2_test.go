package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/p4rt/client"
	"github.com/grid-ina/grid/harness/p4test"
	"github.com/grid-ina/grid/harness/p4test/targettest"
)

// The same folder on real bmv2, as the tutorials' VM runs it:
// simple_switch_grpc per switch in its namespace, its P4Runtime server
// reached from here through grid lab forward, the runtime_json over
// P4Runtime and the cli_input through simple_switch_CLI; h1 reaches h2.
func TestLabRunsTheSameFolderOnRealBmv2(t *testing.T) {
	targettest.Bmv2OrSkip(t)
	needRoot(t)
	bin, err := gridBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := copyExercise(t, "twoswitch")
	ex, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := fmt.Sprintf("lab-b%d", os.Getpid())
	var out strings.Builder
	l, err := Start(context.Background(), ex, Options{Name: run, GRPCBasePort: freePorts(t, 2), Backend: BackendBmv2,
		Grid: bin, Out: &out})
	if err != nil {
		t.Fatalf("start on bmv2: %v\n%s", err, out.String())
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			Stop(run)
		}
	})
	st, err := fabric.LoadState(run)
	if err != nil {
		t.Fatal(err)
	}
	if ping, err := onHost(t, st, "h1", "ping", "-c", "2", "-W", "3", "10.0.2.2"); err != nil {
		t.Fatalf("h1 ping h2 on bmv2: %v\n%s\nlogs/s2.log:\n%s", err, ping, tail(l.Switches[1].Log, 20))
	}
	cliOut, _ := os.ReadFile(dir + "/logs/s2_cli_output.log")
	if !strings.Contains(string(cliOut), "Entry has been added with handle 1") {
		t.Errorf("simple_switch_CLI's output of s2's cli_input:\n%s", cliOut)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, l.Switches[0].GRPCAddr, 0, 5)
	if err != nil {
		t.Fatalf("P4Runtime to bmv2 through the forwarder: %v", err)
	}
	var cli strings.Builder
	s, err := NewSession(ctx, c, &cli)
	if err == nil {
		err = s.Run(ctx, strings.NewReader("counter_read MyIngress.rx_port 1\n"), "test")
	}
	c.Close()
	if err != nil || !strings.Contains(cli.String(), "MyIngress.rx_port[1]=  BmCounterValue(packets=2, bytes=196)") {
		t.Errorf("s1's counter over P4Runtime: %v\n%s", err, cli.String())
	}
	if err := Stop(run); err != nil {
		t.Fatal(err)
	}
	stopped = true
	// Stop waited for them to exit; the test process reaps them a moment later.
	for _, sp := range l.Switches {
		gone := false
		for range 100 {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", sp.PID))
			if gone = err != nil || strings.Contains(string(stat), ") Z "); gone {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !gone {
			t.Errorf("simple_switch_grpc of %s (pid %d) runs on after grid lab stop", sp.Name, sp.PID)
		}
	}
}

// With the reference compiler, as the tutorials' Makefile runs it, build/
// holds p4c-bm2-ss's JSON and P4Info under the same names.
func TestLabCompilesWithTheReferenceCompiler(t *testing.T) {
	if _, err := exec.LookPath(p4test.P4cCompiler); err != nil {
		if os.Getenv(targettest.RequireBmv2Env) == "1" {
			t.Fatalf("%v; %s=1 requires it", err, targettest.RequireBmv2Env)
		}
		t.Skipf("%v (scripts/setup.sh puts the p4tools bundle on PATH)", err)
	}
	ex, err := Load(copyExercise(t, "twoswitch"))
	if err != nil {
		t.Fatal(err)
	}
	progs, err := ex.CompileWith(CompilerP4c)
	if err != nil {
		t.Fatal(err)
	}
	p := progs[ex.DefaultJSON()]
	if p == nil || findTable(p.P4Info, "MyIngress.ipv4_lpm") == nil {
		t.Fatalf("programs %v", progs)
	}
	js, err := os.ReadFile(p.JSON)
	if err != nil || !strings.Contains(string(js), `"compiler" : "https://github.com/p4lang/p4c"`) {
		t.Errorf("build/forward.json is not p4c's bmv2 JSON (%v): %.200s", err, js)
	}
	if info, err := client.LoadP4Info(filepath.Join(ex.Dir, "build", "forward.p4.p4info.txtpb")); err != nil || findTable(info, "MyIngress.ipv4_lpm") == nil {
		t.Errorf("build/forward.p4.p4info.txtpb: %v", err)
	}
	if _, err := ex.CompileWith("gcc"); err == nil || !strings.Contains(err.Error(), `compiler "gcc": want grid or p4c`) {
		t.Errorf("an unknown compiler: %v", err)
	}
}
