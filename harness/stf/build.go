package stf

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// BuildPrefix starts the comment line that names the preprocessor
// definitions a test's program must be compiled with, e.g.
//
//	# build: GRID_VALUES_64 GRID_UNITS=16
//
// p4c's STF tests have no such line (each program has one build); grid's own
// suites use it when one program is tested in several builds.
const BuildPrefix = "# build:"

var macroName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ReadBuild returns the definitions of the "# build:" lines of the STF file
// at path (NAME or NAME=VALUE; NAME alone means NAME=1), nil when it has none.
func ReadBuild(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var defines map[string]string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		rest, ok := strings.CutPrefix(sc.Text(), BuildPrefix)
		if !ok {
			continue
		}
		for _, def := range strings.Fields(rest) {
			name, value, hasValue := strings.Cut(def, "=")
			if !macroName.MatchString(name) {
				return nil, fmt.Errorf("%s:%d: build definition %q: %q is not a macro name", path, line, def, name)
			}
			if !hasValue {
				value = "1"
			}
			if defines == nil {
				defines = map[string]string{}
			}
			defines[name] = value
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return defines, nil
}
