package p4rt

import (
	"bytes"
	"context"
	"strings"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// extrasKV is a serialized P4DeviceConfig.Extras holding key=value.
func extrasKV() []byte {
	var kv []byte
	kv = protowire.AppendTag(kv, 1, protowire.BytesType)
	kv = protowire.AppendString(kv, "key")
	kv = protowire.AppendTag(kv, 2, protowire.BytesType)
	kv = protowire.AppendString(kv, "value")
	var extras []byte
	extras = protowire.AppendTag(extras, 1, protowire.BytesType)
	return protowire.AppendBytes(extras, kv)
}

// wrapDeviceConfig serializes a p4.tmp.P4DeviceConfig of PI's current
// layout as p4lang/tutorials' P4Runtime library builds it: reassign = true
// (field 1), extras (2) and the bmv2 JSON as device_data (3).
func wrapDeviceConfig(json []byte) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, extrasKV())
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	return protowire.AppendBytes(b, json)
}

// wrapOldDeviceConfig serializes PI's earlier layout: extras (1) and
// device_data (2).
func wrapOldDeviceConfig(json []byte) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, extrasKV())
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendBytes(b, json)
}

func TestBmv2ProgramUnwrapsP4DeviceConfigAndPassesJSONThrough(t *testing.T) {
	json := []byte(`{"header_types": []}`)
	if got, wrapped := bmv2Program(wrapDeviceConfig(json)); !bytes.Equal(got, json) || !wrapped {
		t.Errorf("wrapped: got %q (wrapped %v), want the JSON", got, wrapped)
	}
	if got, wrapped := bmv2Program(wrapOldDeviceConfig(json)); !bytes.Equal(got, json) || !wrapped {
		t.Errorf("wrapped in the earlier layout: got %q (wrapped %v), want the JSON", got, wrapped)
	}
	reassignOnly := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)
	withData := protowire.AppendBytes(protowire.AppendTag(reassignOnly, 3, protowire.BytesType), json)
	if got, _ := bmv2Program(withData); !bytes.Equal(got, json) {
		t.Errorf("reassign and device_data without extras: got %q", got)
	}
	if got, wrapped := bmv2Program(json); !bytes.Equal(got, json) || wrapped {
		t.Errorf("bare JSON: got %q (wrapped %v)", got, wrapped)
	}
	garbage := []byte{0x0a, 0x7f, 0x01} // field 1, length 127, one byte
	if got, wrapped := bmv2Program(garbage); !bytes.Equal(got, garbage) || wrapped {
		t.Errorf("unparseable bytes must pass through as they are, got %q (wrapped %v)", got, wrapped)
	}
}

func TestPipelineWrappedInP4DeviceConfigCommitsAndForwards(t *testing.T) {
	f := newFixture(t)
	f.primary(1)
	_, err := f.client.SetForwardingPipelineConfig(context.Background(), &p4v1.SetForwardingPipelineConfigRequest{
		DeviceId: testDevice, ElectionId: &p4v1.Uint128{Low: 1}, Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		Config: &p4v1.ForwardingPipelineConfig{P4Info: f.prog.P4Info, P4DeviceConfig: wrapDeviceConfig(f.prog.JSON)}})
	if err != nil {
		t.Fatalf("SetForwardingPipelineConfig with a p4.tmp.P4DeviceConfig: %v", err)
	}
	f.mustWrite(update(p4v1.Update_INSERT, tableEntity(f.route(ip(10, 0, 0, 0), 8, 3))))
	out := f.process(1, ipv4Frame([4]byte{10, 1, 2, 3}))
	if len(out) != 1 || out[0].Port != 3 {
		t.Fatalf("wrapped pipeline sent %v, want one frame to port 3", out)
	}
}

func TestP4DeviceConfigWithBrokenDeviceDataNamesTheField(t *testing.T) {
	f := newFixture(t)
	f.primary(1)
	_, err := f.client.SetForwardingPipelineConfig(context.Background(), &p4v1.SetForwardingPipelineConfigRequest{
		DeviceId: testDevice, ElectionId: &p4v1.Uint128{Low: 1}, Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		Config: &p4v1.ForwardingPipelineConfig{P4Info: f.prog.P4Info, P4DeviceConfig: wrapDeviceConfig([]byte("{"))}})
	want := "config.p4_device_config: p4.tmp.P4DeviceConfig.device_data: bmv2 JSON"
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), want) {
		t.Fatalf("got %v, want INVALID_ARGUMENT mentioning %q", err, want)
	}
}
