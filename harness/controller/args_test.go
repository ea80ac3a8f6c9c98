package controller

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/aggregator"
	"github.com/grid-ina/grid/harness/dataplane"
	"github.com/grid-ina/grid/harness/fabric"
	"github.com/grid-ina/grid/harness/p4rt/client"
	"github.com/grid-ina/grid/harness/topo"
)

func TestSwitchCommandLineHasEveryPortAndTheLinksTheKernelCouldNotImpair(t *testing.T) {
	st := &fabric.State{
		Nodes: []fabric.Node{{Name: "s2", Kind: topo.KindSwitch, ID: 7, Interfaces: []fabric.Interface{
			{Name: "gx-s7-p1", Port: 1}, {Name: "gx-s7-p4", Port: 4}}}},
		Emulation: fabric.Emulation{Pending: []fabric.Link{
			{A: topo.Endpoint{Node: "s1", Port: 4}, B: topo.Endpoint{Node: "s2", Port: 4}, Delay: 2 * time.Millisecond, Loss: 1.5},
			{A: topo.Endpoint{Node: "s3", Port: 1}, B: topo.Endpoint{Node: "h3", Port: 0}, Delay: time.Millisecond},
		}},
	}
	got := strings.Join(switchArgs(&st.Nodes[0], portSpecs(st, &st.Nodes[0])), " ")
	want := "switch --device-id 7 --exclusive-ports -i 1@gx-s7-p1 -i 4@gx-s7-p4 --delay 4=2ms --loss 4=0.015 --no-p4 -- --grpc-server-addr 127.0.0.1:9559"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestBmv2CommandLineIsSimpleSwitchGRPCsWithThriftAndP4Runtime(t *testing.T) {
	ports := []dataplane.PortSpec{{Port: 1, Interface: "gx-s7-p1"}, {Port: 4, Interface: "gx-s7-p4", Delay: time.Millisecond}}
	got := strings.Join(Bmv2Args(7, ports, Bmv2ThriftPort, P4RuntimeAddr), " ")
	want := "--device-id 7 -i 1@gx-s7-p1 -i 4@gx-s7-p4 --no-p4 --thrift-port 9090 -- --grpc-server-addr 127.0.0.1:9559"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestAggregatorEntriesBecomeEntriesByP4InfoNames(t *testing.T) {
	e := aggregator.TableEntry{Table: aggregator.TableIPv4LPM,
		Keys:   []aggregator.Field{{Name: "hdr.ipv4.dstAddr", Value: 0x0a000109, Bits: 32, PrefixLen: 24}},
		Action: aggregator.ActionForward,
		Params: []aggregator.Field{{Name: "dmac", Value: 0x02aa00000003, Bits: 48, PrefixLen: -1}, {Name: "port", Value: 259, Bits: 9, PrefixLen: -1}}}
	want := client.TableEntry{Table: aggregator.TableIPv4LPM,
		Match:  []client.Match{{Field: "hdr.ipv4.dstAddr", Value: []byte{10, 0, 1, 9}, PrefixLen: 24}},
		Action: aggregator.ActionForward,
		Args:   [][]byte{{0x02, 0xaa, 0, 0, 0, 3}, {1, 3}}}
	if got := tableEntry(e); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}
