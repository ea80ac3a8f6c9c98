package p4rt

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// bmv2Program returns the bmv2 JSON a p4_device_config carries. Controllers
// give it either as the JSON itself or, as p4lang/tutorials' P4Runtime
// library long did and PI still accepts, wrapped in a serialized
// p4.tmp.P4DeviceConfig whose device_data is the JSON. PI's p4config.proto
// has had two layouts: reassign = 1, extras = 2, device_data = 3 (current;
// the libraries set reassign), and before it extras = 1, device_data = 2.
// PI tries the wrapper first and falls back to the raw bytes when they do
// not parse as one; so does this, except that a config that starts as a
// JSON object is taken as JSON at once ('{' cannot start a protobuf
// message: it is field 15 with the deprecated group wire type). wrapped
// says which form it was.
func bmv2Program(config []byte) (program []byte, wrapped bool) {
	if trimmed := bytes.TrimLeft(config, " \t\r\n"); len(trimmed) == 0 || trimmed[0] == '{' {
		return config, false
	}
	data, err := p4DeviceConfigData(config)
	if err != nil {
		return config, false
	}
	return data, true
}

// p4DeviceConfigData decodes a serialized p4.tmp.P4DeviceConfig of either
// layout and returns its device_data: field 3 when the message has it or
// sets reassign (field 1 as a varint), else field 2. Unknown fields are
// skipped, as protobuf parsers do; a message that does not parse is an
// error.
func p4DeviceConfigData(b []byte) ([]byte, error) {
	fields := map[protowire.Number][]byte{}
	current := false // the current layout: reassign, extras, device_data
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			current = true
		case num == 3 && typ == protowire.BytesType:
			current = true
		case num <= 3 && typ != protowire.BytesType:
			return nil, fmt.Errorf("p4.tmp.P4DeviceConfig: field %d has wire type %d", num, typ)
		}
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, protowire.ParseError(m)
			}
			fields[num], b = v, b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		b = b[m:]
	}
	if current {
		return fields[3], nil
	}
	return fields[2], nil
}
