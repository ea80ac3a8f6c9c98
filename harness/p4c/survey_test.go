package p4c

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"

	"github.com/grid-ina/grid/harness/engine"
	"github.com/grid-ina/grid/harness/internal/repo"
	"github.com/grid-ina/grid/harness/p4rt"
)

// Floors of the p4c-compile survey: a change that makes fewer programs
// agree with p4c fails.
const (
	surveyAcceptFloor     = 173
	surveyRejectFloor     = 38
	surveyOnP4cLinesFloor = 37
	// surveyP4InfoFloor counts compiled programs whose P4Info is p4c's.
	surveyP4InfoFloor = 167
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
	p4infoSame := 0
	for _, o := range outs {
		if o.Crashed {
			t.Errorf("%s: %v", o.Path, o.Err)
		}
		if o.Result == nil {
			continue
		}
		if _, err := engine.Load(o.Result.JSON); err != nil {
			t.Errorf("%s: the engine refuses our JSON: %v", o.Path, err)
		}
		// What grid switch and grid p4test load: the JSON with its P4Info
		// through the P4Runtime server, which checks one against the other.
		if err := p4rt.NewServer(p4rt.Options{DeviceID: 1}).LoadPipeline(o.Result.P4Info, o.Result.JSON); err != nil {
			t.Errorf("%s: the P4Runtime server refuses our JSON and P4Info: %v", o.Path, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "reference", strings.TrimSuffix(filepath.Base(o.Path), ".p4")+".p4info.txtpb"))
		if err != nil {
			continue
		}
		var want p4configv1.P4Info
		if err := prototext.Unmarshal(data, &want); err != nil {
			t.Fatalf("%s: reference P4Info: %v", o.Path, err)
		}
		if diff := compareP4Info(&want, o.Result.P4Info); diff != "" {
			t.Logf("%s: P4Info differs from p4c's:\n%s", o.Path, diff)
			continue
		}
		p4infoSame++
	}
	t.Logf("%d programs' P4Info is p4c's", p4infoSame)
	if p4infoSame < surveyP4InfoFloor {
		t.Errorf("%d programs' P4Info is p4c's, fewer than the %d before", p4infoSame, surveyP4InfoFloor)
	}
	f := Figures(outs)
	t.Logf("%v\n%s", f, SurveyReport(outs))
	if f.Accepted < surveyAcceptFloor || f.Rejected < surveyRejectFloor || f.PositionedOnP4cLine < surveyOnP4cLinesFloor {
		t.Errorf("fewer programs agree with p4c than before (floors: accept %d, reject %d, on p4c's line %d)",
			surveyAcceptFloor, surveyRejectFloor, surveyOnP4cLinesFloor)
	}
}
