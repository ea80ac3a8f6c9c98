package include

import (
	"strings"
	"testing"
)

func TestStandardHeadersAreEmbedded(t *testing.T) {
	for _, name := range Names() {
		src, ok := Lookup(name)
		if !ok || len(src) == 0 {
			t.Fatalf("%s is not embedded", name)
		}
	}
	v1, _ := Lookup("v1model.p4")
	for _, decl := range []string{"struct standard_metadata_t", "package V1Switch<H, M>", "extern void mark_to_drop(inout standard_metadata_t", "extern register<T>"} {
		if !strings.Contains(string(v1), decl) {
			t.Errorf("v1model.p4 lacks %q", decl)
		}
	}
	if _, ok := Lookup("tna.p4"); ok {
		t.Error("Lookup must fail for headers we do not ship")
	}
}
