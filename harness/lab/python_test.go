package lab

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
)

// debianPython is Debian's python3 with python3-grpcio and python3-protobuf
// (scripts/setup.sh installs them), or "" with the reason it is missing.
func debianPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if err := exec.Command(py, "-c", "import grpc, google.protobuf.internal.builder").Run(); err == nil {
			return py
		}
	}
	t.Skip("no python3 with grpc and protobuf: scripts/setup.sh installs Debian's python3-grpcio and python3-protobuf")
	return ""
}

// pythonP4Runtime lays out the Python P4Runtime modules a course's
// controller imports: p4.v1 and p4.config.v1 as the p4runtime module ships
// them, google.rpc.status and p4.tmp.p4config (PI's P4DeviceConfig:
// reassign = 1, extras = 2, device_data = 3) registered from descriptors.
func pythonP4Runtime(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/p4lang/p4runtime").Output()
	if err != nil {
		t.Fatalf("go list p4runtime: %v", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join(strings.TrimSpace(string(out)), "py", "p4"), dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	exec.Command("chmod", "-R", "u+w", dir).Run()
	writePB2(t, dir, "google/rpc/status_pb2.py", "google.rpc.status_pb2", "from google.protobuf import any_pb2",
		protodesc.ToFileDescriptorProto(status.File_google_rpc_status_proto))
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	p4config := &descriptorpb.FileDescriptorProto{
		Name: proto.String("p4/tmp/p4config.proto"), Package: proto.String("p4.tmp"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("P4DeviceConfig"),
			NestedType: []*descriptorpb.DescriptorProto{{
				Name: proto.String("Extras"),
				Field: []*descriptorpb.FieldDescriptorProto{{Name: proto.String("kv"), JsonName: proto.String("kv"), Number: proto.Int32(1),
					Label: descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(),
					TypeName: proto.String(".p4.tmp.P4DeviceConfig.Extras.KvEntry")}},
				NestedType: []*descriptorpb.DescriptorProto{{
					Name: proto.String("KvEntry"),
					Field: []*descriptorpb.FieldDescriptorProto{
						{Name: proto.String("key"), JsonName: proto.String("key"), Number: proto.Int32(1), Label: opt, Type: str},
						{Name: proto.String("value"), JsonName: proto.String("value"), Number: proto.Int32(2), Label: opt, Type: str},
					},
					Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
				}},
			}},
			Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("reassign"), JsonName: proto.String("reassign"), Number: proto.Int32(1), Label: opt,
					Type: descriptorpb.FieldDescriptorProto_TYPE_BOOL.Enum()},
				{Name: proto.String("extras"), JsonName: proto.String("extras"), Number: proto.Int32(2), Label: opt,
					Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: proto.String(".p4.tmp.P4DeviceConfig.Extras")},
				{Name: proto.String("device_data"), JsonName: proto.String("deviceData"), Number: proto.Int32(3), Label: opt,
					Type: descriptorpb.FieldDescriptorProto_TYPE_BYTES.Enum()},
			},
		}},
	}
	writePB2(t, dir, "p4/tmp/p4config_pb2.py", "p4.tmp.p4config_pb2", "", p4config)
	for _, pkg := range []string{"google/rpc", "p4/tmp"} {
		os.WriteFile(filepath.Join(dir, pkg, "__init__.py"), nil, 0o644)
	}
	return dir
}

// writePB2 writes a Python module that registers a file descriptor and
// builds its message classes, as protoc's Python output does.
func writePB2(t *testing.T, dir, path, module, imports string, fd *descriptorpb.FileDescriptorProto) {
	t.Helper()
	b, err := proto.Marshal(fd)
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`from google.protobuf import descriptor_pool
from google.protobuf.internal import builder
%s
DESCRIPTOR = descriptor_pool.Default().AddSerializedFile(bytes.fromhex(%q))
builder.BuildMessageAndEnumDescriptors(DESCRIPTOR, globals())
builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, %q, globals())
`, imports, hex.EncodeToString(b), module)
	full := filepath.Join(dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The p4runtime exercise's shape: switches start with the program and no
// entries; the student's Python controller, in the root namespace, dials
// 127.0.0.1:50051+N, loads the program wrapped in p4.tmp.P4DeviceConfig
// over gRPC, writes the routes, and reads a counter after h1 pings h2.
func TestPythonControllerAsTheTutorialsWriteItProgramsTheLab(t *testing.T) {
	needRoot(t)
	py := debianPython(t)
	modules := pythonP4Runtime(t)
	dir := copyExercise(t, "twoswitch")
	topoPath := filepath.Join(dir, "topo", "topology.json")
	data, _ := os.ReadFile(topoPath)
	data = regexp.MustCompile(`"s1": \{[^}]*\}`).ReplaceAll(data, []byte(`"s1": {}`))
	data = regexp.MustCompile(`"s2": \{[^}]*\}`).ReplaceAll(data, []byte(`"s2": {}`))
	os.WriteFile(topoPath, data, 0o644)
	// As the p4runtime exercise's Makefile: switches start without a program.
	mk, _ := os.ReadFile(filepath.Join(dir, "Makefile"))
	os.WriteFile(filepath.Join(dir, "Makefile"), append([]byte("NO_P4 = true\n"), mk...), 0o644)
	l, st, _ := startLab(t, dir)
	if cmdline := tail(l.Switches[0].Log, 1000); !strings.Contains(strings.SplitN(cmdline, "\n", 2)[0], " --no-p4 ") {
		t.Errorf("with NO_P4 the switch starts without a program; it ran\n%s", strings.SplitN(cmdline, "\n", 2)[0])
	}

	controller, _ := filepath.Abs("testdata/controller.py")
	control := func(sw SwitchProcess, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(context.Background(), py, append([]string{controller, sw.GRPCAddr, fmt.Sprint(sw.DeviceID),
			filepath.Join(dir, "build", "forward.p4.p4info.txtpb"), filepath.Join(dir, "build", "forward.json")}, args...)...)
		cmd.Env = append(os.Environ(), "PYTHONPATH="+modules)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("controller.py %s: %v\n%s\nswitch log:\n%s", sw.Name, err, out, tail(sw.Log, 20))
		}
		return string(out)
	}
	if _, err := onHost(t, st, "h1", "ping", "-c", "1", "-W", "1", "10.0.2.2"); err == nil {
		t.Fatal("h1 reached h2 before the controller programmed the switches")
	}
	control(l.Switches[0], "10.0.1.1/32,08:00:00:00:01:11,1", "10.0.2.0/24,08:00:00:00:02:00,2")
	control(l.Switches[1], "10.0.2.2/32,08:00:00:00:02:22,1", "10.0.1.0/24,08:00:00:00:01:00,2")
	if out, err := onHost(t, st, "h1", "ping", "-c", "3", "-i", "0.2", "-W", "3", "10.0.2.2"); err != nil {
		t.Fatalf("h1 ping h2 after the controller: %v\n%s", err, out)
	}
	// s2 received the 3 requests on port 2 (and, before, the unanswered
	// first ping's request never got past s1).
	if out := control(l.Switches[1], "--counter", "MyIngress.rx_port", "2"); !strings.Contains(out, "MyIngress.rx_port[2] packets=3 bytes=294") {
		t.Errorf("counter read by the controller:\n%s", out)
	}
}
