package endpoint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteReportReplacesTheFileWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w0.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	i := 0
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	r := &Report{Role: RoleWorker, Job: 1, Index: &i, IP: "10.0.0.1", Fragments: 10, Completed: 10, Start: start,
		Done: start.Add(2 * time.Second)}
	r.finish(start.Add(3*time.Second), 32)
	if err := WriteReport(path, r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !back.Verified || back.Seconds != 2 || back.FragmentsPerSecond != 5 || back.GoodputBitsPerSec != 5*32*32 {
		t.Errorf("report read back %+v", back)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestWriteReportIntoAMissingDirectoryFailsCleanly(t *testing.T) {
	err := WriteReport(filepath.Join(t.TempDir(), "no", "r.json"), &Report{})
	if err == nil || !strings.Contains(err.Error(), "report") {
		t.Errorf("error %v", err)
	}
}

func TestReportIsVerifiedOnlyWhenCompleteWithoutMismatchOrError(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name string
		r    Report
		want string
	}{
		{"complete", Report{Fragments: 3, Completed: 3}, ""},
		{"incomplete", Report{Fragments: 3, Completed: 2}, "2 of 3 fragments complete"},
		{"mismatch", Report{Fragments: 3, Completed: 3, Mismatch: &Mismatch{Fragment: 4, Value: 1, Got: 2, Want: 3}},
			"wrong sum: fragment 4 value 1: got 2, exact sum 3"},
		{"deadline", Report{Fragments: 3, Completed: 1, Error: "deadline 1s passed"}, "deadline 1s passed (1 of 3 fragments complete)"},
	} {
		r := tc.r
		r.Job, r.IP, r.Start = 2, "10.0.0.9", now
		r.finish(now.Add(time.Second), 32)
		err := r.Failure()
		switch {
		case tc.want == "" && (err != nil || !r.Verified):
			t.Errorf("%s: %v, verified %v", tc.name, err, r.Verified)
		case tc.want != "" && (err == nil || r.Verified || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, verified %v, want %q", tc.name, err, r.Verified, tc.want)
		case tc.want != "" && !strings.HasPrefix(err.Error(), "job 2 PS (10.0.0.9)"):
			t.Errorf("%s: %v does not say whose report", tc.name, err)
		}
	}
}
