package p4rt

import (
	"context"
	"strings"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/grid-ina/grid/harness/engine"
)

func TestCapabilitiesReportsVersion150(t *testing.T) {
	f := newFixture(t)
	resp, err := f.client.Capabilities(context.Background(), &p4v1.CapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.P4RuntimeApiVersion != "1.5.0" {
		t.Fatalf("version %q, want 1.5.0", resp.P4RuntimeApiVersion)
	}
}

func TestHighestElectionIDIsPrimaryAndBackupCannotWrite(t *testing.T) {
	f := newFixture(t)
	backup := f.primary(5) // alone, it is the primary
	primary := f.connect(10)
	if code := primary.arbitration(t); code != codes.OK {
		t.Fatalf("controller 10: status %v, want OK", code)
	}
	// the former primary learns it is now a backup
	if code := backup.arbitration(t); code != codes.AlreadyExists {
		t.Fatalf("controller 5 after 10 joined: status %v, want ALREADY_EXISTS", code)
	}
	f.setPipeline(10, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT)
	err := f.write(5, update(p4v1.Update_INSERT, tableEntity(f.route(ip(10, 0, 0, 0), 8, 1))))
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("write by the backup: %v, want PERMISSION_DENIED", err)
	}
	_, err = f.client.SetForwardingPipelineConfig(context.Background(), &p4v1.SetForwardingPipelineConfigRequest{
		DeviceId: testDevice, ElectionId: &p4v1.Uint128{Low: 5}, Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		Config: &p4v1.ForwardingPipelineConfig{P4Info: f.prog.P4Info, P4DeviceConfig: f.prog.JSON}})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("pipeline set by the backup: %v, want PERMISSION_DENIED", err)
	}
	if err := f.write(10, update(p4v1.Update_INSERT, tableEntity(f.route(ip(10, 0, 0, 0), 8, 1)))); err != nil {
		t.Fatalf("write by the primary: %v", err)
	}
	// the primary leaves: the backup is promoted
	primary.cancel()
	if code := backup.arbitration(t); code != codes.OK {
		t.Fatalf("controller 5 after the primary left: status %v, want OK", code)
	}
	if err := f.write(5, update(p4v1.Update_DELETE, tableEntity(f.route(ip(10, 0, 0, 0), 8, 1)))); err != nil {
		t.Fatalf("write by the promoted backup: %v", err)
	}
}

func TestArbitrationRefusesDuplicateElectionIDOtherRolesAndWrongDevice(t *testing.T) {
	f := newFixture(t)
	f.primary(7)
	dup := f.connect(7)
	if err := <-dup.ended; status.Code(err) != codes.InvalidArgument {
		t.Fatalf("duplicate election id: stream ended with %v, want INVALID_ARGUMENT", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tc := range []struct {
		u    *p4v1.MasterArbitrationUpdate
		code codes.Code
	}{
		{&p4v1.MasterArbitrationUpdate{DeviceId: testDevice, Role: &p4v1.Role{Name: "other"}, ElectionId: &p4v1.Uint128{Low: 9}}, codes.NotFound},
		{&p4v1.MasterArbitrationUpdate{DeviceId: testDevice + 1, ElectionId: &p4v1.Uint128{Low: 9}}, codes.NotFound},
	} {
		stream, err := f.client.StreamChannel(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{Arbitration: tc.u}}); err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); status.Code(err) != tc.code {
			t.Fatalf("arbitration %v: %v, want %v", tc.u, err, tc.code)
		}
	}
}

func TestWriteWithoutPrimaryIsPermissionDenied(t *testing.T) {
	f := newFixture(t)
	err := f.write(1, update(p4v1.Update_INSERT, tableEntity(&p4v1.TableEntry{TableId: 1})))
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("write with no controller: %v, want PERMISSION_DENIED", err)
	}
}

