package client

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// LoadP4Info reads a P4Info file in the format its name says, as p4c's
// --p4runtime-files writes them: text protobuf (.txt, .txtpb, .pb.txt),
// binary protobuf (.bin, .binpb, .pb) or JSON (.json).
func LoadP4Info(path string) (*p4configv1.P4Info, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read P4Info: %w", err)
	}
	info := &p4configv1.P4Info{}
	name := strings.ToLower(filepath.Base(path))
	switch {
	case strings.HasSuffix(name, ".txt"), strings.HasSuffix(name, ".txtpb"):
		err = prototext.Unmarshal(data, info)
	case strings.HasSuffix(name, ".bin"), strings.HasSuffix(name, ".binpb"), strings.HasSuffix(name, ".pb"):
		err = proto.Unmarshal(data, info)
	case strings.HasSuffix(name, ".json"):
		err = protojson.Unmarshal(data, info)
	default:
		return nil, fmt.Errorf("%s: unknown P4Info format: name it .txtpb or .txt (text), .bin or .binpb (binary) or .json", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(info.GetTables()) == 0 && len(info.GetActions()) == 0 && info.GetPkgInfo() == nil {
		return nil, fmt.Errorf("%s: not a P4Info (no pkg_info, tables or actions)", path)
	}
	return info, nil
}
