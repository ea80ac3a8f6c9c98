// Package include embeds the standard P4 headers of the grid compiler:
// core.p4 and v1model.p4, written for this project to the same interface as
// the ones shipped with p4c, so that #include <core.p4> and
// #include <v1model.p4> work without any installation.
package include

import "embed"

//go:embed core.p4 v1model.p4
var files embed.FS

// Lookup returns the contents of the standard header name ("core.p4" or
// "v1model.p4").
func Lookup(name string) ([]byte, bool) {
	b, err := files.ReadFile(name)
	if err != nil {
		return nil, false
	}
	return b, true
}

// Names lists the embedded headers.
func Names() []string { return []string{"core.p4", "v1model.p4"} }