func TestPipelineSetThenGetByResponseType(t *testing.T) {
	f := newFixture(t)
	f.primary(1)
	get := func(rt p4v1.GetForwardingPipelineConfigRequest_ResponseType) *p4v1.ForwardingPipelineConfig {
		resp, err := f.client.GetForwardingPipelineConfig(context.Background(), &p4v1.GetForwardingPipelineConfigRequest{DeviceId: testDevice, ResponseType: rt})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Config
	}
	if cfg := get(p4v1.GetForwardingPipelineConfigRequest_ALL); cfg.P4Info != nil || cfg.P4DeviceConfig != nil {
		t.Fatal("a config before any was set")
	}
	// VERIFY checks but does not install
	f.setPipeline(1, p4v1.SetForwardingPipelineConfigRequest_VERIFY)
	if cfg := get(p4v1.GetForwardingPipelineConfigRequest_ALL); cfg.P4Info != nil {
		t.Fatal("VERIFY installed the pipeline")
	}
	f.setPipeline(1, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_SAVE)
	if cfg := get(p4v1.GetForwardingPipelineConfigRequest_ALL); cfg.P4Info != nil {
		t.Fatal("VERIFY_AND_SAVE installed the pipeline")
	}
	f.setPipeline(1, p4v1.SetForwardingPipelineConfigRequest_COMMIT)
	all := get(p4v1.GetForwardingPipelineConfigRequest_ALL)
	if !proto.Equal(all.P4Info, f.prog.P4Info) || string(all.P4DeviceConfig) != string(f.prog.JSON) || all.Cookie.GetCookie() != 42 {
		t.Fatal("ALL does not return the committed P4Info, JSON and cookie")
	}
	if cfg := get(p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY); cfg.P4Info != nil || cfg.P4DeviceConfig != nil || cfg.Cookie.GetCookie() != 42 {
		t.Fatal("COOKIE_ONLY returns more than the cookie")
	}
	if cfg := get(p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE); cfg.P4Info == nil || cfg.P4DeviceConfig != nil {
		t.Fatal("P4INFO_AND_COOKIE is wrong")
	}
	if cfg := get(p4v1.GetForwardingPipelineConfigRequest_DEVICE_CONFIG_AND_COOKIE); cfg.P4Info != nil || cfg.P4DeviceConfig == nil {
		t.Fatal("DEVICE_CONFIG_AND_COOKIE is wrong")
	}
	_, err := f.client.SetForwardingPipelineConfig(context.Background(), &p4v1.SetForwardingPipelineConfigRequest{
		DeviceId: testDevice, ElectionId: &p4v1.Uint128{Low: 1}, Action: p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT,
		Config: &p4v1.ForwardingPipelineConfig{P4Info: f.prog.P4Info, P4DeviceConfig: f.prog.JSON}})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("RECONCILE_AND_COMMIT: %v, want UNIMPLEMENTED", err)
	}
}

func TestPipelineWithP4InfoDisagreeingWithJSONIsInvalidArgument(t *testing.T) {
	f := newFixture(t)
	f.primary(1)
	for _, tc := range []struct {
		name   string
		break_ func(info *p4v1.ForwardingPipelineConfig)
		want   string
	}{
		{"unknown table", func(c *p4v1.ForwardingPipelineConfig) { c.P4Info.Tables[0].Preamble.Name = "TestIngress.nope" },
			`config.p4info.tables[0]: table "TestIngress.nope" is not in the bmv2 JSON`},
		{"field width", func(c *p4v1.ForwardingPipelineConfig) { c.P4Info.Tables[0].MatchFields[0].Bitwidth = 16 },
			`config.p4info.tables[0].match_fields[0]: field "hdr.ipv4.dstAddr" is 16 bits in the P4Info, 32 in the bmv2 JSON`},
		{"unknown action", func(c *p4v1.ForwardingPipelineConfig) { c.P4Info.Actions[0].Preamble.Name = "TestIngress.nope" },
			`config.p4info.tables[0].action_refs[0]: action "TestIngress.nope" is not an action of table "TestIngress.ipv4_lpm" in the bmv2 JSON`},
		{"register width", func(c *p4v1.ForwardingPipelineConfig) {
			c.P4Info.Registers[0].TypeSpec.GetBitstring().GetBit().Bitwidth = 8
		}, `register "TestIngress.last_length" is bit<8> in the P4Info, 32 bits in the bmv2 JSON`},
		{"broken JSON", func(c *p4v1.ForwardingPipelineConfig) { c.P4DeviceConfig = []byte("{") }, "config.p4_device_config: bmv2 JSON"},
		{"action profile the JSON lacks", func(c *p4v1.ForwardingPipelineConfig) {
			c.P4Info.ActionProfiles = append(c.P4Info.ActionProfiles, &p4configv1.ActionProfile{
				Preamble: &p4configv1.Preamble{Id: 0x11000001, Name: "TestIngress.sel"}, TableIds: []uint32{c.P4Info.Tables[1].Preamble.Id}})
			c.P4Info.Tables[1].ImplementationId = 0x11000001
		}, `config.p4info.tables[1].implementation_id: table "TestIngress.acl" uses action profile "TestIngress.sel" in the P4Info, "" in the bmv2 JSON`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &p4v1.ForwardingPipelineConfig{P4Info: proto.Clone(f.prog.P4Info).(*p4configv1.P4Info), P4DeviceConfig: f.prog.JSON}
			tc.break_(cfg)
			_, err := f.client.SetForwardingPipelineConfig(context.Background(), &p4v1.SetForwardingPipelineConfigRequest{
				DeviceId: testDevice, ElectionId: &p4v1.Uint128{Low: 1}, Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, Config: cfg})
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), tc.want) {
				t.Fatalf("got %v, want INVALID_ARGUMENT mentioning %q", err, tc.want)
			}
		})
	}
}

