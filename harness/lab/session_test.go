package lab

import (
	"context"
	"math"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/grid-ina/grid/harness/p4c"
	"github.com/grid-ina/grid/harness/p4rt"
	"github.com/grid-ina/grid/harness/p4rt/client"
)

// cliSwitch is a P4Runtime server on a loopback port running
// testdata/cli/cli.p4, and a primary client of it.
func cliSwitch(t *testing.T) *client.Client {
	t.Helper()
	res, err := p4c.Compile("testdata/cli/cli.p4", p4c.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := p4rt.NewServer(p4rt.Options{DeviceID: 1, Ports: 16})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	srv.Register(g)
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, lis.Addr().String(), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetPipeline(ctx, res.P4Info, res.JSON); err != nil {
		t.Fatal(err)
	}
	return c
}

// Each command courses give simple_switch_CLI, checked by reading the
// switch back over P4Runtime.
func TestSessionCommandsChangeTheSwitchAsSimpleSwitchCLIs(t *testing.T) {
	c := cliSwitch(t)
	ctx := context.Background()
	var out strings.Builder
	s, err := NewSession(ctx, c, &out)
	if err != nil {
		t.Fatal(err)
	}
	commands := `# a commands file, as p4-learning's
table_add by_key send 0x0a => 3
table_add I.by_key send 7 => 4
table_add by_mask send 0x0a000000&&&0xff000000 => 5 10
table_set_default by_key send 9
table_modify by_key drop 0
table_delete by_key 1
mirroring_add 5 6
mc_mgrp_create 1
mc_node_create 0 1 2
mc_node_create 1 3
mc_node_associate 1 0
mc_node_associate 1 1
register_write last 2 99
register_read last 2
meter_set_rates rate 1 0.001:10 0.002:20
counter_reset hits
counter_read hits 0
`
	if err := s.Run(ctx, strings.NewReader(commands), "commands.txt"); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"Entry has been added with handle 0", "Entry has been added with handle 1",
		"Deleting entry 1 from I.by_key", "Node was created with handle 1", "I.last[2]= 99",
		"I.hits[0]=  BmCounterValue(packets=0, bytes=0)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	entries, err := c.ReadEntries(ctx, "I.by_key")
	if err != nil || len(entries) != 1 || entries[0].Action != "I.drop" {
		t.Errorf("by_key after add, add, modify and delete: %+v %v", entries, err)
	}
	masked, err := c.ReadEntries(ctx, "I.by_mask")
	if err != nil || len(masked) != 1 || masked[0].Priority != math.MaxInt32-10 {
		t.Errorf("by_mask: %+v %v (bmv2's priority 10 is P4Runtime's MaxInt32-10)", masked, err)
	}
	if cs, err := c.ReadCloneSession(ctx, 5); err != nil || !reflect.DeepEqual(cs.Replicas, []client.Replica{{Port: 6}}) {
		t.Errorf("mirroring_add 5 6: %+v %v", cs, err)
	}
	if rs, err := c.ReadMulticastGroup(ctx, 1); err != nil || !reflect.DeepEqual(rs, []client.Replica{{Port: 1}, {Port: 2}, {Port: 3, Instance: 1}}) {
		t.Errorf("group 1: %+v %v", rs, err)
	}
	if m, ok, err := c.ReadMeter(ctx, "I.rate", 1); err != nil || !ok || m != (client.MeterConfig{CIR: 1000, CBurst: 10, PIR: 2000, PBurst: 20}) {
		t.Errorf("meter_set_rates (per microsecond): %+v %v %v", m, ok, err)
	}
}

func TestSessionErrorsNameTheLineAndGoOn(t *testing.T) {
	c := cliSwitch(t)
	var out strings.Builder
	s, err := NewSession(context.Background(), c, &out)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run(context.Background(), strings.NewReader("table_add nope send 1 => 2\ntable_add by_key send 1 => 2\nfrobnicate\nset_queue_rate 100\n"), "cmds")
	for _, want := range []string{`cmds:1: table "nope" is not in the switch's program`, "cmds:3: frobnicate: not a command",
		"cmds:4: the switch has no grid.switch.Queues service"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	if !strings.Contains(out.String(), "Entry has been added with handle 0") {
		t.Errorf("the good line after a bad one did not run:\n%s", out.String())
	}
}
