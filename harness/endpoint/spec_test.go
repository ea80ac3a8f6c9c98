package endpoint

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/gradproto"
)

const validSpec = `{
  "job": {
    "id": 1, "ps_node": 0, "ps_ip": "10.0.0.9", "ps_host": "ps", "values": 32,
    "members": [
      {"host": "w1", "ip": "10.0.0.1", "mac": "02:00:00:00:00:01", "node": 1, "slot": 0},
      {"host": "w2", "ip": "10.0.0.2", "mac": "02:00:00:00:00:02", "node": 1, "slot": 1},
      {"host": "w3", "ip": "10.0.0.3", "node": 0, "slot": 0}
    ]
  },
  "fragments": 100,
  "seed": 7,
  "window": {"initial": 4, "max": 32},
  "timeout": "20ms",
  "deadline": "10s"
}`

func TestValidSpecParsesIntoThePlan(t *testing.T) {
	s, err := ParseSpec([]byte(validSpec))
	if err != nil {
		t.Fatal(err)
	}
	if s.Timeout != Duration(20*time.Millisecond) || s.Deadline != Duration(10*time.Second) {
		t.Errorf("timeout %v deadline %v", time.Duration(s.Timeout), time.Duration(s.Deadline))
	}
	if got := s.linger(); got != 2*DefaultMaxTimeout {
		t.Errorf("default linger %v, want twice the default timeout cap", got)
	}
	if r := s.rto(); r.Timeout() != 20*time.Millisecond || r.Min != DefaultMinTimeout || r.Max != DefaultMaxTimeout {
		t.Errorf("retransmission timeout %v within %v..%v, want 20ms within the defaults", r.Timeout(), r.Min, r.Max)
	}
	if got := s.startWait(); got != 10*time.Second {
		t.Errorf("default start wait %v, want the deadline", got)
	}
	p := s.Job.Plan()
	if p.Job != 1 || p.PSIP.String() != "10.0.0.9" || len(p.Members) != 3 || p.Values != 32 {
		t.Fatalf("plan %+v", p)
	}
	if m := p.Members[1]; m.Node != 1 || m.Slot != 1 || m.MAC != (gradproto.MAC{2, 0, 0, 0, 0, 2}) {
		t.Errorf("member 1 %+v", m)
	}
	exp, err := p.Expected()
	if err != nil || len(exp) != 1 || exp[0][1] != 0b11 || exp[0][0] != 0b1 {
		t.Errorf("expected bitmaps %v, %v", exp, err)
	}
}

