package frontend

import (
	"strings"
	"testing"
)

func TestLoadHonoursIncludeDirsAndDefines(t *testing.T) {
	opts := Options{IncludeDirs: []string{"testdata/inc"}, Defines: map[string]string{"V1MODEL_VERSION": "20200408"}}
	prog, err := Load("testdata/versioned.p4", opts)
	if err != nil {
		t.Fatal(err)
	}
	if prog.Lookup("eth_t") == nil {
		t.Error("declarations of the included file are missing")
	}
	// Without the define, v1model declares register<T> with one type
	// parameter, so register<bit<8>, bit<32>> is wrong.
	_, err = Load("testdata/versioned.p4", Options{IncludeDirs: []string{"testdata/inc"}})
	if err == nil || !strings.Contains(err.Error(), "register: expected 1 type arguments, got 2") {
		t.Errorf("without V1MODEL_VERSION: got %v", err)
	}
	_, err = Load("testdata/versioned.p4", Options{})
	if err == nil || !strings.Contains(err.Error(), "cannot find include file headers.p4") {
		t.Errorf("without -I: got %v", err)
	}
}

func TestLoadReportsUnreadableFile(t *testing.T) {
	_, err := Load("testdata/no-such-file.p4", Options{})
	if err == nil || !strings.Contains(err.Error(), "no-such-file.p4") {
		t.Errorf("got %v", err)
	}
}
