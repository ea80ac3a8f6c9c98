package conformance

import (
	"testing"

	"github.com/grid-ina/grid/harness/p4c"
)

func TestOurCompilerPassesWhatPassedBefore(t *testing.T) {
	dir := corpusDir(t)
	report, err := Run(Options{Dir: dir, Mode: Ours, Compile: compile})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstBaseline(t, report, "ours_passing.txt")
}

func compile(path string) ([]byte, error) {
	res, err := p4c.Compile(path, p4c.Options{})
	if err != nil {
		return nil, err
	}
	return res.JSON, nil
}