func TestJobFromPlanRoundTripsThroughJSON(t *testing.T) {
	st, err := gradproto.NewStar(3, 2, 1, 32)
	if err != nil {
		t.Fatal(err)
	}
	st.Plan.PSAliases = []uint16{7}
	st.Plan.Members[2].Node = 7
	s := Spec{Job: JobFromPlan(st.Plan, "ps", []string{"a", "b", "c"}), Fragments: 1, Window: Window{Initial: 1, Max: 1},
		Timeout: Duration(time.Millisecond), Deadline: Duration(time.Second)}
	data, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseSpec(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	p := back.Job.Plan()
	p.Gateway = st.Plan.Gateway // not the endpoints' business
	if len(p.Members) != 3 || !reflect.DeepEqual(p.Members[2], st.Plan.Members[2]) || p.PSIP != st.Plan.PSIP || p.PSNode != st.Plan.PSNode || !reflect.DeepEqual(p.PSAliases, st.Plan.PSAliases) {
		t.Errorf("plan after the round trip %+v, want %+v", p, st.Plan)
	}
	if back.Job.Members[1].Host != "b" {
		t.Errorf("host names lost: %+v", back.Job.Members)
	}
}

// TestBadSpecIsRejectedNamingTheField changes one thing of a valid spec at a
// time and expects an error naming the field (or line).
func TestBadSpecIsRejectedNamingTheField(t *testing.T) {
	for _, tc := range []struct{ old, new, want string }{
		{`"id": 1,`, `"id": 0,`, "job.id: missing"},
		{`"ps_ip": "10.0.0.9"`, `"ps_ip": "10.0.0"`, `job.ps_ip: "10.0.0" is not an IPv4 address`},
		{`"values": 32`, `"values": 16`, "job.values: 16"},
		{`"ip": "10.0.0.2"`, `"ip": "10.0.0.1"`, "job.members[1].ip: 10.0.0.1 is members[0]'s too"},
		{`"ip": "10.0.0.3"`, `"ip": "10.0.0.9"`, "job.members[2].ip: 10.0.0.9 is the PS's address"},
		{`"mac": "02:00:00:00:00:02"`, `"mac": "02:00"`, `job.members[1].mac: "02:00" is not an Ethernet address`},
		{`"node": 1, "slot": 1`, `"node": 1, "slot": 0`, "job.members[1].slot: slot 0 of node 1 is members[0]'s too"},
		{`"node": 0, "slot": 0`, `"node": 0, "slot": 64`, "job.members[2].slot: 64 outside 0..63"},
		{`"fragments": 100`, `"fragments": 0`, "fragments: 0"},
		{`"window": {"initial": 4, "max": 32}`, `"window": {"initial": 0, "max": 32}`, "window.initial: 0"},
		{`"window": {"initial": 4, "max": 32}`, `"window": {"initial": 4, "max": 2}`, "window.max: 2, below window.initial 4"},
		{`"timeout": "20ms"`, `"timeout": "20"`, `line 13: timeout: "20" is not a duration string such as "20ms"`},
		{`"deadline": "10s"`, `"deadline": 10`, `line 14: deadline: 10 is not a duration string`},
		{`"timeout": "20ms",`, ``, "timeout: missing"},
		{`"timeout": "20ms"`, `"timeout": "20us"`, "timeout: 20µs, below the 300µs"},
		{`"deadline": "10s"`, `"deadline": "-1s"`, "deadline: missing or not positive"},
		{`"timeout": "20ms"`, `"timeout": "20ms", "min_timeout": "10us"`, "min_timeout: 10µs, below the 300µs"},
		{`"timeout": "20ms"`, `"timeout": "20ms", "max_timeout": "-1s"`, "max_timeout: negative"},
		{`"deadline": "10s"`, `"deadline": "10s", "start_wait": "-1s"`, "start_wait: negative"},
		{`"ps_node": 0,`, `"ps_node": 0, "ps_aliases": [5, 0],`, "job.ps_aliases[1]: node 0 is already the PS's"},
		{`"ps_node": 0,`, `"ps_node": 0, "ps_aliases": [5, 5],`, "job.ps_aliases[1]: node 5 is already the PS's"},
		{`"seed": 7`, `"seed": -7`, "line 11: seed: -7 is not a valid uint64"},
		{`"seed": 7`, `"sead": 7`, `unknown field "sead"`},
		{`"fragments": 100,`, `"fragments": 100`, "line 11: invalid character"},
		{`"seed": 7`, `"seed": 7, "role": "switch"`, `role: "switch"`},
		{`"seed": 7`, `"seed": 7, "index": 3`, "index: 3, the job has members 0..2"},
		{`"seed": 7`, `"seed": 7, "results": "multicast"`, `results: "multicast"`},
		{`"seed": 7`, `"seed": 7, "start": "later"`, `start: "later", want "now" or "signal"`},
		{`"seed": 7`, `"seed": 7, "first_fragment": 4294967290`, "first_fragment: 4294967290 + 100 fragments exceeds"},
	} {
		if !strings.Contains(validSpec, tc.old) {
			t.Fatalf("test case %q: not in the valid spec", tc.old)
		}
		bad := strings.Replace(validSpec, tc.old, tc.new, 1)
		_, err := ParseSpec([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s -> %s: error %v, want one containing %q", tc.old, tc.new, err, tc.want)
		}
	}
}

func TestLoadSpecNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job1.json")
	if err := os.WriteFile(path, []byte(strings.Replace(validSpec, `"fragments": 100`, `"fragments": -1`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadSpec(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+": fragments: -1") {
		t.Errorf("error %v, want it to start with the file name and the field", err)
	}
}

func TestWorkerIndexComesFromTheFlagOrTheSpec(t *testing.T) {
	s, err := ParseSpec([]byte(validSpec))
	if err != nil {
		t.Fatal(err)
	}
	if i, err := s.WorkerIndex(2); i != 2 || err != nil {
		t.Errorf("--index 2: %d, %v", i, err)
	}
	if _, err := s.WorkerIndex(-1); err == nil || !strings.Contains(err.Error(), "give --index") {
		t.Errorf("no index anywhere: %v", err)
	}
	if _, err := s.WorkerIndex(3); err == nil || !strings.Contains(err.Error(), "--index 3: the job has members 0..2") {
		t.Errorf("--index 3: %v", err)
	}
	one := 1
	s.Index = &one
	if i, err := s.WorkerIndex(-1); i != 1 || err != nil {
		t.Errorf("spec index 1: %d, %v", i, err)
	}
	if _, err := s.WorkerIndex(2); err == nil || !strings.Contains(err.Error(), "the spec says 1, --index 2") {
		t.Errorf("conflicting indexes: %v", err)
	}
	s.Role = RolePS
	if _, err := s.WorkerIndex(1); err == nil || !strings.Contains(err.Error(), "role") {
		t.Errorf("PS spec used for a worker: %v", err)
	}
}

func TestGradientIsDeterministicAndSumsNeverOverflow(t *testing.T) {
	a, b := make([]int32, 32), make([]int32, 32)
	Gradient(a, 1, 0, 5, 3)
	Gradient(b, 1, 0, 5, 3)
	if a[0] != b[0] || a[31] != b[31] {
		t.Fatalf("same inputs, different gradients")
	}
	Gradient(b, 1, 1, 5, 3)
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	if same > 2 {
		t.Errorf("workers 0 and 1 share %d of 32 values", same)
	}
	for _, members := range []int{1, 2, 3, 8, 64, 5000} {
		amp := Amplitude(members)
		if int64(amp)*int64(members) > math.MaxInt32 {
			t.Fatalf("%d workers: amplitude %d overflows int32", members, amp)
		}
		sums, want := make([]int64, 32), make([]int64, 32)
		ExactSums(want, 9, 77, members)
		for m := 0; m < members; m++ {
			Gradient(a, 9, m, 77, members)
			for i, v := range a {
				if v > amp || v < -amp {
					t.Fatalf("%d workers: value %d outside ±%d", members, v, amp)
				}
				sums[i] += int64(v)
			}
		}
		for i := range sums {
			if sums[i] != want[i] {
				t.Fatalf("%d workers: value %d sums to %d, ExactSums says %d", members, i, sums[i], want[i])
			}
		}
		// A worker counted twice, or missed, changes the sum wherever its
		// value is not zero.
		for m := 0; m < min(members, 64); m++ {
			Gradient(a, 9, m, 77, members)
			zeros := 0
			for _, v := range a {
				if v == 0 {
					zeros++
				}
			}
			if zeros > 1 {
				t.Errorf("%d workers: worker %d has %d zero values of 32", members, m, zeros)
			}
		}
	}
}
