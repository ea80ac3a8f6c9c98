package lab

import (
	"bytes"
	"encoding/json"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
)

func TestCLIKeysAndValuesParseAsSimpleSwitchCLIsDo(t *testing.T) {
	field := func(kind p4configv1.MatchField_MatchType, width int32) *p4configv1.MatchField {
		return &p4configv1.MatchField{Name: "f", Bitwidth: width, Match: &p4configv1.MatchField_MatchType_{MatchType: kind}}
	}
	m, err := parseKey("10.0.2.0/24", field(p4configv1.MatchField_LPM, 32))
	if err != nil || !bytes.Equal(m.Value, []byte{10, 0, 2, 0}) || m.PrefixLen != 24 {
		t.Errorf("lpm: %+v %v", m, err)
	}
	m, err = parseKey("0x0800&&&0xff00", field(p4configv1.MatchField_TERNARY, 16))
	if err != nil || !bytes.Equal(m.Value, []byte{8, 0}) || !bytes.Equal(m.Mask, []byte{0xff, 0}) {
		t.Errorf("ternary: %+v %v", m, err)
	}
	m, err = parseKey("1000->2000", field(p4configv1.MatchField_RANGE, 16))
	if err != nil || !bytes.Equal(m.Value, []byte{0x03, 0xe8}) || !bytes.Equal(m.High, []byte{0x07, 0xd0}) {
		t.Errorf("range: %+v %v", m, err)
	}
	if v, err := parseValue("08:00:00:00:02:22", 48); err != nil || !bytes.Equal(v, []byte{8, 0, 0, 0, 2, 0x22}) {
		t.Errorf("mac: %x %v", v, err)
	}
	if _, err := parseValue("512", 9); err == nil {
		t.Error("512 fits no 9-bit port")
	}
	if _, err := parseKey("10.0.2.0", field(p4configv1.MatchField_LPM, 32)); err == nil {
		t.Error("an lpm key without a prefix length")
	}
}

func TestRuntimeJSONValuesEncodeAsTheTutorialsConvertDoes(t *testing.T) {
	for _, tc := range []struct {
		json  string
		width int32
		want  []byte
	}{
		{`"10.0.1.1"`, 32, []byte{10, 0, 1, 1}},
		{`"08:00:00:00:01:11"`, 48, []byte{8, 0, 0, 0, 1, 0x11}},
		{`1`, 9, []byte{1}},
		{`[300]`, 16, []byte{1, 44}},
		{`-1`, 8, []byte{0xff}},
	} {
		got, err := jsonValue(json.RawMessage(tc.json), tc.width)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: %x %v, want %x", tc.json, got, err, tc.want)
		}
	}
	if _, err := jsonValue(json.RawMessage(`256`), 8); err == nil {
		t.Error("256 in 8 bits")
	}
	mf := &p4configv1.MatchField{Name: "hdr.ipv4.dstAddr", Bitwidth: 32, Match: &p4configv1.MatchField_MatchType_{MatchType: p4configv1.MatchField_LPM}}
	if _, err := jsonMatch(json.RawMessage(`"10.0.1.1"`), mf); err == nil {
		t.Error("an lpm match without its prefix length")
	}
}
