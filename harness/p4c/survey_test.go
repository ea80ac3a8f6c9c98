package p4c

import (
	"testing"
	"time"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/internal/repo"
)

// Floors of the p4c-compile survey: a change that makes fewer programs
// agree with p4c fails.
const (
	surveyAcceptFloor     = 142
	surveyRejectFloor     = 38
	surveyOnP4cLinesFloor = 36
)

// Every program of p4c's compile-only corpus compiles or is rejected
// within a time limit and without a panic; every JSON we write loads into
// the engine (what `grid p4test` and `grid switch` run); and the figures of
// agreement with p4c do not fall.
func TestCompileCorpusAgreesWithP4c(t *testing.T) {
	dir := repo.SharedOrSkip(t, "p4c-compile")
	outs, err := Survey(dir, 20*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Crashed {
			t.Errorf("%s: %v", o.Path, o.Err)
		}
		if o.Result != nil {
			if _, err := engine.Load(o.Result.JSON); err != nil {
				t.Errorf("%s: the engine refuses our JSON: %v", o.Path, err)
			}
		}
	}
	f := Figures(outs)
	t.Logf("%v\n%s", f, SurveyReport(outs))
	if f.Accepted < surveyAcceptFloor || f.Rejected < surveyRejectFloor || f.PositionedOnP4cLine < surveyOnP4cLinesFloor {
		t.Errorf("fewer programs agree with p4c than before (floors: accept %d, reject %d, on p4c's line %d)",
			surveyAcceptFloor, surveyRejectFloor, surveyOnP4cLinesFloor)
	}
}
