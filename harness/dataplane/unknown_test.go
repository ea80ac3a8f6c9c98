package dataplane_test

import (
	"bytes"
	"log"
	"log/slog"
	"maps"
	"os"
	"testing"

	"github.com/grid-ina/grid/harness/dataplane"
)

func TestUnknownEgressLinesReadBackFromTextAndDefaultLogs(t *testing.T) {
	st := dataplane.Stats{UnknownEgress: 5, UnknownEgressByPort: map[uint32]uint64{9: 2, 100: 3}}
	var text, plain bytes.Buffer
	st.LogUnknownEgress(slog.New(slog.NewTextHandler(&text, nil)))
	// Unless slog.SetDefault was called, slog.Default writes through
	// package log, without quoting the message.
	log.SetOutput(&plain)
	st.LogUnknownEgress(slog.Default())
	log.SetOutput(os.Stderr)
	if !bytes.Contains(plain.Bytes(), []byte("WARN frames sent to a port without an interface were dropped port=9")) {
		t.Fatalf("slog's default handler wrote %q", plain.Bytes())
	}
	for name, out := range map[string][]byte{"text": text.Bytes(), "plain": plain.Bytes()} {
		if got := dataplane.ParseUnknownEgress(append([]byte("other line port=1 frames=1\n"), out...)); !maps.Equal(got, st.UnknownEgressByPort) {
			t.Errorf("%s log %q read back as %v, want %v", name, out, got, st.UnknownEgressByPort)
		}
	}
	if got := dataplane.ParseUnknownEgress([]byte("nothing to see\n")); got != nil {
		t.Errorf("a log without such lines read back as %v", got)
	}
}
