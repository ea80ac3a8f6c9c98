package p4rt

import (
	"bytes"
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
)

// bmv2Program returns the bmv2 JSON a p4_device_config carries. Controllers
// give it either as the JSON itself or, as p4lang/tutorials' P4Runtime
// library and older PI clients do, wrapped in a serialized
// p4.tmp.P4DeviceConfig whose device_data is the JSON (PI's p4config.proto:
// extras = 1, device_data = 2). PI tries the wrapper first and falls back to
// the raw bytes when they do not parse as one; so does this, except that a
// config that starts as a JSON object is taken as JSON at once ('{' cannot
// start a protobuf message: it is field 15 with the deprecated group wire
// type). wrapped says which form it was.
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

// p4DeviceConfigData decodes a serialized p4.tmp.P4DeviceConfig and returns
// its device_data. Unknown fields are skipped, as protobuf parsers do; a
// message that does not parse is an error.
func p4DeviceConfigData(b []byte) ([]byte, error) {
	const extrasField, deviceDataField = 1, 2
	var data []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == deviceDataField && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, protowire.ParseError(m)
			}
			data, b = v, b[m:]
		case (num == deviceDataField || num == extrasField) && typ != protowire.BytesType:
			return nil, errors.New("p4.tmp.P4DeviceConfig: wrong wire type")
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return nil, protowire.ParseError(m)
			}
			b = b[m:]
		}
	}
	return data, nil
}
