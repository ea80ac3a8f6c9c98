package switchhost

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"

	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/dataplane/nstest"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/p4rt/client"
)

func TestASpecWithoutNamespaceOrWithANameTwiceIsRefusedNamingTheField(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"switches": []}`, "switches: none given"},
		{`{"switches": [{"name": "s1"}]}`, "switches[0].namespace: missing (switch s1)"},
		{`{"switches": [{"name": "s1", "namespace": "/run/netns/a"}, {"name": "s1", "namespace": "/run/netns/b"}]}`, "switches[1].name: s1 is given twice"},
		{`{"switches": [{"namespace": "/run/netns/a"}]}`, "switches[0].name: missing"},
		{`{"switches": [{"name": "s1", "namespace": 3}]}`, "cannot unmarshal number"},
	} {
		path := filepath.Join(t.TempDir(), "switches.json")
		if err := os.WriteFile(path, []byte(c.json), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: got %v, want an error naming %s and %q", c.json, err, path, c.want)
		}
	}
}

func TestASpecsLinkMustJoinPortsOfTwoOfItsSwitchesAndBeListedAtBothEnds(t *testing.T) {
	const two = `{"name": "s1", "namespace": "/a", "ports": [{"Port": 1, "Interface": "a1"}], "links": [%s]},
		{"name": "s2", "namespace": "/b", "ports": [{"Port": 3, "Interface": "b3"}], "links": [%s]}`
	for _, c := range []struct{ s1, s2, want string }{
		{`{"port": 2, "peer": "s2", "peer_port": 3}`, `{"port": 3, "peer": "s1", "peer_port": 2}`, "switches[0].links[0].port: switch s1 has no port 2"},
		{`{"port": 1, "peer": "s3", "peer_port": 3}`, ``, `switches[0].links[0].peer: no switch "s3"`},
		{`{"port": 1, "peer": "s2", "peer_port": 4}`, ``, "switches[0].links[0].peer_port: switch s2 has no port 4"},
		{`{"port": 1, "peer": "s2", "peer_port": 3}`, ``, "switches[0].links[0]: switch s2 does not list its port 3's link to port 1 of s1"},
		{`{"port": 1, "peer": "s2", "peer_port": 3}, {"port": 1, "peer": "s2", "peer_port": 3}`, `{"port": 3, "peer": "s1", "peer_port": 1}`,
			"switches[0].links[1].port: port 1 of switch s1 is linked twice"},
	} {
		json := `{"switches": [` + fmt.Sprintf(two, c.s1, c.s2) + `]}`
		path := filepath.Join(t.TempDir(), "switches.json")
		if err := os.WriteFile(path, []byte(json), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("links %s / %s: got %v, want %q", c.s1, c.s2, err, c.want)
		}
	}
}

func TestAWrittenSpecLoadsAsItWas(t *testing.T) {
	spec := &Spec{Switches: []Switch{{Name: "s1", Namespace: "/run/netns/x", DeviceID: 7, GRPCAddr: "127.0.0.1:9559",
		Ports: []dataplane.PortSpec{{Port: 1, Interface: "x-p1", Delay: 2 * time.Millisecond, Loss: 0.01}},
		Links: []Link{{Port: 1, Peer: "s2", PeerPort: 2}}},
		{Name: "s2", Namespace: "/run/netns/y", Ports: []dataplane.PortSpec{{Port: 2, Interface: "y-p2"}},
			Links: []Link{{Port: 2, Peer: "s1", PeerPort: 1}}}}}
	path := filepath.Join(t.TempDir(), "switches.json")
	if err := spec.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := got.Switches[0], spec.Switches[0]; g.Name != w.Name || g.DeviceID != w.DeviceID || g.Ports[0] != w.Ports[0] ||
		len(g.Links) != 1 || g.Links[0] != w.Links[0] {
		t.Errorf("loaded %+v, want %+v", g, w)
	}
}

// namespaceSwitch is a namespace with one veth for a switch port.
func namespaceSwitch(t *testing.T, name string, device uint64) (*nstest.Net, Switch) {
	n := nstest.New(t)
	n.Veth(name+"p0", name+"h0")
	return n, Switch{Name: name, Namespace: filepath.Join(nstest.NetnsDir, n.Name()), DeviceID: device,
		GRPCAddr: "127.0.0.1:9559", Ports: []dataplane.PortSpec{{Port: 0, Interface: name + "p0"}}}
}

// dial connects to the P4Runtime server at addr inside n as the primary
// controller of device.
func dial(ctx context.Context, n *nstest.Net, device uint64) (*client.Client, error) {
	return client.Dial(ctx, "127.0.0.1:9559", device, 1,
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return n.DialContext(ctx, addr) }))
}

func TestEverySwitchListensInItsOwnNamespaceAsItsOwnDevice(t *testing.T) {
	na, a := namespaceSwitch(t, "a", 1)
	nb, b := namespaceSwitch(t, "b", 2)
	h, err := Open(&Spec{Switches: []Switch{a, b}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
	defer dcancel()
	for _, c := range []struct {
		n      *nstest.Net
		device uint64
	}{{na, 1}, {nb, 2}} {
		cl, err := dial(dctx, c.n, c.device)
		if err != nil {
			t.Fatalf("device %d in its namespace: %v", c.device, err)
		}
		cl.Close()
	}
	// The same address in a's namespace is a's switch, not b's.
	if _, err := dial(dctx, na, 2); err == nil || !strings.Contains(err.Error(), "is not this device (1)") {
		t.Errorf("device 2 through a's namespace: got %v, want a's switch to refuse it", err)
	}
}

func TestASwitchThatCannotOpenIsNamedAndNothingStaysOpen(t *testing.T) {
	na, a := namespaceSwitch(t, "a", 1)
	_, b := namespaceSwitch(t, "b", 2)
	b.Ports[0].Interface = "nosuch"
	_, err := Open(&Spec{Switches: []Switch{a, b}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "switch b: ") || !strings.Contains(err.Error(), "nosuch") {
		t.Fatalf("got %v, want switch b's missing interface named", err)
	}
	// a's listener was closed: its address is free again.
	err = fabric.InNamespace(a.Namespace, func() error {
		l, err := net.Listen("tcp", a.GRPCAddr)
		if err == nil {
			l.Close()
		}
		return err
	})
	if err != nil {
		t.Errorf("switch a's address in %s after the failed Open: %v", na.Name(), err)
	}
}

func TestAHostOfManySwitchesWeighsAsManyProcesses(t *testing.T) {
	for _, c := range []struct{ n, nice int }{{0, 0}, {1, 0}, {2, -3}, {3, -5}, {80, -19}, {1000, -19}} {
		if got := NiceOf(c.n); got != c.nice {
			t.Errorf("NiceOf(%d) = %d, want %d", c.n, got, c.nice)
		}
	}
	// In a child process, so this test process keeps its weight.
	if os.Getenv("SWITCHHOST_WEIGHT_CHILD") == "1" {
		nice, err := TakeWeightOf(3)
		if err != nil {
			t.Fatal(err)
		}
		tasks, _ := os.ReadDir("/proc/self/task")
		for _, task := range tasks {
			tid, _ := strconv.Atoi(task.Name())
			prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
			if err != nil {
				t.Fatal(err)
			}
			// getpriority returns 20 - nice.
			if 20-prio != nice {
				t.Errorf("thread %d has nice %d, want %d", tid, 20-prio, nice)
			}
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("a negative nice needs root (CI runs the tests as root)")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestAHostOfManySwitchesWeighsAsManyProcesses$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "SWITCHHOST_WEIGHT_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
