package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSwitchHostWithoutASpecOrWithABadOneSaysWhat(t *testing.T) {
	out, code := exitCode(t, "switch-host")
	if code != 2 || !strings.Contains(out, "grid switch-host: want one SPEC.json") {
		t.Errorf("no spec: exit %d, output %q; want exit 2 and the usage", code, out)
	}
	spec := filepath.Join(t.TempDir(), "switches.json")
	if err := os.WriteFile(spec, []byte(`{"switches": [{"name": "s1"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = exitCode(t, "switch-host", spec)
	if code != 1 || !strings.Contains(out, spec+": switches[0].namespace: missing (switch s1)") {
		t.Errorf("spec without a namespace: exit %d, output %q; want exit 1 naming the file and field", code, out)
	}
}