func TestTraceReceivesThePacketLogOfLoadedPipelines(t *testing.T) {
	var trace strings.Builder
	prog := testProgram(t)
	srv := NewServer(Options{DeviceID: testDevice, Trace: &trace})
	if err := srv.LoadPipeline(prog.P4Info, prog.JSON); err != nil {
		t.Fatal(err)
	}
	if err := srv.Process(1, ipv4Frame([4]byte{10, 0, 0, 1}), func(engine.Output) {}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(trace.String(), "ipv4_lpm") {
		t.Fatalf("trace does not mention the table the packet missed:\n%s", trace.String())
	}
}

func TestProcessWithoutPipelineDropsAndRefusesPortsOutsideTheSwitch(t *testing.T) {
	srv := NewServer(Options{DeviceID: testDevice, Ports: 4, CPUPort: testCPUPort})
	emitted := 0
	if err := srv.Process(1, ipv4Frame([4]byte{10, 0, 0, 1}), func(engine.Output) { emitted++ }); err != nil || emitted != 0 {
		t.Fatalf("without a pipeline: err %v, %d packets, want a silent drop", err, emitted)
	}
	prog := testProgram(t)
	if err := srv.LoadPipeline(prog.P4Info, prog.JSON); err != nil {
		t.Fatal(err)
	}
	if err := srv.Process(4, ipv4Frame([4]byte{10, 0, 0, 1}), func(engine.Output) {}); err == nil || !strings.Contains(err.Error(), "ingress port 4") {
		t.Fatalf("ingress port 4 of a 4-port switch: %v", err)
	}
}

func TestRequestsForAnotherDeviceOrBeforeAPipelineAreRefused(t *testing.T) {
	f := newFixture(t)
	f.primary(1)
	route := update(p4v1.Update_INSERT, tableEntity(&p4v1.TableEntry{TableId: 1}))
	if err := f.write(1, route); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("write before a pipeline: %v, want FAILED_PRECONDITION", err)
	}
	if _, err := f.tryRead(tableEntity(&p4v1.TableEntry{})); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("read before a pipeline: %v, want FAILED_PRECONDITION", err)
	}
	f.setPipeline(1, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT)
	_, err := f.client.Write(context.Background(), &p4v1.WriteRequest{DeviceId: 9, ElectionId: &p4v1.Uint128{Low: 1}, Updates: []*p4v1.Update{route}})
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "device_id: 9") {
		t.Fatalf("write to device 9: %v, want NOT_FOUND naming device_id", err)
	}
	_, err = f.client.Write(context.Background(), &p4v1.WriteRequest{DeviceId: testDevice, Role: "sdn", ElectionId: &p4v1.Uint128{Low: 1}, Updates: []*p4v1.Update{route}})
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), `role: "sdn"`) {
		t.Fatalf("write for role sdn: %v, want NOT_FOUND naming the role", err)
	}
	roleRead, err := f.client.Read(context.Background(), &p4v1.ReadRequest{DeviceId: testDevice, Role: "sdn"})
	if err == nil {
		_, err = roleRead.Recv()
	}
	if status.Code(err) != codes.NotFound {
		t.Fatalf("read for role sdn: %v, want NOT_FOUND", err)
	}
	_, err = f.client.Write(context.Background(), &p4v1.WriteRequest{DeviceId: testDevice, ElectionId: &p4v1.Uint128{Low: 1},
		Atomicity: p4v1.WriteRequest_ROLLBACK_ON_ERROR, Updates: []*p4v1.Update{route}})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("ROLLBACK_ON_ERROR: %v, want UNIMPLEMENTED", err)
	}
	stream, err := f.client.Read(context.Background(), &p4v1.ReadRequest{DeviceId: 9})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.NotFound {
		t.Fatalf("read of device 9: %v, want NOT_FOUND", err)
	}
	_, err = f.tryRead(tableEntity(&p4v1.TableEntry{TableId: 77}))
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "entities[0].table_entry.table_id: 77 is not a table") {
		t.Fatalf("read of table 77: %v, want INVALID_ARGUMENT naming the field", err)
	}
}
